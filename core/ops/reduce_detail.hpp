// Reductions for compositions inside core/ops (the losses): the public sum and logsumexp,
// except that a float16/bfloat16 input gives a float32 result — the kernel's float32
// accumulator written as it is instead of rounded to the input's dtype. The kernel reads
// the half elements itself, so no float32 copy of the input is made (a cross_entropy over
// 4096 x 128256 bfloat16 logits would otherwise allocate 2 GiB for it). Other dtypes are
// exactly sum's and logsumexp's. Same throws as those ops.
#pragma once

#include "core/ops/reduce.hpp"

namespace nbx::ops::detail {

Tensor sum_float32(const Tensor& x, const DimList& dims, bool keepdim = false);
Tensor logsumexp_float32(const Tensor& x, const DimList& dims, bool keepdim = false);

}  // namespace nbx::ops::detail
