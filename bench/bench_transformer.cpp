// The transformer suite (bench_transformer.hpp).
#include "bench/bench_transformer.hpp"

#include <cstdlib>
#include <random>
#include <string>

#include "core/backend.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/attention.hpp"
#include "core/ops/loss.hpp"

namespace nbx::bench {
namespace {

struct SdpaCase {
  const char* name;
  std::int64_t b, hq, hkv, sq, skv, d;
  bool causal;
};

// Random int64 class indices in [0, classes) on `device`.
Tensor random_targets(const Device& device, std::int64_t n, std::int64_t classes) {
  std::mt19937 rng(5);
  std::vector<std::int64_t> t(static_cast<std::size_t>(n));
  for (auto& x : t) x = std::int64_t(rng() % std::uint32_t(classes));
  return Tensor::from_host(t, {n}, device);
}

}  // namespace

std::vector<BenchResult> run_transformer_suite(const Device& device, const RowOpsOptions& o,
                                               KernelTimer& timer, bool quick) {
  BackendDevice& bd = device.context().backend_device();
  std::vector<BenchResult> results;
  const std::int64_t s = quick ? 1024 : 4096, kv = quick ? 8192 : 32768;
  const SdpaCase cases[] = {{"sdpa_causal_bf16", 4, 32, 32, s, s, 128, true},
                            {"sdpa_causal_gqa_bf16", 4, 32, 8, s, s, 128, true},
                            {"sdpa_full_bf16", 4, 32, 32, s, s, 128, false},
                            {"sdpa_decode_gqa_bf16", 16, 32, 8, 1, kv, 128, false}};
  const std::pair<const char*, int> paths[] = {{"", -1},
                                               {"flash_mma", abi::kAttentionFlashMma},
                                               {"flash", abi::kAttentionFlash},
                                               {"split_kv", abi::kAttentionSplitKv},
                                               {"cudnn", abi::kAttentionCudnn}};
  for (const SdpaCase& c : cases) {
    const Tensor q = random_tensor(device, {c.b, c.hq, c.sq, c.d}, DType::kBFloat16, 1);
    const Tensor k = random_tensor(device, {c.b, c.hkv, c.skv, c.d}, DType::kBFloat16, 2);
    const Tensor v = random_tensor(device, {c.b, c.hkv, c.skv, c.d}, DType::kBFloat16, 3);
    const double flops = 4.0 * c.b * c.hq * c.sq * c.skv * c.d * (c.causal ? 0.5 : 1.0);
    const std::string shape = "b" + std::to_string(c.b) + "h" + std::to_string(c.hq) + "/" +
                              std::to_string(c.hkv) + "s" + std::to_string(c.sq) + "x" +
                              std::to_string(c.skv);
    for (const auto& [path, variant] : paths) {
      if (variant >= 0 && !bd.offers(KernelFamily::kAttention, variant)) continue;
      // split_kv serves decode shapes only; the prefill cases skip it.
      if (variant == abi::kAttentionSplitKv && c.sq != 1) continue;
      // Decode: split_kv against the default and cuDNN (the prefill tiles would idle).
      if ((variant == abi::kAttentionFlash || variant == abi::kAttentionFlashMma) && c.sq == 1)
        continue;
      // The FMA flash kernel at s4096 takes seconds a call where flash_mma runs: timed only
      // where it is the device's own fused prefill path.
      if (variant == abi::kAttentionFlash && c.sq > 1 &&
          bd.offers(KernelFamily::kAttention, abi::kAttentionFlashMma))
        continue;
      const std::string name = std::string(c.name) + (*path ? std::string("[") + path + "]" : "");
      const auto op = [&, path = path] {
        if (*path) setenv("NBX_ATTENTION", path, 1);
        Tensor out = ops::scaled_dot_product_attention(q, k, v, {}, c.causal, {}, c.hq != c.hkv);
        if (*path) unsetenv("NBX_ATTENTION");
        return out;
      };
      results.push_back(time_case(name, shape, flops, op, o, bd, timer));
    }
  }
  const std::int64_t rows = quick ? 1024 : 4096, vocab = 128256;
  const Tensor logits = random_tensor(device, {rows, vocab}, DType::kBFloat16, 4);
  const Tensor targets = random_targets(device, rows, vocab);
  results.push_back(time_case(
      "cross_entropy_bf16", std::to_string(rows) + "x" + std::to_string(vocab),
      double(rows) * double(vocab) * 2, [&] { return ops::cross_entropy(logits, targets); }, o, bd,
      timer));
  return results;
}

}  // namespace nbx::bench
