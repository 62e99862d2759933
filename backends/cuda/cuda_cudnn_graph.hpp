// The pieces of cuDNN's graph ("backend") API the SDPA graph is written with: a descriptor
// that owns itself, and a builder that keeps every tensor and operation it made alive as long
// as the graph (the execution plan refers to them). Only where the toolkit has cuDNN headers.
#pragma once

#include "backends/cuda/cuda_cudnn_loader.hpp"

#if NBX_HAVE_CUDNN_HEADERS
#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace nbx::gpu::cudnn {

// A failed cuDNN call: the step and cuDNN's status and last-error text.
struct Failure {
  cudnnStatus_t status;
  std::string what;
};
void check(cudnnStatus_t s, const char* step);

class Descriptor {
 public:
  explicit Descriptor(cudnnBackendDescriptorType_t type);
  ~Descriptor();
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  Descriptor(Descriptor&& other) noexcept : d_(std::exchange(other.d_, nullptr)) {}

  cudnnBackendDescriptor_t get() const { return d_; }
  template <class T>
  Descriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                  const T* values, std::int64_t count = 1) {
    check(cudnn_api().set_attribute(d_, name, type, count, values), "cudnnBackendSetAttribute");
    return *this;
  }
  Descriptor& set(cudnnBackendAttributeName_t name, const Descriptor& other) {
    const cudnnBackendDescriptor_t d = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &d);
  }
  Descriptor& finalize(const char* step);

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

using Dims = std::array<std::int64_t, 4>;

// Tensors by unique id; operations in the order added (a topological order).
class GraphBuilder {
 public:
  // A tensor of the graph: `uid` names it in the variant pack (real and by-value tensors).
  const Descriptor& tensor(std::int64_t uid, cudnnDataType_t type, const Dims& dims,
                           const Dims& strides, bool is_virtual = false, bool by_value = false);
  // An intermediate (virtual) tensor with the next free id.
  const Descriptor& intermediate(cudnnDataType_t type, const Dims& dims, const Dims& strides);

  void matmul(const Descriptor& a, const Descriptor& b, const Descriptor& c);
  // y = mode(x[, b[, t]]); `axis` for GEN_INDEX.
  void pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute, const Descriptor& x,
                 const Descriptor* b, const Descriptor* t, const Descriptor& y, int axis = -1);
  void reduction(cudnnReduceTensorOp_t mode, const Descriptor& x, const Descriptor& y);

  // The operation graph on `handle`.
  Descriptor finish(cudnnHandle_t handle);

 private:
  std::deque<Descriptor> kept_;
  std::vector<cudnnBackendDescriptor_t> ops_;
  std::int64_t next_uid_ = 1000;
};

}  // namespace nbx::gpu::cudnn
#endif
