// The softmax family and the normalizations. Softmax rows of 65 with NaN and ±inf planted
// (a row with +inf gives NaN, as PyTorch), rows of 1, 7, 1000 and 5000 (every lane-group and
// register width of the GPU and Vulkan kernels), a transposed view, dim 0 of a contiguous
// [300,5] (a strided softmax dim), each dim of a 3-d tensor and the middle dim of a transposed
// one, zero-size, a row longer than any device's shared memory (the looped variant) and a
// 128256-element vocabulary row (full mode only); the masked form with a broadcast mask that
// excludes one whole row, in the one-pass and the looped variant, a 1-d mask, a 2-d mask
// over a 3-d input, and a tensor masked everywhere. Norms with weight and bias, with either
// alone and without, on contiguous inputs and transposed views, rows of 125, and rows of 1,
// 4096 and 128256 (full mode only) around a mean of 1000 (the two-pass variance);
// group_norm with 1, 2, 3, 4 and 6 groups.
#include <optional>

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
  add(one_input("rows-of-1", 1, false, draw_tensor(rng, d, {9, 1}), dev), -1);
  for (std::int64_t len : {7, 1000, 5000}) {
    FamilyCase& c = add(one_input("rows-of-" + std::to_string(len), len, false,
                                  draw_tensor(rng, d, {4, len}, true), dev),
                        -1);
    if (len >= 1000) c.growth = long_row_growth(log);
  }
  add(one_input("dim0-of-300x5", 300, false, draw_tensor(rng, d, {300, 5}), dev), 0);
  for (std::int64_t dim : {0, 1, 2})
    add(one_input("dim" + std::to_string(dim) + "-of-3d",
                  dim == 1   ? 65
                  : dim == 0 ? 3
                             : 5,
                  false, draw_tensor(rng, d, {3, 65, 5}), dev),
        dim);
  add(one_input("dim1-of-transposed-3d", 65, true, draw_tensor(rng, d, {3, 65, 5}), dev,
                [](const Tensor& t) { return t.transpose(0, 2); }),
      1);
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
  // A 1-d mask (every other column) over 300 rows of 5, and a [65,5] mask over [3,65,5]
  // whose first row is excluded.
  std::vector<bool> columns(5), rows(65 * 5);
  for (std::size_t k = 0; k < columns.size(); ++k) columns[k] = k % 2 == 1;
  for (std::size_t k = 0; k < rows.size(); ++k) rows[k] = k < 5 || rng.below(3) == 0;
  add(one_input("masked-1d-mask", 5, false, draw_tensor(rng, d, {300, 5}), dev),
      Tensor::from_host(columns, {5}));
  add(one_input("masked-3d-by-2d-mask", 5, false, draw_tensor(rng, d, {3, 65, 5}), dev),
      Tensor::from_host(rows, {65, 5}));
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

// Which of weight and bias a norm gets.
enum class Affine { kBoth, kWeight, kBias, kNone };

std::optional<Tensor> weight_of(std::span<const Tensor> in, Affine a) {
  if (a == Affine::kBoth || a == Affine::kWeight) return in[1];
  return std::nullopt;
}
std::optional<Tensor> bias_of(std::span<const Tensor> in, Affine a) {
  if (a == Affine::kBoth) return in[2];
  if (a == Affine::kBias) return in[1];
  return std::nullopt;
}

// Values around 1000 (±8, so bfloat16 still has distinct values): a one-pass variance
// (E[x²] - E[x]²) would lose them to cancellation.
Tensor draw_offset(Rng& rng, DType d, const Shape& shape) {
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) x = 1000 + 8 * (2 * rng.uniform() - 1);
  return tensor_of(v, shape, d);
}

// layer_norm / rms_norm over the last dim (65, or the length given), with weight and bias,
// either alone (rms_norm: weight) and without.
std::vector<FamilyCase> row_norm_cases(DType d, Rng& rng, const Device& dev, bool rms) {
  std::vector<FamilyCase> cases;
  auto add = [&](FamilyCase c, std::int64_t len, Affine affine) -> FamilyCase& {
    if (affine != Affine::kNone && affine != Affine::kBias)
      add_operand(c, draw_tensor(rng, d, {len}), dev);
    if (affine != Affine::kNone && affine != Affine::kWeight)
      add_operand(c, draw_tensor(rng, d, {len}), dev);
    c.call = [rms, len, affine](std::span<const Tensor> in, const Device&) -> Outputs {
      if (rms) return {ops::rms_norm(in[0], {len}, weight_of(in, affine))};
      return {ops::layer_norm(in[0], {len}, weight_of(in, affine), bias_of(in, affine))};
    };
    cases.push_back(std::move(c));
    return cases.back();
  };
  const Affine both = rms ? Affine::kWeight : Affine::kBoth;
  add(one_input("last-dim", 65, false, draw_tensor(rng, d, {7, 65}, true), dev), 65, both);
  add(one_input("transposed", 65, true, draw_tensor(rng, d, {65, 7}), dev, kTranspose01), 65, both);
  add(one_input("0-size", 65, false, draw_tensor(rng, d, {0, 65}), dev), 65, both);
  add(one_input("no-affine", 65, false, draw_tensor(rng, d, {2, 3, 65}), dev), 65, Affine::kNone);
  add(one_input("rows-of-125-weight", 125, false, draw_tensor(rng, d, {6, 8, 125}), dev), 125,
      Affine::kWeight);
  if (!rms)
    add(one_input("rows-of-125-bias", 125, false, draw_tensor(rng, d, {6, 8, 125}), dev), 125,
        Affine::kBias);
  for (std::int64_t len : {1, 4096})
    add(one_input("offset-rows-of-" + std::to_string(len), len, false,
                  draw_offset(rng, d, {2, len}), dev),
        len, Affine::kNone)
        .growth = len >= 1000 ? Growth::kWideSigned : Growth::kDtype;
  FamilyCase& vocab = add(FamilyCase{"offset-rows-of-128256", kVocabularyRow, false, {}, {}, {}},
                          kVocabularyRow, Affine::kNone);
  vocab.growth = Growth::kWideSigned;
  defer_operands(vocab, rng, [d, dev = Device(dev)](FamilyCase& self, Rng& r) {
    add_operand(self, draw_offset(r, d, {2, kVocabularyRow}), dev);
  });
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
    Affine affine;
    bool specials;
  } rows[] = {
      {"contiguous", {4, 6, 9}, {}, 3, Affine::kBoth, true},
      {"transposed", {4, 9, 6}, kTranspose12, 3, Affine::kBoth, false},
      // group_norm: an empty spatial dim (N = 0 is covered by batch_norm).
      {"0-size", batch ? Shape{0, 6, 9} : Shape{2, 6, 0}, {}, 3, Affine::kBoth, false},
      {"no-affine", {4, 6, 9}, {}, 2, Affine::kNone, false},
      {"one-group", {3, 6, 9}, {}, 1, Affine::kBoth, false},
      {"group-per-channel", {3, 6, 9}, {}, 6, Affine::kBoth, false},
      {"4-d-two-groups", {2, 6, 3, 5}, {}, 2, Affine::kBoth, false},
      {"8-channels-weight", {6, 8, 125}, {}, 4, Affine::kWeight, false},
      {"8-channels-bias", {6, 8, 125}, {}, 4, Affine::kBias, false},
  };
  for (const auto& row : rows) {
    FamilyCase c = one_input(row.name, 1, bool(row.view),
                             draw_tensor(rng, d, row.base, row.specials), dev, row.view);
    const Shape viewed = c.reference[0].shape();
    const std::int64_t channels = viewed[1];
    std::int64_t spatial = 1;  // of the viewed [N, C, *]
    for (int i = 2; i < viewed.size(); ++i) spatial *= viewed[i];
    c.k = batch ? 1 : (channels / row.groups) * spatial;
    const Affine affine = row.affine;
    if (affine == Affine::kBoth || affine == Affine::kWeight)
      add_operand(c, draw_tensor(rng, d, {channels}), dev);
    if (affine == Affine::kBoth || affine == Affine::kBias)
      add_operand(c, draw_tensor(rng, d, {channels}), dev);
    const std::size_t stats = c.device.size();               // where the running statistics start
    add_operand(c, draw_tensor(rng, d, {channels}), dev);    // running mean
    add_operand(c, draw_positive(rng, d, {channels}), dev);  // running var
    const std::int64_t groups = row.groups;
    c.call = [batch, groups, affine, stats](std::span<const Tensor> in, const Device&) -> Outputs {
      if (batch)
        return {ops::batch_norm(in[0], in[stats], in[stats + 1], weight_of(in, affine),
                                bias_of(in, affine))};
      return {ops::group_norm(in[0], groups, weight_of(in, affine), bias_of(in, affine))};
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
    // softmax(x / 0.3): the scale 1 / T, not a power of two, through every case above.
    {"softmax_with_temperature", "softmax", false,
     [](DType d, Rng& r, const Device& dev) {
       return softmax_cases(
           d, r, dev,
           [](const Tensor& x, std::int64_t dim) {
             return ops::softmax_with_temperature(x, dim, 0.3);
           },
           false);
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
