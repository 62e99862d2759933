// The losses' plans (loss_plan.cpp): PyTorch's checks and result dtypes and shapes from
// dtypes and shapes alone, so the ops (loss.cpp, loss_class.cpp) and `nbx explain`
// (op_catalog_loss.cpp) decide the same. Internal to core/ops.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "core/dtype.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"

namespace nbx::ops::detail {

enum class LossReduction { kNone, kMean, kSum, kBatchMean };

// "none", "mean", "sum", and "batchmean" where `batchmean` (kl_div). Throws InvalidArgument
// with PyTorch's words ("foo is not a valid value for reduction") otherwise.
LossReduction parse_loss_reduction(std::string_view op, std::string_view reduction,
                                   bool batchmean = false);
std::string_view reduction_name(LossReduction r);

// What a loss computes in: float32 for float16/bfloat16 (rounded once at the end), the dtype
// itself otherwise.
DType loss_compute_dtype(DType t);

struct OperandSpec {
  DType dtype;
  Shape shape;
};

struct ClassLossPlan {
  bool probabilities = false;  // cross_entropy's class-probability target
  int class_dim = 0;           // 1, or 0 for a [C] input
  std::int64_t classes = 0;
  DType out_dtype = DType::kFloat32;
  DType compute_dtype = DType::kFloat32;
  Shape elements;  // the shape of reduction "none"'s result
  Shape output;    // the result's shape under the plan's reduction
};

// cross_entropy (`label_smoothing` checked) and nll_loss (class indices only).
ClassLossPlan plan_class_loss(std::string_view op, const OperandSpec& input,
                              const OperandSpec& target, const std::optional<OperandSpec>& weight,
                              std::int64_t ignore_index, LossReduction reduction,
                              double label_smoothing = 0.0);

struct PointwiseLossPlan {
  DType out_dtype = DType::kFloat32;
  DType compute_dtype = DType::kFloat32;  // integer for l1_loss of integers
  Shape elements;                         // the broadcast shape
  Shape output;
};

// mse_loss, l1_loss, smooth_l1_loss, kl_div, binary_cross_entropy_with_logits (with its
// optional weight and pos_weight).
PointwiseLossPlan plan_pointwise_loss(std::string_view op, const OperandSpec& input,
                                      const OperandSpec& target, LossReduction reduction,
                                      const std::optional<OperandSpec>& weight = {},
                                      const std::optional<OperandSpec>& pos_weight = {});

// Throws InvalidArgument naming `op` unless `t` is defined and on `device`.
void require_loss_operand(std::string_view op, const Tensor& t, const char* what,
                          const Device& device);

// `elements` reduced as `r` asks, in their dtype, then cast to `out`. batchmean divides the
// sum by `batch`.
Tensor reduce_loss(const Tensor& elements, LossReduction r, DType out, std::int64_t batch = 1);

}  // namespace nbx::ops::detail
