// scaled_dot_product_attention's checks, shapes and the math path (attention.hpp). The plan is
// in attention_plan.cpp and attention_path.cpp, the fused launch in attention_fused.cpp.
#include "core/ops/attention.hpp"

#include <cmath>
#include <cstdlib>
#include <string>

#include "core/ops/attention_detail.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/softmax.hpp"
#include "core/ops/tiling.hpp"

namespace nbx::ops {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

[[noreturn]] void bad(const std::string& message) {
  throw InvalidArgument(kOp, std::string(kOp) + ": " + message);
}

Shape concat(Shape a, std::initializer_list<std::int64_t> tail) {
  for (std::int64_t t : tail) a.push_back(t);
  return a;
}

// `t` with dim -3 (size hk * g, or 1) read as two dims [hk, g] (or [1, 1]): a view.
Tensor split_heads(const Tensor& t, std::int64_t hk, std::int64_t g) {
  const int d = t.dim() - 3;
  Shape shape;
  Strides strides;
  for (int i = 0; i < t.dim(); ++i) {
    if (i == d) {
      const bool one = t.shape()[i] == 1;
      shape.push_back(one ? 1 : hk);
      strides.push_back(one ? 0 : g * t.strides()[i]);
      shape.push_back(one ? 1 : g);
      strides.push_back(one ? 0 : t.strides()[i]);
    } else {
      shape.push_back(t.shape()[i]);
      strides.push_back(t.strides()[i]);
    }
  }
  return Tensor(t.storage(), t.offset(), shape, strides, t.dtype());
}

Tensor with_rank(Tensor t, int rank) {
  while (t.dim() < rank) t = t.unsqueeze(0);
  return t;
}

// q, k, v and the mask as attention_shapes() groups them: views.
struct Operands {
  Tensor q, k, v, mask;  // mask undefined without one
  AttentionShapes shapes;
};

Operands check_and_group(const Tensor& q, const Tensor& k, const Tensor& v,
                         const std::optional<Tensor>& attn_mask, bool is_causal, bool enable_gqa) {
  for (const Tensor* t : {&q, &k, &v})
    if (!t->defined()) bad("query, key and value must be defined tensors.");
  if (attn_mask && !attn_mask->defined()) bad("attn_mask is an undefined tensor.");
  const auto kind = attention_mask_kind(
      q.dtype(), k.dtype(), v.dtype(),
      attn_mask ? std::optional<DType>(attn_mask->dtype()) : std::nullopt, is_causal);
  for (const Tensor* t : {&k, &v})
    if (!(t->device() == q.device()))
      bad("query, key and value must be on one device (query on " + q.device().str() + ", key on " +
          k.device().str() + ", value on " + v.device().str() + ").");
  if (attn_mask && !(attn_mask->device() == q.device()))
    bad("attn_mask lives on " + attn_mask->device().str() + ", query on " + q.device().str() + ".");
  Operands o;
  o.shapes = attention_shapes(q.shape(), k.shape(), v.shape(),
                              attn_mask ? std::optional<Shape>(attn_mask->shape()) : std::nullopt,
                              kind, enable_gqa);
  const AttentionShapes& s = o.shapes;
  const std::int64_t hk = s.dims.kv_heads, g = s.groups;
  o.q = s.grouped ? split_heads(q, hk, g) : q;
  o.k = s.grouped ? k.unsqueeze(k.dim() - 2) : k;
  o.v = s.grouped ? v.unsqueeze(v.dim() - 2) : v;
  if (attn_mask) {
    o.mask = with_rank(*attn_mask, s.grouped ? 3 : 2);
    if (s.grouped) o.mask = split_heads(o.mask, hk, g);
  }
  return o;
}

bool rows_of_16_bytes(const detail::FusedView& f, DType t) {
  return abi::attention_rows_of_16_bytes(f.offset, f.strides, std::int64_t(dtype_size(t)));
}

// q, k and v as the fused kernels read them (detail::fused_view); sets dims.flat_batch and
// dims.rows_16_bytes, which the plan weighs.
std::optional<detail::FusedOperands> fused_operands(const Tensor& q, const Tensor& k,
                                                    const Tensor& v, const AttentionShapes& s,
                                                    AttentionDims& dims) {
  const auto qv = detail::fused_view(q, s.out), kv = detail::fused_view(k, s.out),
             vv = detail::fused_view(v, s.out);
  const std::int64_t heads = s.out.size() >= 3 ? s.out[s.out.size() - 3] : 1;
  // The output's heads read key/value head h / (heads / kv_heads): k and v alike, dividing.
  const bool heads_ok = qv && kv && vv && (qv->heads == heads || qv->heads == 1) &&
                        kv->heads == vv->heads && kv->heads > 0 && heads % kv->heads == 0;
  dims.flat_batch = heads_ok;
  if (!heads_ok) return std::nullopt;
  dims.rows_16_bytes = rows_of_16_bytes(*qv, q.dtype()) && rows_of_16_bytes(*kv, k.dtype()) &&
                       rows_of_16_bytes(*vv, v.dtype());
  return detail::FusedOperands{*qv, *kv, *vv, heads, kv->heads};
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa,
                                    CausalAlignment alignment) {
  const Operands o = check_and_group(q, k, v, attn_mask, is_causal, enable_gqa);
  const AttentionDims& d = o.shapes.dims;
  const double sc = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(d.head_dim));
  if (scale && !(std::isfinite(*scale) && *scale > 0))
    bad("scale must be positive and finite (got " + std::to_string(*scale) + ").");
  const Device& device = q.device();
  const PlanTarget target{device.capabilities(), device.str(), device.display_name(),
                          &device.context().backend_device()};
  AttentionDims fused_dims = d;
  fused_dims.causal_bottom_right = alignment == CausalAlignment::kBottomRight;
  const std::optional<detail::FusedOperands> fused = fused_operands(q, k, v, o.shapes, fused_dims);
  AttentionPlan plan = plan_attention(kOp, q.dtype(), fused_dims, target);
  // Bottom-right causal: row i sees keys up to i + S - L.
  const std::int64_t causal_shift =
      alignment == CausalAlignment::kBottomRight ? d.kv_len - d.q_len : 0;
  if (plan.path == AttentionPath::kCudnn && !std::getenv("NBX_ATTENTION")) {
    // cuDNN decides at its first launch of a problem whether an engine runs it; where none
    // does, the project's kernels take the problem, said once per process and problem.
    try {
      return detail::run_fused_attention(q, k, v, *fused, plan, fused_dims, sc, causal_shift,
                                         o.shapes.out);
    } catch (const Unsupported& e) {
      detail::announce_once("sdpa cudnn " + device.str() + " " + to_string(q.shape()) + " " +
                                to_string(k.shape()) + " " + std::string(dtype_name(q.dtype())),
                            std::string(e.what()) + " The project's kernels run it instead.");
      fused_dims.vendor_declined = true;
      plan = plan_attention(kOp, q.dtype(), fused_dims, target);
    }
  }
  if (plan.path != AttentionPath::kMath)
    return detail::run_fused_attention(q, k, v, *fused, plan, fused_dims, sc, causal_shift,
                                       o.shapes.out);
  const DType acc = plan.compute_dtype;

  // The output, written a chunk of query rows at a time through its grouped view.
  Tensor out = Tensor::empty(o.shapes.out, q.dtype(), device);
  if (out.numel() == 0) return out;
  const Tensor out_grouped = out.view(concat(o.shapes.out_batch, {d.q_len, d.value_dim}));
  const Tensor kt = o.k.to(acc).transpose(-1, -2);
  const Tensor vv = o.v.to(acc);
  const bool mask_rows = o.mask.defined() && o.mask.shape()[o.mask.dim() - 2] != 1;
  // Causal: the ones are filled once; each chunk's excluded keys are a triu of its rows.
  const Tensor ones = d.mask == AttentionDims::Mask::kCausal
                          ? Tensor::ones({plan.chunk_rows, d.kv_len}, DType::kBool, device)
                          : Tensor();
  for (std::int64_t r0 = 0; r0 < d.q_len; r0 += plan.chunk_rows) {
    const std::int64_t rc = std::min(plan.chunk_rows, d.q_len - r0);
    Tensor scores = matmul(o.q.narrow(-2, r0, rc).to(acc), kt);  // [.., rc, S]
    std::optional<Tensor> excluded;
    double softmax_scale = sc;
    if (d.mask == AttentionDims::Mask::kCausal) {
      excluded = triu(ones.narrow(0, 0, rc), r0 + causal_shift + 1);
    } else if (o.mask.defined()) {
      const Tensor m = mask_rows ? o.mask.narrow(-2, r0, rc) : o.mask;
      if (d.mask == AttentionDims::Mask::kBool) {
        excluded = logical_not(m);
        const Shape full = broadcast_shapes(scores.shape(), m.shape(), kOp);
        if (!(full == scores.shape())) scores = scores.expand(full);
      } else {
        // PyTorch adds the mask to the scaled scores; a row left all -inf gives zeros.
        scores = add(mul(scores, sc), m.to(acc));
        excluded = eq(scores, -INFINITY);
        softmax_scale = 1.0;
      }
    }
    const Tensor probs = scaled_masked_softmax(scores, -1, softmax_scale, excluded);
    out_grouped.narrow(-2, r0, rc).copy_(matmul(probs, vv));
  }
  return out;
}

}  // namespace nbx::ops
