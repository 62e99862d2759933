// The softmax family and the normalizations. Softmax rows of 65 with NaN and ±inf planted
// (a row with +inf gives NaN, as PyTorch), a transposed view, zero-size, a row longer than
// any device's shared memory (the looped variant) and a 128256-element vocabulary row
// (full mode only); the masked form with a broadcast mask that excludes one whole row, in
// the one-pass and the looped variant, and a tensor masked everywhere. Norms with and
// without weight and bias, on contiguous inputs and transposed views; group_norm with 1,
// 2, 3, 4 and 6 groups.
#include "core/ops/norm.hpp"
#include "core/ops/softmax.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;
const View kTranspose01 = [](const Tensor& t) { return t.transpose(0, 1); };
const View kTranspose12 = [](const Tensor& t) { return t.transpose(1, 2); };

FamilyCase one_input(std::string name, std::int64_t k, bool view, const Tensor& host,
                     const Device& dev, const View& v = {}) {
  FamilyCase c{std::move(name), k, view, {}, {}, {}};
  add_operand(c, host, dev, v);
  return c;
}

using SoftmaxOp = Tensor (*)(const Tensor& x, std::int64_t dim);

// 12289 float32 values (49156 bytes) exceed every device file's shared_memory.per_block
// (32 KB llvmpipe, 48 KB H200 and the Vulkan limits), so the looped variant runs.
constexpr std::int64_t kLoopedRow = 12289;
constexpr std::int64_t kVocabularyRow = 128256;

// Softmax divides by a sum of positive terms (relative error); log_softmax subtracts its
// log (the sum's relative error becomes an absolute one).
Growth long_row_growth(bool log) {
  return log ? Growth::kWideLog : Growth::kWidePositive;
}

std::vector<FamilyCase> softmax_cases(DType d, Rng& rng, const Device& dev, SoftmaxOp op,
                                      bool log) {
  std::vector<FamilyCase> cases;
  auto add = [&](FamilyCase c, std::int64_t dim) -> FamilyCase& {
    c.call = [op, dim](std::span<const Tensor> in, const Device&) -> Outputs {
      return {op(in[0], dim)};
    };
    cases.push_back(std::move(c));
    return cases.back();
  };
  add(one_input("last-dim", 65, false, draw_tensor(rng, d, {7, 65}, true), dev), -1);
  add(one_input("dim0-of-transposed", 7, true, draw_tensor(rng, d, {65, 7}), dev, kTranspose01), 0);
  add(one_input("0-size", 0, false, draw_tensor(rng, d, {3, 0}), dev), -1);
  add(one_input("looped-row", kLoopedRow, false, draw_tensor(rng, d, {4, kLoopedRow}, true), dev),
      -1)
      .growth = long_row_growth(log);
  FamilyCase& vocab = add(one_input("vocabulary-row", kVocabularyRow, false,
                                    draw_tensor(rng, d, {4, kVocabularyRow}, true), dev),
                          -1);
  vocab.growth = long_row_growth(log);
  vocab.large = true;
  return cases;
}

// A bool mask for [rows, cols]: a quarter of the elements, and all of row `whole_row`,
// excluded (a broadcast column mask when cols is 1).
Tensor draw_mask(Rng& rng, std::int64_t rows, std::int64_t cols, std::int64_t whole_row) {
  std::vector<std::uint8_t> m(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < m.size(); ++i)
    m[i] = rng.below(4) == 0 || std::int64_t(i) / cols == whole_row;
  return Tensor::from_host(m.data(), {rows, cols}, DType::kBool);
}

std::vector<FamilyCase> masked_cases(DType d, Rng& rng, const Device& dev, bool log) {
  std::vector<FamilyCase> cases;
  auto add = [&](FamilyCase c, const Tensor& mask) -> FamilyCase& {
    add_operand(c, mask, dev);
    c.call = [log](std::span<const Tensor> in, const Device&) -> Outputs {
      return {ops::scaled_masked_softmax(in[0], -1, 0.5, in[1], log)};
    };
    cases.push_back(std::move(c));
    return cases.back();
  };
  // Row 5 fully excluded (zeros, log: -inf); the transposed case's mask broadcasts [7,1].
  add(one_input("masked-last-dim", 65, false, draw_tensor(rng, d, {7, 65}, true), dev),
      draw_mask(rng, 7, 65, 5));
  add(one_input("masked-transposed", 65, true, draw_tensor(rng, d, {65, 7}), dev, kTranspose01),
      draw_mask(rng, 7, 1, 5));
  // Every row excluded through a [1,1] mask: the whole output is zeros (log: -inf).
  add(one_input("all-masked", 65, false, draw_tensor(rng, d, {3, 65}), dev),
      Tensor::from_host(std::vector<bool>{true}, {1, 1}));
  // The looped variant's own fully masked row (row 2) and NaN/±inf in rows 1-3.
  add(one_input("masked-looped-row", kLoopedRow, false, draw_tensor(rng, d, {4, kLoopedRow}, true),
                dev),
      draw_mask(rng, 4, kLoopedRow, 2))
      .growth = long_row_growth(log);
  FamilyCase& vocab = add(one_input("masked-vocabulary-row", kVocabularyRow, false,
                                    draw_tensor(rng, d, {2, kVocabularyRow}), dev),
                          draw_mask(rng, 2, kVocabularyRow, 1));
  vocab.growth = long_row_growth(log);
  vocab.large = true;
  return cases;
}

// layer_norm / rms_norm over the last 65, with weight and bias and without.
std::vector<FamilyCase> row_norm_cases(DType d, Rng& rng, const Device& dev, bool rms) {
  std::vector<FamilyCase> cases;
  for (int v = 0; v < 4; ++v) {
    FamilyCase c =
        v == 0 ? one_input("last-dim", 65, false, draw_tensor(rng, d, {7, 65}, true), dev)
        : v == 1
            ? one_input("transposed", 65, true, draw_tensor(rng, d, {65, 7}), dev, kTranspose01)
        : v == 2 ? one_input("0-size", 65, false, draw_tensor(rng, d, {0, 65}), dev)
                 : one_input("no-affine", 65, false, draw_tensor(rng, d, {2, 3, 65}), dev);
    const bool affine = v < 3;
    if (affine) {
      add_operand(c, draw_tensor(rng, d, {65}), dev);
      add_operand(c, draw_tensor(rng, d, {65}), dev);
    }
    c.call = [rms, affine](std::span<const Tensor> in, const Device&) -> Outputs {
      if (!affine) return {rms ? ops::rms_norm(in[0], {65}) : ops::layer_norm(in[0], {65})};
      return {rms ? ops::rms_norm(in[0], {65}, in[1]) : ops::layer_norm(in[0], {65}, in[1], in[2])};
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

// group_norm (groups of C/G channels × spatial) and batch_norm (running statistics) over
// [N, C, *]; k is the terms per statistic.
std::vector<FamilyCase> channel_norm_cases(DType d, Rng& rng, const Device& dev, bool batch) {
  std::vector<FamilyCase> cases;
  const struct {
    const char* name;
    Shape base;
    View view;
    std::int64_t groups;  // group_norm only
    bool affine;
    bool specials;
  } rows[] = {
      {"contiguous", {4, 6, 9}, {}, 3, true, true},
      {"transposed", {4, 9, 6}, kTranspose12, 3, true, false},
      // group_norm: an empty spatial dim (N = 0 is covered by batch_norm).
      {"0-size", batch ? Shape{0, 6, 9} : Shape{2, 6, 0}, {}, 3, true, false},
      {"no-affine", {4, 6, 9}, {}, 2, false, false},
      {"one-group", {3, 6, 9}, {}, 1, true, false},
      {"group-per-channel", {3, 6, 9}, {}, 6, true, false},
      {"4-d-two-groups", {2, 6, 3, 5}, {}, 2, true, false},
  };
  for (const auto& row : rows) {
    std::int64_t spatial = 1;  // of the viewed [N, 6, *]: the base's dims after N, over C
    for (int i = 1; i < row.base.size(); ++i) spatial *= row.base[i];
    const std::int64_t k = batch ? 1 : (6 / row.groups) * (spatial / 6);
    FamilyCase c = one_input(row.name, k, bool(row.view),
                             draw_tensor(rng, d, row.base, row.specials), dev, row.view);
    add_operand(c, draw_tensor(rng, d, {6}), dev);    // weight
    add_operand(c, draw_tensor(rng, d, {6}), dev);    // bias
    add_operand(c, draw_tensor(rng, d, {6}), dev);    // running mean
    add_operand(c, draw_positive(rng, d, {6}), dev);  // running var
    const std::int64_t groups = row.groups;
    const bool affine = row.affine;
    c.call = [batch, groups, affine](std::span<const Tensor> in, const Device&) -> Outputs {
      if (batch)
        return {affine ? ops::batch_norm(in[0], in[3], in[4], in[1], in[2])
                       : ops::batch_norm(in[0], in[3], in[4])};
      return {affine ? ops::group_norm(in[0], groups, in[1], in[2])
                     : ops::group_norm(in[0], groups)};
    };
    cases.push_back(std::move(c));
  }
  return cases;
}

const FamilySpec kSpecs[] = {
    {"softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) {
       return softmax_cases(
           d, r, dev, [](const Tensor& x, std::int64_t dim) { return ops::softmax(x, dim); },
           false);
     }},
    {"log_softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) {
       return softmax_cases(
           d, r, dev, [](const Tensor& x, std::int64_t dim) { return ops::log_softmax(x, dim); },
           true);
     }},
    {"scaled_masked_softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) { return masked_cases(d, r, dev, false); }},
    {"scaled_masked_log_softmax", "softmax", false,
     [](DType d, Rng& r, const Device& dev) { return masked_cases(d, r, dev, true); }},
    {"layer_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return row_norm_cases(d, r, dev, false); }},
    {"rms_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return row_norm_cases(d, r, dev, true); }},
    {"group_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return channel_norm_cases(d, r, dev, false); }},
    {"batch_norm", "norm", false,
     [](DType d, Rng& r, const Device& dev) { return channel_norm_cases(d, r, dev, true); }},
};

}  // namespace

std::span<const FamilySpec> softmax_norm_specs() {
  return kSpecs;
}

}  // namespace nbx::conformance
