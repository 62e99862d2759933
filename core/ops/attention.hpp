// scaled_dot_product_attention, PyTorch's torch.nn.functional.scaled_dot_product_attention:
//   out = softmax(q @ k^T * scale + mask) @ v
// q [..., Hq, L, E], k [..., Hk, S, E], v [..., Hk, S, Ev] → out [..., Hq, L, Ev] (the batch
// dims of the three broadcast, as PyTorch's math path does); any strides, read in place (the
// [B, S, H, D] layout's transpose(1, 2) is a view, not a copy).
//
// - attn_mask: bool (true = takes part, PyTorch's convention) or additive of q's dtype,
//   broadcastable to [..., Hq, L, S]. Not together with is_causal (InvalidArgument, as PyTorch).
// - is_causal: PyTorch's convention is top-left: row i sees keys j <= i (tril of ones(L, S)).
//   `CausalAlignment::kBottomRight` is torch.nn.attention.bias.causal_lower_right: row i sees
//   j <= i + S - L, the convention of decoding with a kv cache; with L > S its first L - S rows
//   see no key.
// - A row that sees no key (fully masked, bool or -inf) gives zeros, as PyTorch's math path
//   (its _safe_softmax, PyTorch >= 2.5), not NaN.
// - scale: 1 / sqrt(E) by default. enable_gqa: Hk divides Hq, query head h reads kv head
//   h / (Hq / Hk) — through a view, no repeat_interleave copy; without it the head dims
//   broadcast like batch dims.
// - dtypes: float16, bfloat16, float32, float64, one for q, k and v; half types compute in
//   float32 and round once (PyTorch's math path upcasts them likewise); the result has q's
//   dtype.
//
// Paths (AttentionPlan::path, with the reason, in `nbx explain`): the math path — matmul,
// masked softmax and matmul over chunks of query rows, so the scores in flight stay within
// kMathScoresBudgetBytes, never below memory.attention_min_chunk_rows rows — is the reference
// every backend runs. The attention tile comes from attention.block_ceiling, floored at
// attention.min_tile; a ceiling under the floor (an overlay may ask for one) is clamped up to
// the floor and announced once per process.
//
// Errors: InvalidArgument for undefined tensors, ranks under 2, mismatched dtypes, devices or
// sizes, a mask that does not broadcast, a mask beside is_causal, a non-positive or
// non-finite scale, integer or bool inputs; Unsupported (naming the capability) for a dtype
// the device lacks; OutOfMemory when even the smallest chunk does not fit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/plan.hpp"
#include "core/tensor.hpp"

namespace nbx::ops {

enum class CausalAlignment { kTopLeft, kBottomRight };

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v,
                                    const std::optional<Tensor>& attn_mask = {},
                                    bool is_causal = false, std::optional<double> scale = {},
                                    bool enable_gqa = false,
                                    CausalAlignment alignment = CausalAlignment::kTopLeft);

// The scores of one math-path chunk may take this many bytes (float32 or float64, with the
// probabilities beside them: twice this in flight).
inline constexpr std::int64_t kMathScoresBudgetBytes = std::int64_t(256) << 20;

// The fused paths run the attention family (core/families/attention_family.cpp): flash and
// flash_mma (tiles of query rows against tiles of keys, online softmax, no L x S matrix) and
// split_kv (decode: the keys in chunks across blocks, then a combine pass), and on CUDA cuDNN's
// fused flash attention (cudnn) where the library loads. NBX_ATTENTION=math|flash|flash_mma|
// split_kv|cudnn forces one (refused by name where it cannot run); `own` chooses among the
// project's own kernels only (what HIP runs), the default among all.
enum class AttentionPath { kMath, kFlash, kFlashMma, kSplitKv, kCudnn };
// "math", "flash", "flash_mma", "split_kv", "cudnn"
const char* attention_path_name(AttentionPath p);
// The attention family's variant a fused path launches (kAttentionFlash for kMath, unused).
abi::AttentionVariant attention_variant(AttentionPath p);

// The problem as the planner sees it, after broadcasting and GQA grouping.
struct AttentionDims {
  std::int64_t batch = 1;  // the product of the output's dims before [L, Ev], heads included
  std::int64_t q_heads = 1, kv_heads = 1, value_heads = 1;  // dim -3 (1 when rank 2)
  bool gqa = false;  // enable_gqa with fewer kv heads than query heads
  std::int64_t q_len = 0, kv_len = 0, head_dim = 0, value_dim = 0;
  enum class Mask { kNone, kBool, kAdditive, kCausal } mask = Mask::kNone;
  bool causal_bottom_right = false;  // kCausal aligned bottom-right (row i sees i + S - L)
  // What the fused kernels need of the operands' layout (the op measures it; `nbx explain`
  // assumes contiguous tensors): the batch dims of q, k, v merge into one stride each, and
  // rows are contiguous and start on 16 bytes (flash_mma's asynchronous copies).
  bool flat_batch = true;
  bool rows_16_bytes = true;
  // The vendor's fused attention (cuDNN) found no engine for this problem at launch: the plan
  // passes over it (the op announces it once per process and problem).
  bool vendor_declined = false;
};

struct AttentionPlan {
  AttentionPath path = AttentionPath::kMath;
  DType out_dtype = DType::kFloat32;
  DType compute_dtype = DType::kFloat32;
  int tile = 0;                 // query rows of a block: block_ceiling floored at min_tile
  bool tile_clamped = false;    // the ceiling was under the floor
  std::int64_t chunk_rows = 0;  // the math path's query rows a step
  // The fused paths' launch: query rows and keys of a block's step, K/V tiles in flight
  // (flash_mma: 2 or 1), key chunks (split_kv).
  int block_rows = 0, block_keys = 0, key_stages = 1;
  std::int64_t splits = 1, split_len = 0;
  std::vector<PlanChoice> choices;
};

// The shape rules, without tensors (the op and `nbx explain` share them): ranks, sizes, the
// GQA grouping — query heads Hq read as [Hk, G], key and value given a size-1 G dim, the
// mask's heads split alike — and the broadcasts. Throws InvalidArgument with PyTorch's wording.
struct AttentionShapes {
  Shape q, k, v, mask;      // grouped where `grouped`; `mask` empty without a mask
  bool grouped = false;     // enable_gqa with Hk != Hq
  std::int64_t groups = 1;  // G = Hq / Hk
  Shape out_batch;          // the output's dims before [L, Ev], grouped
  Shape out;                // the output's shape as the caller sees it
  AttentionDims dims;
};
AttentionShapes attention_shapes(const Shape& q, const Shape& k, const Shape& v,
                                 const std::optional<Shape>& mask, AttentionDims::Mask kind,
                                 bool enable_gqa);
// The dtype rules: one floating dtype for q, k and v; a mask of bool or q's dtype; not a mask
// beside is_causal. Returns the mask kind. Throws InvalidArgument.
AttentionDims::Mask attention_mask_kind(DType q, DType k, DType v, std::optional<DType> mask,
                                        bool is_causal);

// Pure: from the dtype, the dims and the device's capabilities; `nbx explain` calls it too.
// Announces a tile clamp once per process (detail::announce_once).
AttentionPlan plan_attention(std::string_view op, DType dtype, const AttentionDims& dims,
                             const PlanTarget& target);

}  // namespace nbx::ops
