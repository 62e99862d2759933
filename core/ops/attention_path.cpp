// scaled_dot_product_attention's path (attention.hpp): the fused kernels of the attention
// family where one serves the problem and the device offers it, with their block sizes from
// the device file's tile and shared memory; the math path otherwise, with the reason.
#include <algorithm>
#include <cstdlib>
#include <string>

#include "core/families/kernel_family.hpp"
#include "core/ops/attention_detail.hpp"
#include "core/ops/variant_plan.hpp"

namespace nbx::ops::detail {
namespace {

// NBX_ATTENTION: unset or auto (every fused path), own (the project's kernels only: what HIP
// runs, so the H200 verifies it), or one path by name.
enum class Request { kAuto, kOwn, kMath, kFlash, kFlashMma, kSplitKv, kCudnn };

Request request_from_env(std::string_view op) {
  const char* env = std::getenv("NBX_ATTENTION");
  const std::string r = env ? env : "";
  if (r.empty() || r == "auto") return Request::kAuto;
  if (r == "own") return Request::kOwn;
  if (r == "math") return Request::kMath;
  if (r == "flash") return Request::kFlash;
  if (r == "flash_mma") return Request::kFlashMma;
  if (r == "split_kv") return Request::kSplitKv;
  if (r == "cudnn") return Request::kCudnn;
  throw InvalidArgument(std::string(op), "NBX_ATTENTION=" + r +
                                             " is not one of auto, own, math, flash, flash_mma, "
                                             "split_kv, cudnn.");
}

std::int64_t padded_dim(std::int64_t d) {  // flash_mma's shared-memory row: 64, 96, 128, 256
  return d <= 64 ? 64 : d <= 96 ? 96 : d <= 128 ? 128 : 256;
}

// The block sizes of `path` within `budget` bytes of shared memory; false when none fits.
bool size_blocks(AttentionPath path, const AttentionDims& d, std::int64_t budget, int tile,
                 int floor, AttentionPlan& plan) {
  if (path == AttentionPath::kFlashMma) {
    // [rows + stages x 2 x 64 keys] x (padded dim + 8) half values: Q and stages K and V tiles;
    // the 8 elements of padding keep ldmatrix's eight rows on distinct banks. Two stages (the
    // next tile's copies under this one's math) before 128 rows: 64 rows in two stages beat
    // 128 in one where both fit (sm_86/89's 99 KB at head dim 128).
    const std::int64_t row = (padded_dim(d.head_dim) + 8) * 2;
    for (int stages : {2, 1})
      for (int rows : {128, 64}) {
        if (rows > std::max(tile, 64) || (rows == 128 && d.head_dim > 128)) continue;
        if ((rows + stages * 2 * 64) * row <= budget) {
          plan.block_rows = rows, plan.block_keys = 64, plan.key_stages = stages;
          return true;
        }
      }
    return false;
  }
  // flash and split_kv: q rows in float32, a K tile with a padded row and a V tile.
  const auto fits = [&](std::int64_t rows, std::int64_t keys) {
    return 4 * (rows * d.head_dim + keys * (d.head_dim + 1) + keys * d.value_dim) <= budget;
  };
  if (path == AttentionPath::kSplitKv) {  // the rows of one kv head's query heads
    const int rows = int(d.q_len * (d.q_heads / std::max<std::int64_t>(1, d.kv_heads)));
    for (int keys : {32, 16})
      if (fits(rows, keys)) {
        plan.block_rows = rows, plan.block_keys = keys;
        return true;
      }
    return false;
  }
  for (int keys : {32, 16})
    for (int rows : {64, 32, 16, 8}) {
      if (rows > std::max(tile, 8) || rows < std::min(floor, 8)) continue;
      if (fits(rows, keys)) {
        plan.block_rows = rows, plan.block_keys = keys;
        return true;
      }
    }
  return false;
}

// split_kv's chunks: about eight blocks per compute unit over batch x kv heads x chunks,
// chunks of at least 256 keys.
void size_splits(const AttentionDims& d, const PlanTarget& target, AttentionPlan& plan) {
  const std::int64_t units = target.device ? target.device->properties().compute_units : 0;
  // The pass is a stream of K and V: enough blocks (of four warps) to keep about 32 warps a
  // compute unit loading, which covers HBM's latency (Little's law: ~15 KB in flight a unit
  // on an H100/H200, by estimate: not yet measured); two blocks a unit would keep 8 warps
  // loading, short of that.
  const std::int64_t want = 8 * (units > 0 ? units : 128);
  const std::int64_t heads =
      std::max<std::int64_t>(1, d.batch / std::max<std::int64_t>(1, d.q_heads) * d.kv_heads);
  const std::int64_t most = std::max<std::int64_t>(1, (d.kv_len + 255) / 256);
  std::int64_t splits = std::clamp<std::int64_t>((want + heads - 1) / heads, 1, most);
  plan.split_len = std::max<std::int64_t>(1, (d.kv_len + splits - 1) / splits);
  plan.splits = std::max<std::int64_t>(1, (d.kv_len + plan.split_len - 1) / plan.split_len);
  plan.choices.push_back(
      {"splits", std::to_string(plan.splits) + " x " + std::to_string(plan.split_len) + " keys",
       units > 0 ? "compute_units" : "", units > 0 ? "runtime" : "",
       "about eight blocks per compute unit (" +
           (units > 0 ? std::to_string(units) : std::string("128 assumed: no device present")) +
           ") over batch x kv heads x chunks, chunks of at least 256 keys."});
}

// flash_mma issues mma.sync m16n8k16: a matrix unit of that generation (mma or wgmma, which
// runs mma.sync too) taking the dtype. sm_70's first-generation unit (m8n8k4, float16 only)
// lists no bfloat16, which is how its device file tells it apart.
bool matrix_units_take(const Capabilities& caps, DType dtype) {
  const MatrixUnit u = caps.matrix_unit.value;
  const auto& dtypes = caps.matrix_dtypes.value;
  const auto has = [&](DType t) {
    return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
  };
  return (u == MatrixUnit::kMma || u == MatrixUnit::kWgmma) && has(dtype) && has(DType::kBFloat16);
}

}  // namespace

void choose_attention_path(std::string_view op, DType dtype, const AttentionDims& d,
                           const PlanTarget& target, AttentionPlan& plan) {
  const Request request = request_from_env(op);
  const Capabilities& caps = target.caps;
  std::string why_math;
  if (request == Request::kMath)
    why_math = "NBX_ATTENTION=math.";
  else if (d.mask == AttentionDims::Mask::kBool || d.mask == AttentionDims::Mask::kAdditive)
    why_math = "a mask tensor: the fused kernels take causal or no mask.";
  else if (dtype == DType::kFloat64)
    why_math = "float64: the fused kernels compute float16, bfloat16 and float32.";
  else if (d.gqa && d.kv_heads != d.value_heads)
    why_math = "key and value heads differ.";
  else if (!d.flat_batch)
    why_math = "the batch dims of q, k or v do not merge into one stride.";
  else if (d.head_dim > abi::kAttentionMaxDim || d.value_dim > abi::kAttentionMaxDim)
    why_math = "head dims above " + std::to_string(abi::kAttentionMaxDim) + ".";

  std::string passed;
  if (why_math.empty()) {
    const std::int64_t budget = caps.shared_memory_per_block_optin.value > 0
                                    ? caps.shared_memory_per_block_optin.value
                                    : caps.shared_memory_per_block.value;
    const std::int64_t group = d.q_heads / std::max<std::int64_t>(1, d.kv_heads);
    const bool decode = d.q_len * group <= 16;
    std::vector<AttentionPath> order;
    if (request == Request::kFlash) order = {AttentionPath::kFlash};
    if (request == Request::kFlashMma) order = {AttentionPath::kFlashMma};
    if (request == Request::kSplitKv) order = {AttentionPath::kSplitKv};
    if (request == Request::kCudnn) order = {AttentionPath::kCudnn};
    if (request == Request::kAuto || request == Request::kOwn) {
      // cuDNN first where it serves, decode included: on the H100 (2026-12-07, q_len 1, kv
      // 32768, GQA 32/8, d128, batch 16) it took 0.71 ms to split_kv's 2.0 ms, and it
      // matched PyTorch's best for the prefill shapes (docs/performance.md).
      if (request == Request::kAuto && !d.vendor_declined) order.push_back(AttentionPath::kCudnn);
      if (decode) order.push_back(AttentionPath::kSplitKv);
      order.push_back(AttentionPath::kFlashMma);
      order.push_back(AttentionPath::kFlash);
    }
    const FamilySpec& spec = family_spec(KernelFamily::kAttention);
    for (AttentionPath path : order) {
      const std::string name = attention_path_name(path);
      const abi::AttentionVariant v = attention_variant(path);
      AttentionPlan trial = plan;
      if (!target_offers(target, KernelFamily::kAttention, v)) {
        passed += target.device_name + " does not offer " + name + "; ";
        continue;
      }
      // cuDNN's fused attention, like flash_mma, wants sm_80's matrix units or newer.
      const bool on_matrix_units =
          path == AttentionPath::kFlashMma || path == AttentionPath::kCudnn;
      if (on_matrix_units && !matrix_units_take(caps, dtype)) {
        passed += name + " needs m16n8k16 matrix units taking " + std::string(dtype_name(dtype)) +
                  " (matrix_unit " + std::string(to_string(caps.matrix_unit.value)) + ", " +
                  caps.matrix_unit.source + "); ";
        continue;
      }
      if (path == AttentionPath::kCudnn) {  // the library sizes its own tiles
        trial.block_rows = 1, trial.block_keys = 1;
      } else if (!size_blocks(path, d, budget, plan.tile, caps.attention.min_tile.value, trial)) {
        passed +=
            name + "'s tiles do not fit " + std::to_string(budget) + " bytes of shared memory; ";
        continue;
      }
      abi::AttentionParams model = attention_model_block(dtype, d, trial);
      model.variant = v;
      std::string refusal = spec.variant_refusal(v, reinterpret_cast<const std::byte*>(&model),
                                                 caps.subgroup_size.value);
      if (refusal.empty() && on_matrix_units && !d.rows_16_bytes)
        refusal = "q, k and v need contiguous rows starting on 16 bytes";
      if (!refusal.empty()) {
        passed += name + " does not serve it (" + refusal + "); ";
        continue;
      }
      plan = std::move(trial);
      plan.path = path;
      break;
    }
    if (plan.path == AttentionPath::kMath) {
      if (request != Request::kAuto)
        throw Unsupported(std::string(op), target.device_id,
                          "attention." + std::string(std::getenv("NBX_ATTENTION")),
                          std::string(op) + " on " + target.device_name +
                              ": NBX_ATTENTION=" + std::getenv("NBX_ATTENTION") +
                              " cannot run here: " + passed + "refused.");
      why_math = "no fused kernel serves it: " + passed;
    }
  }
  if (plan.path == AttentionPath::kMath) {
    plan.choices.push_back(
        {"path", "math", "", "",
         "matmul, masked softmax and matmul over chunks of query rows (" + why_math + ")"});
    return;
  }
  const std::string name = attention_path_name(plan.path);
  plan.choices.push_back(
      {"path", name, target.device ? "" : "backend." + caps.backend,
       target.device ? "runtime: offers(attention." + name + ")" : "backend_variants.hpp",
       (plan.path == AttentionPath::kSplitKv
            ? std::string("decode-shaped (q_len x group <= 16 rows a kv head): the keys split "
                          "across blocks, partial results combined by a second pass. ")
        : plan.path == AttentionPath::kFlashMma
            ? std::string("tiles on the matrix units (mma.sync, float32 accumulators), online "
                          "softmax, no L x S matrix. ")
        : plan.path == AttentionPath::kCudnn
            ? std::string("cuDNN's fused flash attention (the vendor library, loaded at run "
                          "time; NBX_ATTENTION=own runs the project's kernels instead). ")
            : std::string("tiles in shared memory with FMA, online softmax, no L x S matrix. ")) +
           (passed.empty() ? "" : "Passed over: " + passed)});
  if (plan.path == AttentionPath::kCudnn) return;  // cuDNN's engine picks its tiles
  plan.choices.push_back(
      {"block",
       std::to_string(plan.block_rows) + " query rows x " + std::to_string(plan.block_keys) +
           " keys" +
           (plan.path == AttentionPath::kFlashMma
                ? ", " + std::to_string(plan.key_stages) + " K/V stage" +
                      (plan.key_stages == 1 ? "" : "s")
                : std::string()),
       "shared_memory.per_block_optin", caps.shared_memory_per_block_optin.source,
       "the tile's rows (at most the tile above) whose buffers fit the block's shared memory."});
  if (plan.path == AttentionPath::kSplitKv) size_splits(d, target, plan);
}

abi::AttentionParams attention_model_block(DType dtype, const AttentionDims& d,
                                           const AttentionPlan& plan) {
  abi::AttentionParams p{};
  p.op = abi::kAttention_sdpa;
  p.dtype = std::int32_t(dtype);
  p.causal = d.mask == AttentionDims::Mask::kCausal;
  p.causal_shift = p.causal && d.causal_bottom_right ? d.kv_len - d.q_len : 0;
  p.block_rows = plan.block_rows, p.block_keys = plan.block_keys, p.key_stages = plan.key_stages;
  p.splits = 1;
  p.batch = std::max<std::int64_t>(1, d.batch / std::max<std::int64_t>(1, d.q_heads));
  p.q_heads = d.q_heads, p.kv_heads = std::max<std::int64_t>(1, d.kv_heads);
  p.q_len = d.q_len, p.kv_len = d.kv_len, p.head_dim = d.head_dim, p.value_dim = d.value_dim;
  p.scale = 1.0;
  const auto contiguous = [](std::int64_t* s, std::int64_t heads, std::int64_t rows,
                             std::int64_t dim) {
    s[3] = 1, s[2] = dim, s[1] = rows * dim, s[0] = heads * rows * dim;
  };
  contiguous(p.q_strides, p.q_heads, p.q_len, p.head_dim);
  contiguous(p.k_strides, p.kv_heads, p.kv_len, p.head_dim);
  contiguous(p.v_strides, p.kv_heads, p.kv_len, p.value_dim);
  contiguous(p.out_strides, p.q_heads, p.q_len, p.value_dim);
  return p;
}

}  // namespace nbx::ops::detail
