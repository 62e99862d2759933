// searchsorted and bucketize × every dtype against the host (the search family): rows of
// general values sorted (NaN last) with ties, left and right, side, a sorter, int32 results,
// bucketize; one bad sorter index per fault case (the gather family's fault).
#include "core/ops/index_write.hpp"
#include "core/ops/sort.hpp"
#include "tests/conformance/conformance_index_write_util.hpp"

namespace nbx::conformance {
namespace {

using namespace index_write_util;

// ---- searchsorted, bucketize ----

enum class SearchForm { kLeft, kRight, kSide, kSorter, kInt32, kBucketize, kBucketizeRight };

std::vector<FamilyCase> search_cell(SearchForm form, DType dtype, Rng& rng, const Device& dev) {
  Cases a{dtype, DType::kInt64, rng, dev, "atomic", {}};
  const bool right = form == SearchForm::kRight || form == SearchForm::kBucketizeRight;
  const bool bucketize = form == SearchForm::kBucketize || form == SearchForm::kBucketizeRight;
  const auto call = [form, right, bucketize](std::span<const Tensor> in) -> Outputs {
    if (bucketize) return {ops::bucketize(in[1], in[0], false, right)};
    switch (form) {
      case SearchForm::kSide:
        return {ops::searchsorted(in[0], in[1], false, false, "right")};
      case SearchForm::kSorter:
        return {ops::searchsorted(in[0], in[1], false, false, {}, in[2])};
      case SearchForm::kInt32:
        return {ops::searchsorted(in[0], in[1], true, false)};
      default:
        return {ops::searchsorted(in[0], in[1], false, right)};
    }
  };
  // The sequence (sorted; with a sorter: shuffled, the sorter its stable argsort) and values,
  // some of them copied from the sequence (exact hits, both sides of them).
  const auto add = [&](const char* name, const Shape& seq_shape, const Shape& values_shape,
                       Layout seq_layout, Layout values_layout) {
    Tensor seq = sorted_rows(rng, dtype, seq_shape);
    Tensor v = general_values(rng, dtype, values_shape);
    if (numel(values_shape) >= 2 && numel(seq_shape) >= 1) {
      v.reshape({-1}).narrow(0, 0, 1).copy_(seq.reshape({-1}).narrow(0, 0, 1));
      v.reshape({-1}).narrow(0, 1, 1).copy_(seq.reshape({-1}).narrow(0, numel(seq_shape) - 1, 1));
    }
    std::vector<Operand> operands;
    if (form == SearchForm::kSorter) {
      // A shuffle of each row: the sorter gathers it back.
      const Tensor keys = draw_tensor(rng, DType::kFloat32, seq_shape);
      const Tensor order = ops::argsort(keys, -1);  // a random permutation per row
      const Tensor shuffled = seq.dim() ? ops::take_along_dim(seq, order, -1) : seq;
      const Tensor sorter = seq.dim() ? ops::argsort(order, -1) : Tensor::zeros({}, DType::kInt64);
      operands = {laid_out(shuffled, seq_layout), laid_out(v, values_layout), {sorter, kNone}};
    } else {
      operands = {laid_out(seq, seq_layout), laid_out(v, values_layout)};
    }
    a.add(name, 1, operands, call);
  };
  const Layout c = Layout::kContiguous, t = Layout::kTransposed, s = Layout::kStrided,
               e = Layout::kExpanded0;
  if (bucketize) {
    add("1-d", {20}, {30}, c, c);
    add("2-d-values", {9}, {4, 5}, c, c);
    add("strided-boundaries", {12}, {10}, s, c);
    add("transposed-values", {7}, {5, 6}, c, t);
    add("expanded-values", {7}, {5, 6}, c, e);
    add("0-d-value", {6}, {}, c, c);
    add("empty-boundaries", {0}, {5}, c, c);
    add("long-boundaries", {5000}, {300}, c, c);
    add("2-d-boundaries", {3, 4}, {5}, c, c);  // rejected alike
    return std::move(a.cases);
  }
  add("1-d", {20}, {30}, c, c);
  add("1-d-sequence-2-d-values", {9}, {4, 5}, c, c);
  add("rows", {4, 10}, {4, 6}, c, c);
  add("3-d-rows", {2, 3, 8}, {2, 3, 5}, c, c);
  add("transposed-values", {6, 9}, {6, 5}, c, t);
  add("strided-sequence", {4, 12}, {4, 3}, s, c);
  add("expanded-values", {5, 7}, {5, 4}, c, e);
  add("0-d-value", {8}, {}, c, c);
  add("empty-sequence", {0}, {6}, c, c);
  add("empty-values", {8}, {0}, c, c);
  add("long-sequence", {5000}, {400}, c, c);
  add("leading-dims-differ", {3, 5}, {4, 2}, c, c);  // rejected alike
  return std::move(a.cases);
}

template <SearchForm Form>
std::vector<FamilyCase> search_cases(DType d, Rng& r, const Device& dev) {
  return search_cell(Form, d, r, dev);
}

template <const char* Op>
std::vector<FamilyCase> faults(DType d, Rng& r, const Device& dev) {
  return fault_cell(Op, d, r, dev);
}

constexpr char kSearchsorted[] = "searchsorted";

const FamilySpec kSearchSpecs[] = {
    {"searchsorted", "search", true, search_cases<SearchForm::kLeft>},
    {"searchsorted_right", "search", true, search_cases<SearchForm::kRight>},
    {"searchsorted_side", "search", true, search_cases<SearchForm::kSide>},
    {"searchsorted_sorter", "search", true, search_cases<SearchForm::kSorter>},
    {"searchsorted_int32", "search", true, search_cases<SearchForm::kInt32>},
    {"searchsorted_fault", "search", true, faults<kSearchsorted>},
    {"bucketize", "search", true, search_cases<SearchForm::kBucketize>},
    {"bucketize_right", "search", true, search_cases<SearchForm::kBucketizeRight>},
};

}  // namespace

std::span<const FamilySpec> search_specs() {
  return kSearchSpecs;
}

}  // namespace nbx::conformance
