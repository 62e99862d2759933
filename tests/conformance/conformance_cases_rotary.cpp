// rotary_embedding (the rotary family) × every float dtype against the host: both styles
// (one cell each), full and partial rotary, q and k with different head counts, int32 and
// int64 positions, the cache in float32 or q's dtype, no k, 0 tokens, and strided views run
// IN PLACE on the device (a [B, S, H, D] transpose of [B, H, S, D], heads narrowed out of a
// wider row, transposed positions), so the kernel sees the strides. Other dtypes are
// rejected alike (n/a). Each output is a sum of two products: k = 2.
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "core/ops/rotary.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

using View = std::function<Tensor(const Tensor&)>;

struct Layout {
  Shape q_store, k_store;  // what is drawn
  View q_view, k_view;     // the [..., H, D] views rotated in place (empty: as drawn)
  Shape pos_store;
  View pos_view;
  std::int64_t rotary_dim, max_position;
  DType pos_dtype = DType::kInt64;
  bool cache_in_dtype = false, no_k = false, view = false, large = false;
};

Tensor draw_positions(Rng& rng, const Shape& shape, std::int64_t max_position, DType t) {
  std::vector<std::int64_t> v(std::size_t(numel(shape)));
  for (std::int64_t& p : v) p = rng.below(max_position);
  return Tensor::from_host(v, shape, host_device()).to(t);
}

FamilyCase make_case(const char* name, const Layout& l, DType dtype, ops::RotaryStyle style,
                     Rng& rng, const Device& dev) {
  FamilyCase c;
  c.name = name;
  c.k = 2;
  c.view = l.view;
  c.large = l.large;
  add_operand(c, draw_tensor(rng, dtype, l.q_store), dev, l.q_view);
  if (!l.no_k) add_operand(c, draw_tensor(rng, dtype, l.k_store), dev, l.k_view);
  add_operand(c, draw_positions(rng, l.pos_store, l.max_position, l.pos_dtype), dev, l.pos_view);
  const DType cache_dtype = l.cache_in_dtype ? dtype : DType::kFloat32;
  add_operand(c, draw_tensor(rng, cache_dtype, {l.max_position, l.rotary_dim}), dev);
  const bool no_k = l.no_k;
  const std::int64_t rotary_dim = l.rotary_dim;
  // In place on the operands (the device's keep their views), returned as they are.
  c.call = [no_k, rotary_dim, style](std::span<const Tensor> in, const Device&) -> Outputs {
    if (no_k) {
      ops::rotary_embedding_(in[0], std::nullopt, in[1], in[2], rotary_dim, style);
      return {in[0]};
    }
    ops::rotary_embedding_(in[0], in[1], in[2], in[3], rotary_dim, style);
    return {in[0], in[1]};
  };
  return c;
}

std::vector<FamilyCase> rotary_cases(ops::RotaryStyle style, DType dtype, Rng& rng,
                                     const Device& dev) {
  const View none = {};
  const View bshd = [](const Tensor& t) { return t.transpose(1, 2); };  // [B, H, S, D] → BSHD
  const View narrow_d = [](const Tensor& t) { return t.narrow(-1, 0, t.shape()[t.dim() - 1] - 4); };
  const View transposed = [](const Tensor& t) { return t.transpose(0, 1); };
  std::vector<FamilyCase> out;
  const auto add = [&](const char* name, const Layout& l) {
    out.push_back(make_case(name, l, dtype, style, rng, dev));
  };
  add("full", {{7, 4, 16}, {7, 2, 16}, none, none, {7}, none, 16, 32});
  add("partial", {{5, 3, 24}, {5, 1, 24}, none, none, {5}, none, 8, 12});
  add("int32-positions", {{6, 2, 8}, {6, 2, 8}, none, none, {6}, none, 8, 40, DType::kInt32});
  add("cache-in-dtype",
      {{4, 2, 12}, {4, 3, 12}, none, none, {4}, none, 12, 9, DType::kInt64, true});
  add("no-k", {{3, 5, 10}, {}, none, none, {3}, none, 6, 7, DType::kInt64, false, true});
  add("0-tokens", {{0, 4, 16}, {0, 2, 16}, none, none, {0}, none, 16, 8});
  Layout strided{{2, 4, 5, 16}, {2, 5, 2, 20}, bshd, narrow_d, {5, 2}, transposed, 10, 11,
                 DType::kInt32};
  strided.view = true;
  add("bshd-strided", strided);
  Layout big{{2, 256, 8, 128}, {2, 256, 2, 128}, none, none, {2, 256}, none, 128, 4096};
  big.large = true;
  add("long", big);
  return out;
}

template <ops::RotaryStyle Style>
std::vector<FamilyCase> cases(DType d, Rng& r, const Device& dev) {
  return rotary_cases(Style, d, r, dev);
}

const FamilySpec kRotarySpecs[] = {
    {"rotary_embedding", "rotary", false, cases<ops::RotaryStyle::kRotateHalf>},
    {"rotary_embedding_interleaved", "rotary", false, cases<ops::RotaryStyle::kInterleaved>},
};

}  // namespace

std::span<const FamilySpec> rotary_specs() {
  return kRotarySpecs;
}

}  // namespace nbx::conformance
