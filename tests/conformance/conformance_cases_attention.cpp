// scaled_dot_product_attention × every dtype against the host (family "attention"): head dims
// 64, 80, 96, 128 and 256; query lengths 1, 17 and 1000 (full mode); decode shapes (split_kv
// where the device offers it) and prefill ones (flash); causal top-left and
// bottom-right with L != S (bottom-right rows that see no key give zeros); grouped-query
// attention with and without causal; a bool mask excluding a whole row, an additive mask with
// -inf; q, k, v read in the [B, S, H, D] layout through transpose(1, 2); 0-size. Integer and
// bool dtypes are refused alike on both sides (n/a).
#include <cmath>
#include <optional>

#include "core/ops/attention.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;

struct Call {
  bool mask = false;
  bool causal = false;
  bool gqa = false;
  ops::CausalAlignment alignment = ops::CausalAlignment::kTopLeft;
};

// A bool mask [rows, cols] (true takes part) with row `whole_row` excluded, a quarter of the
// rest excluded too.
Tensor bool_mask(Rng& rng, std::int64_t rows, std::int64_t cols, std::int64_t whole_row) {
  std::vector<std::uint8_t> m(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < m.size(); ++i)
    m[i] = !(rng.below(4) == 0 || std::int64_t(i) / cols == whole_row);
  return Tensor::from_host(m.data(), {rows, cols}, DType::kBool);
}

// An additive mask of `dtype`: values in ±1 with a fifth of them -inf.
Tensor additive_mask(Rng& rng, DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) x = rng.below(5) == 0 ? -INFINITY : double(rng.below(9)) / 4.0 - 1.0;
  return Tensor::from_host(v, shape).to(dtype);
}

struct Cases {
  DType dtype;
  Rng& rng;
  const Device& dev;
  std::vector<FamilyCase> cases;

  FamilyCase& add(std::string name, const Shape& q, const Shape& kv, Call call,
                  std::optional<Tensor> mask = {}, const View& view = {}) {
    return add_qkv(std::move(name), q, kv, kv, call, std::move(mask), view);
  }
  FamilyCase& add_qkv(std::string name, const Shape& q, const Shape& k, const Shape& v, Call call,
                      std::optional<Tensor> mask = {}, const View& view = {}) {
    const std::int64_t S = k[k.size() - 2], E = q[q.size() - 1];
    FamilyCase c{std::move(name), std::max<std::int64_t>({S, E, 1}), bool(view), {}, {}, {}};
    add_operand(c, draw_tensor(rng, dtype, q), dev, view);
    add_operand(c, draw_tensor(rng, dtype, k), dev, view);
    add_operand(c, draw_tensor(rng, dtype, v), dev, view);
    if (mask) add_operand(c, *mask, dev);
    call.mask = mask.has_value();
    c.call = [call](std::span<const Tensor> in, const Device&) -> Outputs {
      return {ops::scaled_dot_product_attention(
          in[0], in[1], in[2], call.mask ? std::optional<Tensor>(in[3]) : std::nullopt, call.causal,
          {}, call.gqa, call.alignment)};
    };
    // Scores and weighted sums accumulate in float32 (float64) for every dtype by contract.
    c.growth = Growth::kWideSigned;
    c.rounded_intermediate = true;  // P in the input dtype before P·V (cuDNN, flash_mma)
    cases.push_back(std::move(c));
    return cases.back();
  }
};

std::vector<FamilyCase> attention_cases(DType d, Rng& rng, const Device& dev) {
  Cases a{d, rng, dev, {}};
  const Call plain{}, causal{false, true},
      bottom{false, true, false, ops::CausalAlignment::kBottomRight}, gqa{false, false, true},
      gqa_causal{false, true, true};
  a.add("plain-d64", {2, 3, 17, 64}, {2, 3, 17, 64}, plain);
  a.add("3d-d80-L17-S40", {4, 17, 80}, {4, 40, 80}, plain);
  a.add("causal-d96-L17-S40", {1, 2, 17, 96}, {1, 2, 40, 96}, causal);
  a.add("causal-d96-L40-S17", {1, 2, 40, 96}, {1, 2, 17, 96}, causal);
  a.add("bottom-right-d128-L40-S17", {1, 2, 40, 128}, {1, 2, 17, 128}, bottom);
  a.add("bottom-right-d128-L17-S40", {1, 2, 17, 128}, {1, 2, 40, 128}, bottom);
  a.add("gqa-8-over-2-d64", {2, 8, 17, 64}, {2, 2, 33, 64}, gqa);
  a.add("gqa-causal-d128", {1, 8, 17, 128}, {1, 4, 17, 128}, gqa_causal);
  a.add("bool-mask-row-excluded", {2, 2, 17, 64}, {2, 2, 33, 64}, plain, bool_mask(rng, 17, 33, 5));
  a.add("gqa-bool-mask-per-head", {1, 4, 17, 64}, {1, 2, 33, 64}, gqa,
        bool_mask(rng, 4 * 17, 33, 3).view({4, 17, 33}));
  a.add("additive-mask-batched", {2, 2, 17, 80}, {2, 2, 33, 80}, plain,
        additive_mask(rng, d, {2, 1, 17, 33}));
  a.add("bshd-causal-d64", {2, 4, 17, 64}, {2, 4, 17, 64}, causal, {},
        [](const Tensor& t) { return t.transpose(1, 2).contiguous().transpose(1, 2); });
  // Decode shapes (q_len x group <= 16 rows a kv head) take split_kv where it is offered: one
  // query, grouped queries (8 and 16 rows), causal both ways, [B, S, H, D], chunks of keys
  // that no row sees (top-left causal with a long cache), a value dim unlike the head dim.
  a.add("decode-L1-S1000-d128", {2, 4, 1, 128}, {2, 4, 1000, 128}, plain);
  a.add("decode-gqa-L2-S1000-d64", {2, 8, 2, 64}, {2, 2, 1000, 64}, gqa);
  a.add("decode-gqa-L4-S700-d96-bottom-right", {1, 8, 4, 96}, {1, 2, 700, 96},
        {false, true, true, ops::CausalAlignment::kBottomRight});
  a.add("decode-gqa-L4-S700-d80-top-left", {1, 4, 4, 80}, {1, 1, 700, 80}, gqa_causal);
  a.add("decode-bshd-L3-S513-d64", {2, 4, 3, 64}, {2, 4, 513, 64}, bottom, {},
        [](const Tensor& t) { return t.transpose(1, 2).contiguous().transpose(1, 2); });
  a.add_qkv("decode-L1-S300-d64-v48", {1, 2, 1, 64}, {1, 2, 300, 64}, {1, 2, 300, 48}, plain);
  a.add_qkv("d256-v64-bottom-right", {1, 2, 17, 256}, {1, 2, 40, 256}, {1, 2, 40, 64}, bottom);
  a.add("d256-L17", {1, 2, 17, 256}, {1, 2, 17, 256}, causal);
  a.add("0-size-queries", {2, 0, 64}, {2, 9, 64}, plain);
  a.add("0-size-keys", {2, 5, 64}, {2, 0, 64}, plain);
  // Full mode: a thousand query rows (past a 128-row tile, and 1000 is no multiple of it).
  a.add("L1000-causal-d64", {1, 1, 1000, 64}, {1, 1, 1000, 64}, causal).large = true;
  a.add("L1000-gqa-bottom-right-d32", {1, 2, 1000, 32}, {1, 1, 1100, 32},
        {false, true, true, ops::CausalAlignment::kBottomRight})
      .large = true;
  return std::move(a.cases);
}

}  // namespace

std::span<const FamilySpec> attention_specs() {
  static const FamilySpec specs[] = {
      {"scaled_dot_product_attention", "attention", false, attention_cases},
  };
  return specs;
}

}  // namespace nbx::conformance
