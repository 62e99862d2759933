// A tensor's values as PyTorch's repr prints them (torch/_tensor_str.py, default options):
//
//   tensor([[ 0.1000, -1.5000],
//           [ 2.0000,  3.0000]], dtype=nbx.float16, device='cuda:0')
//
// Floats in fixed point with 4 decimals, in scientific notation where the nonzero finite
// magnitudes span more than 1000× or pass 1e8 (or fall below 1e-4), as "1." where all are
// integers; columns right-aligned to the widest; lines of at most 80 characters; past 1000
// elements each dim longer than 6 shows its first and last 3 around "...". The dtype is named
// unless it is float32, int64 or bool, the device unless it is the host, the size of an empty
// tensor unless it is 1-d.
#pragma once

#include <string>

#include "core/tensor.hpp"

namespace nbx {

// Copies only the elements it shows to the host (the device's work so far finishes first).
// Throws what the copy throws; "tensor(undefined)" for an undefined tensor.
std::string format(const Tensor& t);

}  // namespace nbx
