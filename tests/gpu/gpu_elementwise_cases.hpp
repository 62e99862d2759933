// The elementwise cases the GPU tests sweep (gpu_elementwise_cases.cpp).
#pragma once

#include <cstdint>
#include <vector>

#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {

// Every op × every dtype it is defined for × every layout, seeds from `seed` upwards.
std::vector<Case> elementwise_cases(std::uint64_t seed);
// copy (the cast) for every pair of dtypes, flat and transposed.
std::vector<Case> cast_cases(std::uint64_t seed);

}  // namespace nbx::gputest
