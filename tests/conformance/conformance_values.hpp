// Seeded input values for the conformance suite. The generator is ours (splitmix64, no
// <random> distributions), so a seed gives the same inputs with every standard library.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "core/dtype.hpp"
#include "core/scalar.hpp"

namespace nbx::conformance {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  // A generator for one (op, dtype, case): the same inputs whichever ops run before it.
  static Rng for_case(std::uint64_t seed, std::string_view op, DType dtype, int extra,
                      int case_index);
  std::uint64_t next();
  double uniform();                                      // [0, 1)
  std::int64_t below(std::int64_t n);                    // [0, n)
  std::int64_t range(std::int64_t lo, std::int64_t hi);  // [lo, hi]

 private:
  std::uint64_t state_;
};

// What an operand's values are for. Every kind mixes in the dtype's special values
// (±0, NaN, ±inf, largest finite, integer extremes) unless its comment says otherwise.
enum class ValueKind {
  kGeneral,          // magnitudes 2^-8 … 2^9, halves and small integers, specials
  kExponent,         // pow exponents: small (|b| <= 5 float, 0 … 10 integer)
  kShiftAmount,      // shift counts: -1 … bits + 1, mostly in range
  kDivisor,          // integers: never 0 (the dedicated fault case plants zeros)
  kDivisorWithZero,  // integers with zeros planted: the division-by-zero fault case
  kWeight,           // lerp weights: -0.5 … 1.5
  kCondition,        // bool masks and conditions (generated as bool whatever the dtype)
  kWideMagnitude,    // magnitudes 2^-30 … 2^30, integers +- 2^-k (lgamma/digamma poles, log1p
                     // near -1, acosh near 1), halves, specials
  kUnitInterval,     // (-1, 1) crowding 0 and +-1 (1 - 2^-k), just outside +-1, specials:
                     // asin, acos, atanh, erfinv, logit
};

// `count` elements of `dtype`, as the tensor's bytes (row-major). Floats are drawn as
// double and rounded to the dtype. No subnormals are drawn: whether a device flushes them
// is not a capability the suite can ask about yet.
std::vector<std::byte> draw_values(Rng& rng, DType dtype, ValueKind kind, std::int64_t count);

// One host scalar of the dtype's kind (bool, integer in range, or a float exactly
// representable in the dtype), so the scalar neither changes the result dtype nor rounds.
Scalar draw_scalar(Rng& rng, DType dtype, ValueKind kind);

}  // namespace nbx::conformance
