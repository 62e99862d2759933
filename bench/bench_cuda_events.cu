// A KernelTimer on CUDA events, for the nbx-bench-gpu program when built with CUDA.
//
// The events are recorded on the legacy default stream. The CUDA backend's stream is a
// blocking stream, which the legacy stream orders with in both directions, so the two
// events bracket exactly the work the backend issues between them — without any access to
// the backend's own stream.
#include <cuda_runtime.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "bench/bench_cuda_events.hpp"

namespace nbx::bench {
namespace {

void check(cudaError_t e, const char* call) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(call) + " failed (" + cudaGetErrorName(e) + ": " +
                             cudaGetErrorString(e) + ").");
}

class CudaEventTimer final : public KernelTimer {
 public:
  CudaEventTimer() {
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~CudaEventTimer() override {
    (void)cudaEventDestroy(start_);
    (void)cudaEventDestroy(stop_);
  }
  const char* name() const override { return "CUDA events on the legacy default stream"; }
  void begin(BackendDevice&) override { check(cudaEventRecord(start_, 0), "cudaEventRecord"); }
  double end_ms(BackendDevice&) override {
    check(cudaEventRecord(stop_, 0), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
    return ms;
  }

 private:
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
};

__global__ void empty_kernel() {}

}  // namespace

std::unique_ptr<KernelTimer> cuda_event_timer() {
  return std::make_unique<CudaEventTimer>();
}

double raw_empty_launch_us(int iterations) {
  cudaStream_t s = nullptr;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  for (int i = 0; i < 1000; ++i) empty_kernel<<<1, 256, 0, s>>>();
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) empty_kernel<<<1, 256, 0, s>>>();
  check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  const auto t1 = std::chrono::steady_clock::now();
  (void)cudaStreamDestroy(s);
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / iterations;
}

}  // namespace nbx::bench
