// vk-attention-bench: TFLOP/s of scaled_dot_product_attention through the public op on one
// device, for issue 13's shapes: prefill b4 h32 s4096 d128 (causal and not) and a decode
// step (q_len 1 over 4096 keys, 32 query heads over 8 kv heads). Wall-clock around each call
// with Device::synchronize (no GPU timestamps: launch overhead is inside the figure, which
// is small beside these problems). The path is whatever the plan takes (NBX_ATTENTION forces
// one; NBX_VULKAN_ATTENTION_COOPMAT=off keeps Vulkan's flash off the matrix units, =sync keeps
// it on them without loading the next K/V tile under the math).
//
//   vk-attention-bench [DEVICE (vulkan:0)] [DTYPE (bfloat16)] [SEQ (4096)]
//
// FLOPs count 4 x B x H x L x S x D (two matmuls), halved for causal prefill. Random data in
// ±[0.1, 1.5]; 2 warm-up calls, then the median of 5.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"

using namespace nbx;

namespace {

Tensor random(const Shape& s, DType t, const Device& d, std::uint32_t seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> mag(0.1f, 1.5f);
  std::vector<float> v(std::size_t(numel(s)));
  for (float& x : v) x = (g() & 1 ? 1.0f : -1.0f) * mag(g);
  return Tensor::from_host(v, s, d).to(t);
}

double median_seconds(const Device& d, const std::function<void()>& call) {
  for (int i = 0; i < 2; ++i) call();
  d.synchronize();
  std::vector<double> t;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    d.synchronize();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Device d = nbx::open(argc > 1 ? argv[1] : "vulkan:0");
    const DType t = parse_dtype(argc > 2 ? argv[2] : "bfloat16");
    const std::int64_t S = argc > 3 ? std::atoll(argv[3]) : 4096;
    const std::int64_t B = 4, H = 32, Hk = 8, D = 128;
    const Tensor q = random({B, H, S, D}, t, d, 1), k = random({B, H, S, D}, t, d, 2),
                 v = random({B, H, S, D}, t, d, 3);
    for (bool causal : {true, false}) {
      const double s =
          median_seconds(d, [&] { ops::scaled_dot_product_attention(q, k, v, {}, causal); });
      const double flops = 4.0 * B * H * S * S * D * (causal ? 0.5 : 1.0);
      std::printf("%s %s prefill b%lld h%lld s%lld d%lld%s: %.3f ms, %.1f TFLOP/s\n",
                  d.str().c_str(), std::string(dtype_name(t)).c_str(), (long long)B, (long long)H,
                  (long long)S, (long long)D, causal ? " causal" : "", s * 1e3, flops / s / 1e12);
    }
    const Tensor q1 = random({B, H, 1, D}, t, d, 4), kd = random({B, Hk, S, D}, t, d, 5),
                 vd = random({B, Hk, S, D}, t, d, 6);
    const double s = median_seconds(
        d, [&] { ops::scaled_dot_product_attention(q1, kd, vd, {}, false, {}, true); });
    const double bytes = 2.0 * B * Hk * S * D * double(dtype_size(t));
    std::printf("%s %s decode b%lld h%lld/%lld s%lld d%lld: %.3f ms, %.0f GB/s of K and V\n",
                d.str().c_str(), std::string(dtype_name(t)).c_str(), (long long)B, (long long)H,
                (long long)Hk, (long long)S, (long long)D, s * 1e3, bytes / s / 1e9);
  } catch (const Error& e) {
    std::fprintf(stderr, "vk-attention-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
