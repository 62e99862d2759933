// The CUDA-event KernelTimer (bench_cuda_events.cu; built only with CUDA).
#pragma once

#include <memory>

#include "bench/bench_elementwise.hpp"

namespace nbx::bench {

std::unique_ptr<KernelTimer> cuda_event_timer();

}  // namespace nbx::bench
