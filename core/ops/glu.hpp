// The gated linear units (issue 13): one input split in two halves along a dim, the gate
// applied to one half and multiplied by the other, as ONE elementwise launch. The halves are
// two strided views of the input (no copy, no intermediate tensor) fed to a binary op of the
// elementwise table (sigmoid_mul, silu_mul, gelu_erf_mul, gelu_tanh_mul).
//
// Floating dtypes only (InvalidArgument naming the op and dtype otherwise, as PyTorch has no
// integer kernel). float16 and bfloat16 compute in float32 and round once at the end: the
// result is PyTorch's composition computed on float32 inputs then cast (F.glu(x.float()).to(
// x.dtype)), which may differ by one rounding from PyTorch's own half kernels (vLLM's
// silu_and_mul rounds the activation to the half type before the product). The activation
// is computed in that float32 (float64 for float64 inputs) on every backend, the host's
// reference included: where it underflows to 0 there (sigmoid(b) for b < -88), an infinite
// other half gives NaN, as PyTorch's. glu and silu are PyTorch's formulas; gelu's factor is
// 0.5 a erfc(-a / sqrt 2) (tanh form: a / (1 + e^-2u)), accurate where PyTorch's 1 + erf
// (1 + tanh) cancels for a < 0, so nbx is closer to the exact product there.
// An odd size along the split dim, or a 0-d input, is InvalidArgument naming op and shape.
// The result is a new contiguous tensor on x's device, x's dtype.
#pragma once

#include <cstdint>

#include "core/ops/elementwise.hpp"

namespace nbx::ops {

// PyTorch's torch.nn.functional.glu: a * sigmoid(b), a and b the first and second halves of
// x along `dim` (negative counts from the end).
Tensor glu(const Tensor& x, std::int64_t dim = -1);
// vLLM's silu_and_mul (SwiGLU) on a fused [..., 2d] input: silu(x[..., :d]) * x[..., d:],
// shape [..., d].
Tensor silu_and_mul(const Tensor& x);
// vLLM's gelu_and_mul (kTanh: gelu_tanh_and_mul): gelu(x[..., :d]) * x[..., d:].
Tensor gelu_and_mul(const Tensor& x, GeluApproximation approximate = GeluApproximation::kNone);

}  // namespace nbx::ops
