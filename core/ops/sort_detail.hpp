// Internal to core/ops (sort.cpp, topk_chunks.cpp, order_statistics.cpp): the one sort launch and
// the row selections the order statistics share.
#pragma once

#include <cstdint>
#include <optional>

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

// sort.cpp: the first k of every row along dim by the select variant (one launch), or nullopt
// where plan_topk_select does not take it (the tournament or a full sort serves those).
std::optional<ValuesAndIndices> topk_by_select(const Tensor& x, std::int64_t k, int dim,
                                               bool largest);
// topk_chunks.cpp: the tile of the topk tournament for k of x's rows along dim, or 0 where
// the row fits one tile or k is over a quarter of it (a full sort serves those).
std::int64_t topk_tournament_tile(const Tensor& x, std::int64_t k, int dim);
// The first k of every row along dim (largest or smallest, in order, ties by index) by the
// tournament, or nullopt where topk_tournament_tile is 0.
std::optional<ValuesAndIndices> topk_by_chunks(const Tensor& x, std::int64_t k, int dim,
                                               bool largest);

}  // namespace nbx::ops::detail
