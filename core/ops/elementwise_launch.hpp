// The universal elementwise launch layer: every elementwise wrapper ends here.
// Internal to core/ops; not part of the public API.
#pragma once

#include <array>
#include <span>
#include <string_view>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise.hpp"

namespace nbx::ops::detail {

// An input as the kernel will read it: a tensor already in the launch's input dtype (read
// through broadcast strides, never expanded), or a host scalar.
struct LaunchInput {
  Tensor tensor;  // undefined for a scalar
  abi::ScalarValue scalar{0.0, 0};
};

struct ElementwiseLaunch {
  std::string_view op_name;  // for error messages: "add", "cast", …
  abi::ElementwiseOp op = abi::kOp_copy;
  std::vector<LaunchInput> inputs;
  DType out_dtype = DType::kFloat32;
  DType compute_dtype = DType::kFloat32;
  std::array<abi::ScalarValue, 3> attrs{};
};

// Broadcasts the tensor inputs, allocates the contiguous output on `device`, fills the
// parameter block and launches. Tensor inputs must live on `device`.
Tensor launch_elementwise(const Device& device, const ElementwiseLaunch& launch);

// A caller-given output: an in-place form's self or an out= tensor, any view of any strides.
// `form` names the public form in messages ("add_", "add_out").
struct OutputView {
  Tensor tensor;
  std::string_view form;
  bool in_place = false;  // PyTorch's in-place wording for a result that would grow self
};

// Writes the op into `out` and returns it, with PyTorch's rules (inplace_write.hpp): the
// inputs' broadcast shape must be out's, launch.out_dtype must cast to out's dtype, out must
// live on `device` and not be an expanded view, and no input may partially overlap it
// (x.add_(x) is fine). Writes straight through out's strides; only a dtype that differs from
// launch.out_dtype (one rounding per dtype, as PyTorch's cast after compute) or a strided
// input that may share out's elements goes through a temporary and a copy.
Tensor launch_elementwise(const Device& device, const ElementwiseLaunch& launch,
                          const OutputView& out);

// Writes the elementwise op into an existing tensor `out` unchecked (any strides; the caller
// has checked shape, dtype and overlaps). The copy and fill paths that write views end here.
void launch_elementwise_into(const Device& device, const ElementwiseLaunch& launch,
                             const Tensor& out);

// A scalar in both representations, converted for a kernel computing in `dtype`.
abi::ScalarValue scalar_value(const Scalar& s);

// Refuses by name (Unsupported) a dtype the device cannot hold or compute (float64 without
// fp64, …). The Capabilities form serves plans for absent architectures (`nbx explain`).
void require_dtype_support(std::string_view op, DType dtype, const Device& device);
void require_dtype_support(std::string_view op, DType dtype, const Capabilities& caps,
                           const std::string& device_id, const std::string& device_name);

}  // namespace nbx::ops::detail
