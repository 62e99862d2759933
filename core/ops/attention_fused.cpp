// scaled_dot_product_attention's fused paths (attention.hpp): q, k, v and the output read as
// [batch, heads, rows, dim] views — the caller's batch dims merged into one stride, broadcast
// dims with stride 0, grouped-query heads by the kernels' h / (Hq / Hk) — and one "attention"
// launch with the plan's variant, block sizes and (split_kv) workspace.
#include <mutex>
#include <span>
#include <string>

#include "core/kernel_abi.hpp"
#include "core/ops/attention_detail.hpp"
#include "core/ops/creation.hpp"

namespace nbx::ops::detail {
namespace {

// The merged stride of a run of dims (sizes, strides), or nothing when they do not merge.
std::optional<std::int64_t> merged_stride(const std::vector<std::int64_t>& sizes,
                                          const std::vector<std::int64_t>& strides) {
  std::optional<std::int64_t> inner;
  std::int64_t inner_size = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 1) continue;
    if (!inner) {
      inner = strides[i];
    } else if (strides[i] != *inner * inner_size) {
      return std::nullopt;
    }
    inner_size *= sizes[i];
  }
  return inner.value_or(0);
}

}  // namespace

std::optional<FusedView> fused_view(const Tensor& t, const Shape& out) {
  const int n = out.size(), r = t.dim();
  const int batch_dims = std::max(0, n - 3);
  FusedView f;
  std::vector<std::int64_t> sizes, strides;
  for (int i = 0; i < batch_dims; ++i) {
    const int j = i - (n - r);  // t's dim aligned with out's dim i (right-aligned)
    const std::int64_t size = j >= 0 ? t.shape()[j] : 1;
    if (size != out[i] && size != 1) return std::nullopt;
    sizes.push_back(out[i]);
    strides.push_back(size == 1 ? 0 : t.strides()[j]);
    f.batch *= out[i];
  }
  const auto batch_stride = merged_stride(sizes, strides);
  if (!batch_stride) return std::nullopt;
  f.offset = t.offset();
  f.strides[0] = *batch_stride;
  f.heads = r >= 3 ? t.shape()[r - 3] : 1;
  f.strides[1] = r >= 3 && f.heads != 1 ? t.strides()[r - 3] : 0;
  f.strides[2] = t.strides()[r - 2];
  f.strides[3] = t.strides()[r - 1];
  return f;
}

Tensor run_fused_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                           const FusedOperands& f, const AttentionPlan& plan,
                           const AttentionDims& d, double scale, std::int64_t causal_shift,
                           const Shape& out_shape) {
  const Device& device = q.device();
  Tensor out = Tensor::empty(out_shape, q.dtype(), device);
  abi::AttentionParams p{};
  p.op = abi::kAttention_sdpa;
  p.variant = attention_variant(plan.path);
  p.dtype = std::int32_t(q.dtype());
  p.causal = d.mask == AttentionDims::Mask::kCausal;
  p.block_rows = plan.block_rows, p.block_keys = plan.block_keys, p.key_stages = plan.key_stages;
  p.splits = plan.path == AttentionPath::kSplitKv ? int(plan.splits) : 1;
  p.split_len = plan.split_len;
  p.batch = f.q.batch;
  p.q_heads = f.heads, p.kv_heads = f.kv_heads;
  p.q_len = d.q_len, p.kv_len = d.kv_len, p.head_dim = d.head_dim, p.value_dim = d.value_dim;
  p.causal_shift = p.causal ? causal_shift : 0;
  p.scale = scale;
  const auto put = [](const FusedView& view, std::int64_t& offset, std::int64_t* strides) {
    offset = view.offset;
    for (int i = 0; i < 4; ++i) strides[i] = view.strides[i];
  };
  put(f.q, p.q_offset, p.q_strides);
  put(f.k, p.k_offset, p.k_strides);
  put(f.v, p.v_offset, p.v_strides);
  p.out_offset = 0;
  p.out_strides[3] = 1, p.out_strides[2] = d.value_dim, p.out_strides[1] = d.q_len * d.value_dim;
  p.out_strides[0] = f.heads * p.out_strides[1];
  if (out.numel() == 0) return out;
  Tensor workspace;
  if (p.variant == abi::kAttentionSplitKv)
    workspace = Tensor::empty(
        {abi::attention_workspace_words(p.splits, p.batch, p.q_heads, p.q_len, p.value_dim)},
        DType::kFloat32, device);
  const KernelBuffer buffers[5] = {
      {out.storage()->memory(), true},
      {q.storage()->memory(), false},
      {k.storage()->memory(), false},
      {v.storage()->memory(), false},
      {workspace.defined() ? workspace.storage()->memory() : DeviceMemory{}, true}};
  KernelLaunch kl;
  kl.family = KernelFamily::kAttention;
  kl.buffers = buffers;
  kl.params = std::as_bytes(std::span<const abi::AttentionParams>(&p, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return out;
}

}  // namespace nbx::ops::detail
