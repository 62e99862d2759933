// The scatter family's passes timed one by one on a device (H200 diagnostics of the
// partitioned variant, docs/performance.md 2026-12-04): 2^26 float32 writes (uniform int64
// indices, then the same sorted) into as many destinations — the partitioned variant's count,
// prefix, partition and apply passes as raw launches, the plain atomic pass, and the op as the
// plan runs it. Each time is host wall time around one launch and a synchronize (about 10 µs
// of it is the synchronize).
//
// BALLAST tensors of 256 MiB are allocated and written first, as the wave-1 suite holds about
// 3 GiB of other tensors when it reaches scatter_add (vulkan:0's plain atomic pass ran 4.0 ms
// here and 9.7 in the suite).
//
// Then the suite's scatter_add_f32 built and timed as bench_index.cpp does (suite_case), and
// with PRELUDE after the suite's earlier cases or its index cases one by one (steps:…): in
// which processes does vulkan:0 run it at 9.7 ms rather than 3.9?
//
//   scatter-passes DEVICE [BUCKET_SHIFT=20] [N=2^26] [uniform|sorted|both] [BALLAST=0] [PRELUDE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_index.hpp"
#include "bench/bench_rowops.hpp"
#include "bench/bench_scan.hpp"
#include "core/backend.hpp"
#include "core/device.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/index.hpp"
#include "nbx/nbx.hpp"

using namespace nbx;

namespace {

double now_ms() {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The wave-1 suite's scatter_add_f32 as it builds and times it (bench_index.cpp: self and src
// random, indices from uniform_int_distribution), timed by the suite's timers: does the
// harness or the process's history make vulkan:0's 9.7 ms?
void suite_case(const Device& d, const char* name, const std::string& label) {
  const std::int64_t n = std::int64_t(1) << 26;
  std::vector<std::int64_t> iv(static_cast<std::size_t>(n));
  {
    std::mt19937_64 r28(28);
    std::uniform_int_distribution<std::int64_t> u(0, n - 1);
    for (auto& x : iv) x = u(r28);
    const Tensor self = bench::random_tensor(d, {n}, DType::kFloat32, 26);
    const Tensor src = bench::random_tensor(d, {n}, DType::kFloat32, 27);
    const Tensor idx = Tensor::from_host(iv, {n}, d);
    BackendDevice& bd = d.context().backend_device();
    const auto op = [&] { return ops::scatter_add(self, 0, idx, src); };
    std::vector<std::unique_ptr<bench::KernelTimer>> timers;
    timers.push_back(bench::host_clock_timer());
    if (d.id().backend == "vulkan") timers.push_back(bench::vulkan_timestamp_timer(bd));
    for (auto& timer : timers)
      for (int rep = 0; rep < 2; ++rep) {
        const bench::BenchResult r =
            bench::time_case("scatter_add_f32", "", 1, op, bench::RowOpsOptions{}, bd, *timer);
        std::printf("%s the suite's case %s, %s: median %.3f ms\n", name, label.c_str(),
                    timer->name(), r.median_ms);
      }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: scatter-passes DEVICE [BUCKET_SHIFT=20] [N=2^26] "
                 "[uniform|sorted|both] [BALLAST=0]\n");
    return 2;
  }
  const Device d = nbx::open(argv[1]);
  const int shift = argc > 2 ? std::atoi(argv[2]) : 20;
  const std::int64_t n = argc > 3 ? std::atoll(argv[3]) : std::int64_t(1) << 26, m = n;
  const std::string orders = argc > 4 ? argv[4] : "both";
  std::vector<Tensor> ballast;
  for (int i = 0, count = argc > 5 ? std::atoi(argv[5]) : 0; i < count; ++i)
    ballast.push_back(Tensor::full({std::int64_t(1) << 26}, 1.5, DType::kFloat32, d));
  std::mt19937_64 rng(1);
  std::vector<std::int64_t> iv(static_cast<std::size_t>(n));
  for (auto& x : iv) x = std::int64_t(rng() % std::uint64_t(m));
  const std::int64_t buckets = ((m - 1) >> shift) + 1;
  if (buckets > abi::kScatterMaxBuckets) {
    std::fprintf(stderr, "%lld buckets: more than %lld\n", (long long)buckets,
                 (long long)abi::kScatterMaxBuckets);
    return 2;
  }
  const std::int64_t parts = std::min<std::int64_t>(1024, (n + 8191) / 8192);
  // A step list runs alone in its process (nothing before it but the ballast).
  const bool only_steps = argc > 6 && std::string(argv[6]).rfind("steps:", 0) == 0;
  for (const bool sorted : {false, true}) {
    if (only_steps || (orders != "both" && orders != (sorted ? "sorted" : "uniform"))) continue;
    if (sorted) std::sort(iv.begin(), iv.end());
    const Tensor out = Tensor::zeros({m}, DType::kFloat32, d);
    const Tensor src = bench::random_tensor(d, {n}, DType::kFloat32, 27);
    const Tensor idx = Tensor::from_host(iv, {n}, d);
    const Tensor counts = Tensor::zeros({(buckets + 1) * parts}, DType::kInt32, d);
    const Tensor pairs = Tensor::zeros({2 * n}, DType::kInt32, d);
    abi::ScatterParams p{};
    p.op = abi::kScatter_scatter_add;
    p.variant = abi::kScatterPartitioned;
    p.reduce = abi::kScatterAdd;
    p.dtype = std::int32_t(DType::kFloat32);
    p.index_dtype = std::int32_t(DType::kInt64);
    p.ndim = 1;
    p.numel = n;
    p.bound = m;
    p.index_scale = 1;
    p.sizes[0] = n;
    p.src_strides[0] = p.index_strides[0] = p.index_positions[0] = 1;
    p.bucket_shift = shift;
    p.buckets = buckets;
    p.parts = parts;
    BackendDevice& bd = d.context().backend_device();
    const auto timed = [&](const abi::ScatterParams& q, const Tensor& first, const Tensor& third,
                           const Tensor& fourth) {
      const KernelBuffer b[4] = {{first.storage()->memory(), true},
                                 {src.storage()->memory(), false},
                                 {third.storage()->memory(), false},
                                 {fourth.storage()->memory(), false}};
      d.synchronize();
      const double t0 = now_ms();
      {
        std::lock_guard lock(d.context().launch_mutex());
        bd.launch(kernel_launch(q, b));
      }
      d.synchronize();
      return now_ms() - t0;
    };
    for (int rep = 0; rep < 4; ++rep) {
      abi::ScatterParams q = p;
      q.pass = abi::kPassCount;
      const double count = timed(q, counts, idx, idx);
      double t0 = now_ms();
      const Tensor starts = ops::sub(ops::cumsum(counts, 0, DType::kInt32), counts);
      d.synchronize();
      const double prefix = now_ms() - t0;
      q.pass = abi::kPassPartition;
      const double partition = timed(q, pairs, idx, starts);
      q.pass = abi::kPassApply;
      const double apply = timed(q, out, pairs, idx);
      q = p;
      q.variant = abi::kScatterAtomic;
      const double atomic = timed(q, out, idx, idx);
      t0 = now_ms();
      const Tensor r = ops::scatter_add(out, 0, idx, src);
      d.synchronize();
      const double op = now_ms() - t0;
      std::printf(
          "%s %s, %zu ballast, 2^%d-element buckets: count %.3f prefix %.3f partition %.3f apply "
          "%.3f "
          "(%.3f) | atomic %.3f | the op %.3f ms\n",
          argv[1], sorted ? "sorted" : "uniform", ballast.size(), shift, count, prefix, partition,
          apply, count + prefix + partition + apply, atomic, op);
    }
  }
  if (!only_steps) suite_case(d, argv[1], "alone");
  // PRELUDE (argument 6): rowops, scans, both or none — the suite's earlier cases, then its
  // index cases as it runs them; or steps:… (below). Then the suite's case again.
  if (argc > 6) {
    const std::string prelude = argv[6];
    BackendDevice& bd = d.context().backend_device();
    auto timer =
        d.id().backend == "vulkan" ? bench::vulkan_timestamp_timer(bd) : bench::host_clock_timer();
    const bench::RowOpsOptions o{};
    std::vector<bench::BenchResult> results;
    if (prelude == "rowops" || prelude == "both") results = bench::run_rowops_suite(d, o, *timer);
    if (prelude == "scans" || prelude == "both")
      results = bench::with_scan_cases(std::move(results), d, o, *timer);
    if (prelude == "rowops" || prelude == "scans" || prelude == "both" || prelude == "none")
      results = bench::with_index_cases(std::move(results), d, o, *timer);
    for (const auto& r : results)
      std::printf("%s after %s: %s %.3f ms\n", argv[1], prelude.c_str(), r.name.c_str(),
                  r.median_ms);
    const std::int64_t rows = o.rows, cols = o.cols, half = rows / 2;
    const auto indices = [&](const Shape& shape, std::int64_t bound, unsigned seed) {
      std::mt19937_64 r(seed);
      std::uniform_int_distribution<std::int64_t> u(0, bound - 1);
      std::vector<std::int64_t> v(static_cast<std::size_t>(numel(shape)));
      for (auto& e : v) e = u(r);
      return Tensor::from_host(v, shape, d);
    };
    const auto time_one = [&](const std::function<Tensor()>& op) {
      std::printf("%s %s: %.3f ms\n", argv[1], prelude.c_str(),
                  bench::time_case(prelude, "", 1, op, o, bd, *timer).median_ms);
    };
    // "steps:a,b,…": the suite's index cases one by one in the order given — emb, isel and
    // gather as bench_index.cpp runs them (their tensors freed as their scopes end), x the
    // 16384 × 4096 input isel and gather read (made where named, kept), scatter the suite's
    // scatter_add_f32 timed by this process's first timer, scatter-new by a timer of its own.
    std::optional<Tensor> xs;
    if (prelude.rfind("steps:", 0) == 0) {
      std::string list = prelude.substr(6);
      for (std::size_t at = 0; at <= list.size();) {
        const std::size_t end = std::min(list.find(',', at), list.size());
        const std::string step = list.substr(at, end - at);
        at = end + 1;
        if (step == "x") xs = bench::random_tensor(d, {half, cols}, DType::kFloat32, 23);
        if (step == "emb") {
          const Tensor w = bench::random_tensor(d, {2 * rows, cols}, DType::kBFloat16, 21);
          const Tensor idx = indices({rows}, 2 * rows, 22);
          time_one([&] { return ops::embedding(idx, w); });
        }
        if (step == "isel" && xs) {
          const Tensor idx = indices({half}, half, 24);
          time_one([&] { return ops::index_select(*xs, 0, idx); });
        }
        if (step == "gather" && xs) {
          const Tensor idx = indices({half, cols}, cols, 25);
          time_one([&] { return ops::gather(*xs, 1, idx); });
        }
        if (step == "scatter" || step == "scatter-new") {
          const std::int64_t n = half * cols;
          const Tensor self = bench::random_tensor(d, {n}, DType::kFloat32, 26);
          const Tensor src = bench::random_tensor(d, {n}, DType::kFloat32, 27);
          const Tensor idx = indices({n}, n, 28);
          auto fresh = step == "scatter" ? nullptr : bench::vulkan_timestamp_timer(bd);
          bench::KernelTimer& t = fresh ? *fresh : *timer;
          const auto timed = [&](const char* what, const Tensor& a, const Tensor& i,
                                 const Tensor& b) {
            std::printf("%s %s, %s%s: %.3f ms\n", argv[1], prelude.c_str(), step.c_str(), what,
                        bench::time_case(
                            step, "", 1, [&] { return ops::scatter_add(a, 0, i, b); }, o, bd, t)
                            .median_ms);
          };
          timed("", self, idx, src);
          // Slow for good, or for a while after the allocations? Then which tensor's new copy
          // (a new allocation each) makes it fast.
          for (int again = 0; again < 3; ++again) {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            timed(" again", self, idx, src);
          }
          timed(" (self copied)", self.clone(), idx, src);
          timed(" (index copied)", self, idx.clone(), src);
          timed(" (src copied)", self, idx, src.clone());
          timed(" (all copied)", self.clone(), idx.clone(), src.clone());
        }
      }
    }
    suite_case(d, argv[1], "after " + prelude);
  }
  return 0;
}
