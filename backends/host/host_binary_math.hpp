// The reference forms of issue 11's binary ops that are more than one libm call: nextafter
// in any float dtype's own bits, and isclose step by step as PyTorch's composite computes it.
#pragma once

#include "core/dtype.hpp"

namespace nbx::host {

// The next value of dtype `t` after x toward y (x and y hold values of `t` exactly): one ulp
// of float16/bfloat16 too, never of the float32 they compute in. NaN if either is NaN, y if
// x == y (so nextafter(0, -0) is -0), the smallest subnormal of y's sign from zero.
double nextafter_in(DType t, double x, double y);

// PyTorch's isclose of two values of `storage` (after its integer-to-float cast): equal, or
// both NaN with equal_nan, or finite |a - b| <= atol + |rtol b|. Computed in `compute`
// (float32 or float64: rtol and atol round to it first), each step rounded to a 16-bit
// `storage` as PyTorch's ops on float16/bfloat16 tensors round every result.
bool isclose_in(DType compute, DType storage, double a, double b, double rtol, double atol,
                bool equal_nan);

}  // namespace nbx::host
