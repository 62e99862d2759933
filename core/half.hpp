// Software float16 / bfloat16 conversions for host code (the reference backend, tensor
// round trips). Rounding is to nearest, ties to even, straight from double — never via
// float, which would round twice. Overflow gives ±inf; NaN stays NaN (quiet).
#pragma once

#include <cstdint>

namespace nbx {

double half_bits_to_double(std::uint16_t bits);
double bf16_bits_to_double(std::uint16_t bits);
std::uint16_t double_to_half_bits(double x);
std::uint16_t double_to_bf16_bits(double x);

}  // namespace nbx
