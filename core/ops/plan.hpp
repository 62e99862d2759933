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
#include "core/scalar.hpp"
#include "core/shape.hpp"

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
  // The present device, whose offers() answers decide kernel variants (matmul.blas,
  // matmul.coopmat); nullptr for an absent architecture, whose variants are derived from
  // its device file.
  const BackendDevice* device = nullptr;
};

// Row-wise families (reduce, softmax, norm, scan): dtypes, the lanes per row, the kernel variant.
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
// cumsum/cumprod: integer and bool inputs sum into int64 and return it; floats keep their
// dtype, half types accumulating in float32. cummax/cummin: the input's dtype and int64
// indices. `requested` (cumsum's dtype=) casts the input first and is the output's dtype
// (integers accumulate in int64 and wrap to it).
RowPlan plan_scan(std::string_view op, DType in, std::optional<DType> requested,
                  std::int64_t row_len, const PlanTarget& target);

// The rows a norm runs over, from the input's shape, with the op's own checks and messages
// (InvalidArgument): layer_norm/rms_norm the trailing `normalized_shape`; group_norm
// N * groups rows of (C / groups) * spatial elements; batch_norm N rows of C * spatial.
struct NormRows {
  std::int64_t rows = 0;
  std::int64_t row_len = 0;
  std::int64_t channels = 0;
  std::int64_t inner = 1;  // the product of the dims after [N, C]
  std::int64_t groups = 1;
};
NormRows norm_rows(std::string_view op, DType in, const Shape& x, const Shape& normalized_shape,
                   std::int64_t groups);

// Families that write each element on its own, with no row: casts and copies, creation.
struct ElementPlan {
  Shape out_shape;
  DType input_dtype = DType::kFloat32;  // what is read (a cast's source, triu's input)
  DType out_dtype = DType::kFloat32;
  DType compute_dtype = DType::kFloat32;  // arange/linspace: the values' arithmetic
  int variant = 0;
  std::vector<PlanChoice> choices;
};
// cast (and copy, where from == to): the elementwise copy into `to`.
ElementPlan plan_cast(std::string_view op, DType from, DType to, const Shape& shape,
                      const PlanTarget& target);
// full and fill: the elementwise copy of one host scalar; no host buffer of numel elements.
ElementPlan plan_full(std::string_view op, const Shape& shape, DType dtype,
                      const PlanTarget& target);
// The "fill" family. Each throws InvalidArgument with the op's messages (a zero step, a
// step walking away from the end, negative steps, fewer than 2 dims …) and Unsupported for
// a dtype the device lacks.
ElementPlan plan_arange(Scalar start, Scalar end, Scalar step, DType dtype,
                        const PlanTarget& target);
ElementPlan plan_linspace(Scalar start, Scalar end, std::int64_t steps, DType dtype,
                          const PlanTarget& target);
ElementPlan plan_triangle(std::string_view op, const Shape& x, DType dtype,
                          const PlanTarget& target);
// eye: an n × m identity written by the fill kernel.
ElementPlan plan_eye(std::int64_t n, std::int64_t m, DType dtype, const PlanTarget& target);
// The GLU family's split (glu.hpp): the output's shape, x's with `dim` halved. Throws
// InvalidArgument naming `op` and the shape for a 0-d x, a dim out of range or an odd size.
Shape plan_halves(std::string_view op, const Shape& x, std::int64_t dim);

}  // namespace nbx::ops
