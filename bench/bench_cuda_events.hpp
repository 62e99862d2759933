// The CUDA-event KernelTimer (bench_cuda_events.cu; built only with CUDA).
#pragma once

#include <memory>

#include "bench/bench_elementwise.hpp"

namespace nbx::bench {

std::unique_ptr<KernelTimer> cuda_event_timer();
// The CUDA runtime's own floor for the dispatch figure: host µs per launch of an empty
// kernel (one block) on a blocking stream, `iterations` times, synchronised once.
double raw_empty_launch_us(int iterations);

}  // namespace nbx::bench
