// Normalizations with optional weight and bias, PyTorch semantics; float32 statistics for
// half types (float64 on the host). Floating inputs only. Weight, bias and running
// statistics are cast to the input's dtype. Shape mismatches throw InvalidArgument naming
// both shapes.
#pragma once

#include <optional>

#include "core/tensor.hpp"

namespace nbx::ops {

// Normalizes over the trailing dims given by `normalized_shape`.
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape,
                  const std::optional<Tensor>& weight = {}, const std::optional<Tensor>& bias = {},
                  double eps = 1e-5);
// eps defaults to the dtype's machine epsilon, as torch.nn.functional.rms_norm.
Tensor rms_norm(const Tensor& x, const Shape& normalized_shape,
                const std::optional<Tensor>& weight = {}, std::optional<double> eps = {});
// x is [N, C, *]; C must divide by num_groups.
Tensor group_norm(const Tensor& x, std::int64_t num_groups,
                  const std::optional<Tensor>& weight = {}, const std::optional<Tensor>& bias = {},
                  double eps = 1e-5);
// Inference: normalizes x [N, C, *] with running statistics of shape [C].
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var,
                  const std::optional<Tensor>& weight = {}, const std::optional<Tensor>& bias = {},
                  double eps = 1e-5);

// ---- out= forms (core/ops/inplace_out.cpp) ----
// The result written into `out` (returned), which must have x's shape, x's dtype and x's
// device; through a temporary and one copy, as the kernels write fresh contiguous rows.
Tensor layer_norm_out(const Tensor& out, const Tensor& x, const Shape& normalized_shape,
                      const std::optional<Tensor>& weight = {},
                      const std::optional<Tensor>& bias = {}, double eps = 1e-5);
Tensor rms_norm_out(const Tensor& out, const Tensor& x, const Shape& normalized_shape,
                    const std::optional<Tensor>& weight = {}, std::optional<double> eps = {});

}  // namespace nbx::ops
