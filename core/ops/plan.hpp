// What a wrapper decides, as data: the same planner functions run when an op runs and when
// `nbx explain` asks, so what explain prints is what the op does.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/backend.hpp"
#include "core/capabilities.hpp"
#include "core/dtype.hpp"

namespace nbx::ops {

// One decision of a plan.
struct PlanChoice {
  std::string what;        // "out_dtype", "accumulate_dtype", "row_tile", "variant", …
  std::string value;       // "float32", "256", "one-pass"
  std::string capability;  // the capability key that drove it ("bf16", …); "" for a fixed rule
  std::string source;      // that capability's provenance; "" for a fixed rule
  std::string reason;      // one sentence
};

// The device a plan is made for: its capabilities and how messages name it.
struct PlanTarget {
  const Capabilities& caps;
  std::string device_id;    // "cuda:0", or "nvidia/sm_70" for an absent architecture
  std::string device_name;  // "cuda:0 (NVIDIA H200)"
  // The present device, whose has_kernel() answers decide kernel variants (matmul.blas,
  // matmul.coopmat); nullptr for an absent architecture, whose variants are derived from
  // its device file.
  const BackendDevice* device = nullptr;
};

// Row-wise families (reduce, softmax, norm): dtypes, the lanes per row, the kernel variant.
struct RowPlan {
  DType input_dtype = DType::kFloat32;  // the input is cast to this first (requested dtype)
  DType out_dtype = DType::kFloat32;
  DType accumulate_dtype = DType::kFloat32;
  int row_tile = 1;
  int variant = 0;  // family-defined (abi::SoftmaxVariant for softmax)
  std::vector<PlanChoice> choices;
};

// Each throws InvalidArgument for a dtype the op does not define and Unsupported (naming
// the capability) for one the device lacks. `op` is the public op name ("sum", "amax", …).
RowPlan plan_reduce(std::string_view op, DType in, std::optional<DType> requested,
                    std::int64_t row_len, const PlanTarget& target);
RowPlan plan_softmax(std::string_view op, DType in, std::int64_t row_len, const PlanTarget& target);
RowPlan plan_norm(std::string_view op, DType in, std::int64_t row_len, const PlanTarget& target);

}  // namespace nbx::ops
