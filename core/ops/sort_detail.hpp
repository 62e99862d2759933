// Internal to core/ops (sort.cpp, order_statistics.cpp): the one sort launch and the row
// selections the order statistics share.
#pragma once

#include <cstdint>

#include "core/ops/reduce.hpp"
#include "core/tensor.hpp"

namespace nbx::ops::detail {

// Every row of x along dim sorted (the "sort" launch); refusals and errors under `name`.
ValuesAndIndices sort_rows(const char* name, const Tensor& x, std::int64_t dim, bool descending);
// topk, kthvalue, median and nanmedian refuse bool tensors, as PyTorch (no bool kernel).
void require_not_bool(const char* name, const Tensor& x);
// The length of the rows sort_rows sorts (1 for a 0-d tensor).
std::int64_t sorted_size(const char* name, const Tensor& x, std::int64_t dim);
// Element `position` of every sorted row (dim `dim` of s), that dim kept as 1 or dropped.
ValuesAndIndices select_position(const ValuesAndIndices& s, int dim, std::int64_t position,
                                 bool keepdim);

}  // namespace nbx::ops::detail
