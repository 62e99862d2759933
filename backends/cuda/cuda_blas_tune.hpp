// Choosing cuBLASLt's algorithm for one problem by timing the heuristic's candidates on the
// call's own operands, once per problem (cuda_blas.cpp caches the choice per device and
// problem, so a process runs one algorithm per problem). OPT-IN: on the H200 (2026-11-30,
// three rounds alternating with PyTorch) the heuristic's first — what PyTorch takes — ran
// square products at 0.99–1.05x PyTorch, while the tuned choice, timed on a few cold
// launches, was 3% faster at 4096^3 but 8–12% slower at 8192^3 bfloat16 under sustained
// load (power-limited clocks reorder near-equal algorithms). Worth it for shapes where the
// heuristic's first is far off; not as the default.
//
// NBX_BLAS_TUNE: unset, 0 or off — the heuristic's first; 1 or on — time the heuristic's
// first kTuneCandidates algorithms and keep the fastest (within 5% the heuristic's order
// decides); log — tune, and print each problem's choice (algorithm id, tile, stages,
// split-k, times) to stderr.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace nbx::gpu {

enum class BlasTune { kOff, kOn, kLog };

// NBX_BLAS_TUNE, read once per process. Throws InvalidArgument for another value.
BlasTune blas_tune_mode();
// How the algorithm is chosen, for DeviceProperties::extra["matmul.blas"]. Never throws.
std::string blas_tune_summary();

// How many algorithms the heuristic is asked for when tuning, and how many timed launches
// each gets (after one warm-up).
constexpr int kTuneCandidates = 8;
constexpr int kTuneRounds = 5;
// Products of fewer multiply-adds (m * n * k * batch) take the heuristic's first: their
// kernels last a few microseconds, about a launch, so timing them measures the host.
constexpr double kTuneMinMacs = double(std::size_t(1) << 27);

// Where the candidates run while they are timed.
struct TuneTarget {
  char* d = nullptr;        // the call's output D
  std::size_t d_bytes = 0;  // from d to the end of the last element the call writes
  bool reads_c = false;     // beta != 0: D holds the addend (C = D) and must not be written
  cudaStream_t stream = nullptr;
  std::string device_name;  // "cuda:0 (NVIDIA H200)", for messages
};

// Enqueues the product with `algo` on the target's stream, writing `d` (and reading it as C
// when the target reads C). Returns cuBLASLt's status; it must not throw.
using AlgoLaunch = std::function<cublasStatus_t(const cublasLtMatmulAlgo_t& algo, char* d)>;

// The index in `candidates` (the heuristic's answers, in its order, each with state
// CUBLAS_STATUS_SUCCESS and a workspace that fits) of the fastest on this device: one
// warm-up launch each, then kTuneRounds rounds timing every candidate once with CUDA events
// on the stream (round-robin, so clock drift favours none), each scored by its fastest
// launch; among those within 1% of the best the heuristic's earliest wins. A candidate whose
// launch fails is skipped. When the target reads C the candidates write a scratch copy of D
// (cudaMalloc'd here and freed before returning), so D keeps the addend for the one real
// launch that follows; without memory for it the heuristic's first is taken (and `note`
// says so). Blocks until the timed launches finish. `note` receives a line for logs.
// Throws the nbx error of a failing CUDA event call.
std::size_t fastest_algorithm(const std::vector<cublasLtMatmulHeuristicResult_t>& candidates,
                              const TuneTarget& target, const AlgoLaunch& launch,
                              std::string& note);

// "id 66, tile 20, stages 35, split-k 1" (cuBLASLt's enum values), for logs.
std::string describe_algorithm(const cublasLtMatmulAlgo_t& algo);

}  // namespace nbx::gpu
