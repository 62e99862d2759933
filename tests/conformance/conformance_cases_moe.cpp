// The MoE ops (family "moe": grouped_matmul on its own kernel family, and the compositions
// moe_route, moe_permute, moe_combine, fused_moe) against the host on every device: sizes that
// are no tile multiple (the CUDA mma variant's 128 x 128 and the tiled variants'), experts
// without rows, int32 and int64 offsets, [E, K, N] weights and strided views, top_k 1 and 2.
// Expert ids and permutations are drawn in range (bad ones are the unit tests' fault cases).
// Other dtypes are rejected alike (n/a).
#include <cstdint>
#include <functional>
#include <numeric>
#include <vector>

#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/moe.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;

// Group offsets over `counts` (some of them zero) as a host tensor of `t`.
Tensor offsets_of(const std::vector<std::int64_t>& counts, DType t) {
  std::vector<double> v{0};
  for (std::int64_t c : counts) v.push_back(v.back() + double(c));
  return tensor_of(v, {std::int64_t(v.size())}, t);
}

struct GemmLayout {
  std::vector<std::int64_t> counts;
  std::int64_t n, k;
  DType offsets = DType::kInt64;
  bool kn = false;       // b drawn as [E, K, N]
  bool strided = false;  // a as every other column of a wider tensor, b as a transposed view
  bool large = false;
};

FamilyCase gemm_case(const char* name, const GemmLayout& l, DType dtype, Rng& rng,
                     const Device& dev) {
  FamilyCase c;
  c.name = name;
  c.k = l.k;
  c.view = l.strided;
  c.large = l.large;
  const std::int64_t rows = std::accumulate(l.counts.begin(), l.counts.end(), std::int64_t(0));
  const std::int64_t experts = std::int64_t(l.counts.size());
  if (l.strided) {
    add_operand(c, draw_tensor(rng, dtype, {rows, 2 * l.k}), dev,
                [k = l.k](const Tensor& t) { return t.slice(1, 0, 2 * k, 2); });
    add_operand(c, draw_tensor(rng, dtype, {experts, l.k, l.n}), dev,
                [](const Tensor& t) { return t.transpose(1, 2); });
  } else {
    add_operand(c, draw_tensor(rng, dtype, {rows, l.k}), dev);
    add_operand(c,
                draw_tensor(rng, dtype, l.kn ? Shape{experts, l.k, l.n} : Shape{experts, l.n, l.k}),
                dev);
  }
  add_operand(c, offsets_of(l.counts, l.offsets), dev);
  const ops::GroupedWeights layout = l.kn ? ops::GroupedWeights::kKN : ops::GroupedWeights::kNK;
  c.call = [layout](std::span<const Tensor> in, const Device&) -> Outputs {
    return {ops::grouped_matmul(in[0], in[1], in[2], layout)};
  };
  return c;
}

std::vector<FamilyCase> grouped_cases(DType dtype, Rng& rng, const Device& dev) {
  std::vector<FamilyCase> out;
  const auto add = [&](const char* name, const GemmLayout& l) {
    out.push_back(gemm_case(name, l, dtype, rng, dev));
  };
  add("experts-some-empty", {{70, 0, 3, 131, 1}, 136, 40});
  add("int32-offsets", {{5, 17, 0, 9}, 24, 16, DType::kInt32});
  add("odd-k", {{33, 0, 12}, 21, 13});
  add("kn-weights", {{20, 7, 0, 30}, 40, 24, DType::kInt64, true});
  add("one-expert", {{45}, 9, 8});
  add("no-rows", {{0, 0, 0}, 16, 8});
  GemmLayout strided{{11, 0, 26}, 18, 16};
  strided.strided = true;
  add("strided-views", strided);
  GemmLayout big{{300, 0, 129, 511, 90}, 264, 256};
  big.large = true;
  add("tiles-crossed", big);
  return out;
}

std::vector<FamilyCase> route_cases(DType dtype, Rng& rng, const Device& dev) {
  std::vector<FamilyCase> out;
  for (std::int64_t top_k : {1, 2, 3}) {
    FamilyCase c;
    c.name = "top" + std::to_string(top_k);
    c.k = 8;
    add_operand(c, draw_tensor(rng, dtype, {57, 8}), dev);
    c.call = [top_k](std::span<const Tensor> in, const Device&) -> Outputs {
      const ops::MoeRouting r = ops::moe_route(in[0], top_k, top_k != 3);
      return {r.weights, r.expert_ids};
    };
    out.push_back(std::move(c));
  }
  return out;
}

// Expert ids in [0, experts) with expert `empty` never drawn, as `t`.
Tensor draw_ids(Rng& rng, std::int64_t tokens, std::int64_t k, std::int64_t experts,
                std::int64_t empty, DType t) {
  std::vector<double> v(std::size_t(tokens * k));
  for (double& x : v) {
    std::int64_t e = rng.below(experts - 1);
    x = double(e >= empty ? e + 1 : e);
  }
  return tensor_of(v, {tokens, k}, t);
}

std::vector<FamilyCase> permute_cases(DType dtype, Rng& rng, const Device& dev) {
  std::vector<FamilyCase> out;
  for (std::int64_t k : {1, 2}) {
    FamilyCase c;
    c.name = "top" + std::to_string(k);
    // int32/int64 ids in range; other dtypes are rejected alike (n/a).
    const bool ids_dtype = dtype == DType::kInt32 || dtype == DType::kInt64;
    const Tensor ids =
        ids_dtype ? draw_ids(rng, 45, k, 7, 4, dtype) : draw_tensor(rng, dtype, {45, k});
    add_operand(c, ids, dev);
    c.call = [](std::span<const Tensor> in, const Device&) -> Outputs {
      const ops::MoePermutation p = ops::moe_permute(in[0], 7);
      return {p.order, p.group_offsets, p.inverse};
    };
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<FamilyCase> combine_cases(DType dtype, Rng& rng, const Device& dev) {
  std::vector<FamilyCase> out;
  for (std::int64_t k : {1, 2}) {
    FamilyCase c;
    c.name = "top" + std::to_string(k);
    c.k = k;
    const std::int64_t tokens = 29, d = 40;
    add_operand(c, draw_tensor(rng, dtype, {tokens * k, d}), dev);
    add_operand(c, draw_tensor(rng, DType::kFloat32, {tokens, k}), dev);
    std::vector<double> perm(std::size_t(tokens * k));
    std::iota(perm.begin(), perm.end(), 0.0);
    for (std::size_t i = perm.size(); i > 1; --i)
      std::swap(perm[i - 1], perm[std::size_t(rng.below(std::int64_t(i)))]);
    add_operand(c, tensor_of(perm, {tokens * k}, DType::kInt64), dev);
    c.call = [](std::span<const Tensor> in, const Device&) -> Outputs {
      return {ops::moe_combine(in[0], in[1], in[2])};
    };
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<FamilyCase> fused_cases(DType dtype, Rng& rng, const Device& dev) {
  std::vector<FamilyCase> out;
  const auto add = [&](const char* name, std::int64_t tokens, std::int64_t d, std::int64_t f,
                       std::int64_t experts, std::int64_t top_k, bool large) {
    FamilyCase c;
    c.name = name;
    c.k = d + f;
    c.large = large;
    c.rounded_intermediate = true;  // gate/up and the activation in the dtype, as PyTorch's
    add_operand(c, draw_tensor(rng, dtype, {tokens, d}), dev);
    // Expert 1 never wins: its logit is far below the others' (an expert without tokens).
    Tensor logits = draw_tensor(rng, DType::kFloat32, {tokens, experts});
    std::vector<double> lv = logits.to(DType::kFloat64).to_host<double>();
    for (std::int64_t t = 0; t < tokens; ++t) lv[std::size_t(t * experts + 1)] = -30;
    add_operand(c, tensor_of(lv, {tokens, experts}, dtype), dev);
    // Weights a quarter of the drawn magnitudes, so the products stay near 1.
    add_operand(c, ops::mul(draw_tensor(rng, dtype, {experts, 2 * f, d}), 0.25), dev);
    add_operand(c, ops::mul(draw_tensor(rng, dtype, {experts, d, f}), 0.25), dev);
    c.call = [top_k](std::span<const Tensor> in, const Device&) -> Outputs {
      return {ops::fused_moe(in[0], in[1], in[2], in[3], top_k)};
    };
    out.push_back(std::move(c));
  };
  add("top1", 61, 48, 40, 6, 1, false);
  add("top2", 61, 48, 40, 6, 2, false);
  add("top2-tiles-crossed", 300, 136, 200, 8, 2, true);
  return out;
}

const FamilySpec kMoeSpecs[] = {
    {"grouped_matmul", "moe", false, grouped_cases}, {"moe_route", "moe", false, route_cases},
    {"moe_permute", "moe", true, permute_cases},     {"moe_combine", "moe", false, combine_cases},
    {"fused_moe", "moe", false, fused_cases},
};

}  // namespace

std::span<const FamilySpec> moe_specs() {
  return kMoeSpecs;
}

}  // namespace nbx::conformance
