// The graph-API helpers of cuda_cudnn_graph.hpp. Attribute names and types follow cuDNN's
// backend descriptor reference (docs.nvidia.com/deeplearning/cudnn, "Backend Descriptor
// Types"); every call goes through cudnn_api() (the library is dlopened).
#include "backends/cuda/cuda_cudnn_graph.hpp"

#if NBX_HAVE_CUDNN_HEADERS
namespace nbx::gpu::cudnn {

void check(cudnnStatus_t s, const char* step) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  std::string what = std::string(step) + ": " + cudnn_api().error_string(s);
  char last[1024] = {};
  cudnn_api().last_error(last, sizeof last);
  if (last[0]) what += " (" + std::string(last) + ")";
  throw Failure{s, what};
}

Descriptor::Descriptor(cudnnBackendDescriptorType_t type) {
  check(cudnn_api().create_descriptor(type, &d_), "cudnnBackendCreateDescriptor");
}

Descriptor::~Descriptor() {
  if (d_) (void)cudnn_api().destroy_descriptor(d_);
}

Descriptor& Descriptor::finalize(const char* step) {
  check(cudnn_api().finalize(d_), step);
  return *this;
}

const Descriptor& GraphBuilder::tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims,
                                       const Dims& strides, bool is_virtual, bool by_value) {
  Descriptor& t = kept_.emplace_back(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const std::int64_t alignment = 16;
  t.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, &type)
      .set(CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, dims.data(), 4)
      .set(CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, strides.data(), 4)
      .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, &uid)
      .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, &alignment);
  if (is_virtual) t.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, &is_virtual);
  if (by_value) t.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, &by_value);
  return t.finalize("the tensor descriptor");
}

const Descriptor& GraphBuilder::intermediate(cudnnDataType_t type, const Dims& dims,
                                             const Dims& strides) {
  return tensor(next_uid_++, type, dims, strides, true);
}

void GraphBuilder::matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c) {
  Descriptor& desc = kept_.emplace_back(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  desc.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute).finalize("matmul");
  Descriptor& op = kept_.emplace_back(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a)
      .set(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b)
      .set(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c)
      .set(CUDNN_ATTR_OPERATION_MATMUL_DESC, desc)
      .finalize("the matmul operation");
  ops_.push_back(op.get());
}

void GraphBuilder::pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute,
                             const Descriptor& x, const Descriptor* b, const Descriptor* t,
                             const Descriptor& y, int axis) {
  Descriptor& desc = kept_.emplace_back(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  desc.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode)
      .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, &compute);
  if (mode == CUDNN_POINTWISE_GEN_INDEX) {
    const std::int64_t a = axis;
    desc.set(CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, &a);
  }
  desc.finalize("a pointwise descriptor");
  Descriptor& op = kept_.emplace_back(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, desc)
      .set(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x)
      .set(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
  if (b) op.set(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b);
  if (t) op.set(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t);
  const float one = 1.0f;
  op.set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, CUDNN_TYPE_FLOAT, &one)
      .set(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, CUDNN_TYPE_FLOAT, &one)
      .finalize("a pointwise operation");
  ops_.push_back(op.get());
}

void GraphBuilder::reduction(cudnnReduceTensorOp_t mode, const Descriptor& x, const Descriptor& y) {
  Descriptor& desc = kept_.emplace_back(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  desc.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode)
      .set(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, &compute)
      .finalize("a reduction descriptor");
  Descriptor& op = kept_.emplace_back(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set(CUDNN_ATTR_OPERATION_REDUCTION_DESC, desc)
      .set(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x)
      .set(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y)
      .finalize("a reduction operation");
  ops_.push_back(op.get());
}

Descriptor GraphBuilder::finish(cudnnHandle_t handle) {
  Descriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, &handle)
      .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, ops_.data(),
           std::int64_t(ops_.size()))
      .finalize("the operation graph");
  return graph;
}

}  // namespace nbx::gpu::cudnn
#endif
