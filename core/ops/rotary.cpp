// Rotary position embedding (rotary.hpp): the checks on shapes and dtypes (plan_rotary,
// which `nbx explain` runs too), one "rotary" launch in place through q's and k's strides,
// and the cos/sin cache composed from existing ops.
#include "core/ops/rotary.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/explain_families.hpp"
#include "core/ops/inplace_write.hpp"
#include "core/ops/plan.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/variant_plan.hpp"
#include "core/shape.hpp"

namespace nbx::ops {
namespace {

const char* kOp = "rotary_embedding";

bool is_float(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}

[[noreturn]] void bad(const std::string& op, const std::string& why) {
  throw InvalidArgument(op, op + ": " + why + ".");
}

// The operands as explain sees them: dtypes and shapes (k absent: no shape).
struct RotaryOperands {
  DType q;
  Shape q_shape;
  std::optional<Shape> k_shape;
  DType k;
  DType positions;
  Shape positions_shape;
  DType cache;
  Shape cache_shape;
};

std::string shapes_text(const RotaryOperands& o) {
  return "q " + to_string(o.q_shape) + (o.k_shape ? ", k " + to_string(*o.k_shape) : "") +
         ", positions " + to_string(o.positions_shape) + ", cache " + to_string(o.cache_shape);
}

// Every check on dtypes and shapes, and the choices explain shows; throws what the op throws.
std::vector<PlanChoice> plan_rotary(const std::string& op, const RotaryOperands& o,
                                    std::int64_t rotary_dim, const PlanTarget& target) {
  const std::string all = " (" + shapes_text(o) + ")";
  if (o.q_shape.size() < 2) bad(op, "q must be [..., heads, head_size], got" + all);
  const Shape tokens(std::span<const std::int64_t>(o.q_shape.begin(), o.q_shape.end() - 2));
  if (o.k_shape) {
    const Shape& k = *o.k_shape;
    if (k.size() != o.q_shape.size() || !std::equal(tokens.begin(), tokens.end(), k.begin()))
      bad(op, "k must have q's token dims " + to_string(tokens) + " then [heads, head_size]" + all);
    if (o.k != o.q)
      bad(op, "q and k must have one dtype, got " + std::string(dtype_name(o.q)) + " and " +
                  std::string(dtype_name(o.k)) + all);
  }
  if (o.positions_shape != tokens)
    bad(op, "positions must have the token dims' shape " + to_string(tokens) + all);
  if (!is_float(o.q))
    bad(op, "q and k must be float16, bfloat16, float32 or float64, got " +
                std::string(dtype_name(o.q)) + all);
  if (o.positions != DType::kInt32 && o.positions != DType::kInt64)
    bad(op, "positions must be int32 or int64, got " + std::string(dtype_name(o.positions)) + all);
  if (o.cache != DType::kFloat32 && o.cache != o.q)
    bad(op, "the cache must be float32 or q's dtype (" + std::string(dtype_name(o.q)) + "), got " +
                std::string(dtype_name(o.cache)) + all);
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    bad(op, "rotary_dim " + std::to_string(rotary_dim) + " must be even and positive" + all);
  const std::int64_t q_head = o.q_shape[o.q_shape.size() - 1];
  if (rotary_dim > q_head || (o.k_shape && rotary_dim > (*o.k_shape)[o.k_shape->size() - 1]))
    bad(op, "rotary_dim " + std::to_string(rotary_dim) + " is larger than a head" + all);
  if (o.cache_shape.size() != 2 || o.cache_shape[1] != rotary_dim)
    bad(op, "the cache must be [max_position, rotary_dim " + std::to_string(rotary_dim) +
                "] (cos then sin)" + all);
  for (DType t : {o.q, o.positions, o.cache})
    detail::require_dtype_support(op, t, target.caps, target.device_id, target.device_name);
  const std::string compute = o.q == DType::kFloat64 ? "float64" : "float32";
  return {
      {"compute", compute, "", "",
       "each pair rotated in " + compute + " (the host reference in float64), rounded once to " +
           std::string(dtype_name(o.q)) + "."},
      {"bounds", "device fault channel", "", "",
       "a position outside [0, max_position) is recorded on the device and raised as "
       "DeviceFault at the next synchronize; that token is not touched, nothing out of range "
       "is read."},
  };
}

PlanTarget target_of(const Device& device) {
  return {device.capabilities(), device.str(), device.display_name(),
          &device.context().backend_device()};
}

// The element offsets a view can reach, [first, last] in bytes of its storage.
struct ByteRange {
  std::int64_t first, last;
};
ByteRange byte_range(const Tensor& t) {  // t has elements (its callers check numel first)
  const std::int64_t last = ViewExtent(t.offset(), t.shape(), t.strides()).last();
  const auto item = std::int64_t(t.itemsize());
  return {t.offset() * item, last * item + item - 1};
}

// q and k may share a storage only as disjoint head slices of one layout (a fused qkv
// tensor): the same token and dim strides, the same head stride, and heads that do not meet.
void require_disjoint(const std::string& op, const Tensor& q, const Tensor& k) {
  if (q.storage() != k.storage() || q.numel() == 0 || k.numel() == 0) return;
  const ByteRange a = byte_range(q), b = byte_range(k);
  if (a.last < b.first || b.last < a.first) return;
  const int n = q.dim();
  bool same_layout = true;
  for (int d = 0; d < n; ++d)
    if (d != n - 2 && q.strides()[d] != k.strides()[d]) same_layout = false;
  const std::int64_t hs = q.strides()[n - 2];
  if (same_layout && hs == k.strides()[n - 2] && hs > 0) {
    const std::int64_t gap = k.offset() - q.offset();
    // Head slices of one layout: k starts a whole number of heads after q's last head (or
    // before its first), and within a head the used elements fit in the head stride.
    const bool heads_apart =
        gap % hs == 0 && (gap / hs >= q.shape()[n - 2] || -gap / hs >= k.shape()[n - 2]);
    const std::int64_t head_span = (q.shape()[n - 1] - 1) * q.strides()[n - 1] + 1;
    const std::int64_t k_span = (k.shape()[n - 1] - 1) * k.strides()[n - 1] + 1;
    if (heads_apart && head_span <= hs && k_span <= hs) return;
  }
  bad(op, "q " + to_string(q.shape()) + " (strides " + to_string(q.strides()) + ") and k " +
              to_string(k.shape()) + " (strides " + to_string(k.strides()) +
              ") may share elements; pass disjoint tensors or head slices of one tensor");
}

abi::RotaryParams block_for(const Tensor& q, const std::optional<Tensor>& k,
                            const Tensor& positions, const Tensor& cache, std::int64_t rotary_dim,
                            RotaryStyle style) {
  abi::RotaryParams p{};
  p.op = abi::kRotary_rotary_embedding;
  p.variant = abi::kRotaryPairs;
  p.dtype = static_cast<std::int32_t>(q.dtype());
  p.cache_dtype = static_cast<std::int32_t>(cache.dtype());
  p.pos_dtype = static_cast<std::int32_t>(positions.dtype());
  p.style = style == RotaryStyle::kRotateHalf ? abi::kRotaryHalf : abi::kRotaryInterleaved;
  const int n = q.dim();
  p.token_ndim = n - 2;
  p.has_k = k ? 1 : 0;
  p.tokens = 1;
  for (int d = 0; d < n - 2; ++d) {
    p.token_sizes[d] = q.shape()[d];
    p.tokens *= q.shape()[d];
    p.q_token_strides[d] = q.strides()[d];
    p.pos_strides[d] = positions.strides()[d];
    if (k) p.k_token_strides[d] = k->strides()[d];
  }
  p.q_heads = q.shape()[n - 2];
  p.rotary_dim = rotary_dim;
  p.max_position = cache.shape()[0];
  p.q_offset = q.offset();
  p.q_head_stride = q.strides()[n - 2];
  p.q_dim_stride = q.strides()[n - 1];
  if (k) {
    p.k_heads = k->shape()[n - 2];
    p.k_offset = k->offset();
    p.k_head_stride = k->strides()[n - 2];
    p.k_dim_stride = k->strides()[n - 1];
  }
  p.pos_offset = positions.offset();
  p.cache_offset = cache.offset();
  p.cache_row_stride = cache.strides()[0];
  p.cache_col_stride = cache.strides()[1];
  return p;
}

}  // namespace

void rotary_embedding_(const Tensor& q, const std::optional<Tensor>& k, const Tensor& positions,
                       const Tensor& cos_sin_cache, std::int64_t rotary_dim, RotaryStyle style) {
  const std::string op = kOp;
  if (!q.defined() || !positions.defined() || !cos_sin_cache.defined() || (k && !k->defined()))
    bad(op, "a tensor is undefined");
  const Device& device = q.device();
  for (const Tensor* t : {k ? &*k : &q, &positions, &cos_sin_cache})
    if (t->device() != device)
      bad(op, "q is on " + device.str() + " and another operand on " + t->device().str());
  const RotaryOperands o{q.dtype(),
                         q.shape(),
                         k ? std::optional<Shape>(k->shape()) : std::nullopt,
                         k ? k->dtype() : q.dtype(),
                         positions.dtype(),
                         positions.shape(),
                         cos_sin_cache.dtype(),
                         cos_sin_cache.shape()};
  const PlanTarget target = target_of(device);
  plan_rotary(op, o, rotary_dim, target);
  detail::require_no_internal_overlap(op, q);
  if (k) {
    detail::require_no_internal_overlap(op, *k);
    require_disjoint(op, q, *k);
  }
  abi::RotaryParams p = block_for(q, k, positions, cos_sin_cache, rotary_dim, style);
  std::vector<PlanChoice> choices;
  const int candidates[] = {abi::kRotaryPairs};
  choose_variant(p, candidates, target, choices);
  if (p.tokens == 0 || p.q_heads + p.k_heads == 0) return;
  const KernelBuffer buffers[4] = {{q.storage()->memory(), true},
                                   {k ? k->storage()->memory() : DeviceMemory{}, k.has_value()},
                                   {positions.storage()->memory(), false},
                                   {cos_sin_cache.storage()->memory(), false}};
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kernel_launch(p, buffers));
}

RotaryResult rotary_embedding(const Tensor& q, const std::optional<Tensor>& k,
                              const Tensor& positions, const Tensor& cos_sin_cache,
                              std::int64_t rotary_dim, RotaryStyle style) {
  if (!q.defined() || (k && !k->defined())) bad(kOp, "a tensor is undefined");
  RotaryResult r{q.clone(), k ? std::optional<Tensor>(k->clone()) : std::nullopt};
  rotary_embedding_(r.q, r.k, positions, cos_sin_cache, rotary_dim, style);
  return r;
}

Tensor rotary_cos_sin_cache(std::int64_t max_position, std::int64_t rotary_dim, double base,
                            DType dtype, const Device& device) {
  const std::string op = "rotary_cos_sin_cache";
  if (max_position < 0) bad(op, "max_position " + std::to_string(max_position) + " is negative");
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    bad(op, "rotary_dim " + std::to_string(rotary_dim) + " must be even and positive");
  if (!(base > 0) || !std::isfinite(base))
    bad(op, "base " + std::to_string(base) + " must be positive and finite");
  if (!is_float(dtype))
    bad(op, "the dtype must be a float dtype, got " + std::string(dtype_name(dtype)));
  detail::require_dtype_support(op, dtype, device);
  // float64 where the device has it, so the angles t · inv_freq of long contexts keep their
  // digits; float32 (vLLM's own arithmetic) otherwise.
  const DType w = device.capabilities().fp64.value ? DType::kFloat64 : DType::kFloat32;
  const Tensor even = arange(0, rotary_dim, 2, w, device);  // 2i
  const Tensor inv_freq = reciprocal(pow(base, div(even, double(rotary_dim))));
  const Tensor t = arange(0, max_position, 1, w, device);
  const Tensor angle = mul(t.unsqueeze(1), inv_freq.unsqueeze(0));  // [max_position, dim / 2]
  return cat({cos(angle), sin(angle)}, 1).to(dtype);
}

namespace detail {

// Operands: q, k, positions, cos_sin_cache (rotary_dim: the cache's width).
void explain_rotary(const OpEntry& entry, const ExplainCall& call, OpExplanation& out) {
  const auto dtype = [&](std::size_t i) {
    return call.dtypes[std::min(i, call.dtypes.size() - 1)];
  };
  const auto shape = [&](std::size_t i) {
    return call.shapes[std::min(i, call.shapes.size() - 1)];
  };
  const RotaryOperands o{dtype(0), shape(0), shape(1), dtype(1),
                         dtype(2), shape(2), dtype(3), shape(3)};
  const std::int64_t rotary_dim = o.cache_shape.size() == 2 ? o.cache_shape[1] : 0;
  std::vector<PlanChoice> choices = plan_rotary(entry.name, o, rotary_dim, call.target);
  out.output = std::string(dtype_name(o.q)) + " " + to_string(o.q_shape) + " and " +
               to_string(*o.k_shape) + " (rotary_embedding_: q and k themselves, in place)";
  std::int64_t tokens = 1;
  for (int d = 0; d + 2 < o.q_shape.size(); ++d) tokens *= o.q_shape[d];
  out.kernel =
      "rotary (op rotary_embedding, " + std::to_string(tokens) + " tokens × " +
      std::to_string(o.q_shape[o.q_shape.size() - 2] + (*o.k_shape)[o.k_shape->size() - 2]) +
      " heads × " + std::to_string(rotary_dim / 2) + " pairs; variant pairs)";
  out.choices.push_back({"variant", variant_name(KernelFamily::kRotary, abi::kRotaryPairs), "", "",
                         "one thread per (token, head, pair): every q and k pair of a token "
                         "shares its position and cache row."});
  for (PlanChoice& c : choices) out.choices.push_back(std::move(c));
}

}  // namespace detail

}  // namespace nbx::ops
