// searchsorted and bucketize (index_write.hpp): PyTorch's checks, the common dtype, then one
// "search" launch (core/families/search_family.cpp) reading the sequence and the values
// through their strides.
#include <mutex>
#include <string>

#include "core/errors.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"

namespace nbx::ops {
namespace {

const char* kOp = "searchsorted";

PromotionOperand operand_of(const Tensor& t) {
  return {t.dtype(), t.dim() == 0 ? OperandKind::kZeroDimTensor : OperandKind::kTensor};
}

// PyTorch promotes the two to one dtype (an int64 sequence searched for 1.5 compares as
// floats); bool has no searchsorted.
DType common_dtype(const Tensor& seq, const Tensor& values) {
  const PromotionOperand both[] = {operand_of(seq), operand_of(values)};
  const DType common = result_type(both);
  if (common == DType::kBool)
    throw InvalidArgument(kOp,
                          "searchsorted: bool sequences and values are not supported (as "
                          "PyTorch).");
  return common;
}

Tensor search(abi::SearchOp code, const Tensor& sorted_sequence, const Tensor& values,
              bool out_int32, bool right) {
  const Tensor& seq = sorted_sequence;
  const Device& device = values.device();
  const DType common = common_dtype(seq, values);
  const DType out_dtype = out_int32 ? DType::kInt32 : DType::kInt64;
  for (DType t : {common, out_dtype}) detail::require_dtype_support(kOp, t, device);
  const Tensor s = seq.to(common), v = values.to(common);
  const Tensor out = Tensor::empty(values.shape(), out_dtype, device);
  if (out.numel() == 0) return out;

  abi::SearchParams p{};
  p.op = code;
  p.variant = abi::kSearchBinary;
  p.dtype = static_cast<std::int32_t>(common);
  p.out_dtype = static_cast<std::int32_t>(out_dtype);
  p.right = right ? 1 : 0;
  p.ndim = static_cast<std::int32_t>(v.dim());
  p.numel = v.numel();
  p.seq_len = s.shape()[s.dim() - 1];
  p.seq_stride = s.strides()[s.dim() - 1];
  p.out_offset = out.offset();
  p.values_offset = v.offset();
  p.seq_offset = s.offset();
  for (int k = 0; k < p.ndim; ++k) {
    p.sizes[k] = v.shape()[k];
    p.out_strides[k] = out.strides()[k];
    p.values_strides[k] = v.strides()[k];
    // A 1-d sequence is every value's row; otherwise the leading dims pick the row.
    p.seq_strides[k] = s.dim() > 1 && k < p.ndim - 1 ? s.strides()[k] : 0;
  }
  KernelBuffer buffers[3] = {{out.storage()->memory(), true},
                             {s.storage()->memory(), false},
                             {v.storage()->memory(), false}};
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kernel_launch(p, buffers));
  return out;
}

void check_operands(const Tensor& seq, const Tensor& values, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  if (!seq.defined() || !values.defined())
    throw InvalidArgument(kOp, "searchsorted: a tensor is undefined.");
  common_dtype(seq, values);
  if (seq.device() != values.device())
    throw InvalidArgument(kOp, "searchsorted: the sequence is on " + seq.device().str() +
                                   " and the values on " + values.device().str() + ".");
  if (seq.dim() == 0)
    throw InvalidArgument(kOp,
                          "searchsorted: the boundaries tensor should have positive "
                          "dimension, but got 0 dimension.");
  bool leading_match = seq.dim() == 1;
  if (!leading_match && seq.dim() == values.dim()) {
    leading_match = true;
    for (int k = 0; k + 1 < seq.dim(); ++k)
      leading_match = leading_match && seq.shape()[k] == values.shape()[k];
  }
  if (!leading_match)
    throw InvalidArgument(kOp,
                          "searchsorted: the boundaries tensor should be 1 dimension or the "
                          "first N-1 dimensions of boundaries tensor and input value tensor "
                          "must match, but we got boundaries tensor " +
                              to_string(seq.shape()) + " and input value tensor " +
                              to_string(values.shape()) + ".");
  if (side && *side != "left" && *side != "right")
    throw InvalidArgument(
        kOp, "searchsorted: side can only be 'left' or 'right', got '" + std::string(*side) + "'.");
  if (side && right && *side == "left")
    throw InvalidArgument(kOp,
                          "searchsorted: side and right can't be set to opposites, got side "
                          "of left while right was True.");
  if (sorter && sorter->defined()) {
    if (sorter->shape() != seq.shape())
      throw InvalidArgument(kOp, "searchsorted: the boundaries " + to_string(seq.shape()) +
                                     " and the sorter " + to_string(sorter->shape()) +
                                     " must have the same size.");
    if (sorter->dtype() != DType::kInt64)
      throw InvalidArgument(kOp, "searchsorted: the sorter must be an int64 tensor, got " +
                                     std::string(dtype_name(sorter->dtype())) + ".");
    if (sorter->device() != seq.device())
      throw InvalidArgument(kOp, "searchsorted: the sorter is on another device.");
  }
}

}  // namespace

Tensor searchsorted(const Tensor& sorted_sequence, const Tensor& values, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  check_operands(sorted_sequence, values, right, side, sorter);
  const bool upper = right || (side && *side == "right");
  // The sorter's order gathered first: its bad indices are the gather family's faults.
  const Tensor seq = sorter && sorter->defined() ? ops::take_along_dim(sorted_sequence, *sorter, -1)
                                                 : sorted_sequence;
  return search(abi::kSearch_searchsorted, seq, values, out_int32, upper);
}

Tensor searchsorted(const Tensor& sorted_sequence, Scalar value, bool out_int32, bool right,
                    std::optional<std::string_view> side, const std::optional<Tensor>& sorter) {
  if (!sorted_sequence.defined())
    throw InvalidArgument(kOp, "searchsorted: a tensor is undefined.");
  if (sorted_sequence.dim() != 1)
    throw InvalidArgument(kOp, "searchsorted: a scalar value needs a 1-d boundaries tensor, got " +
                                   to_string(sorted_sequence.shape()) + ".");
  // PyTorch wraps the number as a weak scalar: an integer sequence searched for 1.5 compares
  // in the default float dtype.
  const PromotionOperand both[] = {operand_of(sorted_sequence),
                                   {value.promotion_dtype(), OperandKind::kScalar}};
  const DType t = result_type(both);
  // The number in its own dtype, then cast as PyTorch casts a wrapped scalar (an integer
  // outside an int8 sequence's range wraps).
  const Tensor v = Tensor::full({}, value, value.promotion_dtype(), sorted_sequence.device());
  return searchsorted(sorted_sequence, v.to(t), out_int32, right, side, sorter);
}

Tensor bucketize(const Tensor& x, const Tensor& boundaries, bool out_int32, bool right) {
  if (!x.defined() || !boundaries.defined())
    throw InvalidArgument("bucketize", "bucketize: a tensor is undefined.");
  if (boundaries.dim() != 1)
    throw InvalidArgument("bucketize",
                          "bucketize: the boundaries tensor must be 1 dimension, got " +
                              to_string(boundaries.shape()) + ".");
  check_operands(boundaries, x, right, {}, {});
  return search(abi::kSearch_bucketize, boundaries, x, out_int32, right);
}

}  // namespace nbx::ops
