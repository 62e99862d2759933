// topk over vocabulary-sized rows on one device, beside a read-bound reference (H200
// diagnostics, docs/performance.md 2026-12-04): the bench's topk50_vocab_f32 logits (4096 ×
// 128256 float32, ±[0.25, 2)), topk for each k given, then amax over the rows — one read of
// the same bytes, what a selection that reads the row once could approach — and topk of the
// same rows sorted in descending order (the bound is final after the first chunk: one
// compaction a row, every later element rejected by the pretest) and in ascending order (a
// compaction every chunk: what one costs). Host wall time of
// each call and a synchronize, the fastest of 10 after 2 warm-ups.
//
//   topk-probe DEVICE [--rows 4096] [K=50 …]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "bench/bench_rowops.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/sort.hpp"
#include "nbx/nbx.hpp"

using namespace nbx;

namespace {

double fastest_ms(const Device& d, const std::function<Tensor()>& op) {
  double best = 1e30;
  for (int rep = 0; rep < 12; ++rep) {
    d.synchronize();
    const auto t0 = std::chrono::steady_clock::now();
    const Tensor r = op();
    d.synchronize();
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (rep >= 2) best = std::min(best, ms);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: topk-probe DEVICE [--rows 4096] [K=50 …]\n");
    return 2;
  }
  const Device d = nbx::open(argv[1]);
  std::vector<std::int64_t> ks;
  std::int64_t rows = 4096;
  for (int i = 2; i < argc; ++i) {
    if (std::string(argv[i]) == "--rows" && i + 1 < argc)
      rows = std::atoll(argv[++i]);
    else
      ks.push_back(std::atoll(argv[i]));
  }
  if (ks.empty()) ks.push_back(50);
  const Tensor x = bench::random_tensor(d, {rows, 128256}, DType::kFloat32, 33);
  for (const std::int64_t k : ks)
    std::printf("%s topk k=%lld: %.3f ms\n", argv[1], (long long)k,
                fastest_ms(d, [&] { return ops::topk(x, k, -1).values; }));
  for (const bool descending : {true, false}) {
    // One sorted row in every row (a sort of the whole would need a workspace past some
    // devices' largest buffer).
    const Tensor sorted =
        ops::sort(x.narrow(0, 0, 1), -1, descending).values.expand({rows, 128256}).contiguous();
    std::printf("%s topk k=50 of rows sorted %s: %.3f ms\n", argv[1],
                descending ? "descending" : "ascending",
                fastest_ms(d, [&] { return ops::topk(sorted, 50, -1).values; }));
  }
  std::printf("%s amax over the rows: %.3f ms\n", argv[1],
              fastest_ms(d, [&] { return ops::amax(x, {-1}); }));
  return 0;
}
