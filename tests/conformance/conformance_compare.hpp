// Comparing a device's result with the host reference: the one tolerance table and the
// element-by-element check. Part of `nbx_conformance`; unit-tested on its own
// (test_conformance_compare.cpp) so the suite cannot silently pass everything.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/dtype.hpp"

namespace nbx::conformance {

// |actual - expected| <= atol + rtol * |expected|, or <= ulps units in the last place of
// the output dtype at |expected|. `exact`: equal values only (integers, bool, and float
// ops whose result is exact by definition, such as floor or maximum).
struct Tolerance {
  double rtol = 0;
  double atol = 0;
  int ulps = 0;
  bool exact = true;
  std::string_view why;  // the reason for a per-op allowance, "" when none
};

// The tolerance for `op`'s results of dtype `out` (the table is in conformance_tolerance.cpp).
Tolerance tolerance_for(std::string_view op, DType out);
// The other families' results: exact ops exactly, else the dtype's tolerance scaled by
// sqrt(k) for k accumulated terms per output element.
Tolerance accumulated_tolerance(bool exact, DType out, std::int64_t k);

// One element decoded from a buffer: floats as double, the rest as int64.
struct Element {
  bool is_float = false;
  double f = 0;
  std::int64_t i = 0;
};
Element load_element(const void* data, DType dtype, std::int64_t index);
std::string format_element(const Element& e);
// The spacing of dtype's values at |x| (its ulp there); 0 for non-float dtypes.
double ulp_at(double x, DType dtype);

struct Comparison {
  bool ok = true;
  std::int64_t mismatches = 0;
  std::int64_t worst_index = -1;  // flat, row-major; -1 when every element matched
  double max_abs_error = 0;       // over mismatching elements (inf for NaN/inf mismatches)
  double max_rel_error = 0;
  Element worst_expected, worst_actual;
};

// Compares `count` elements of dtype `dtype` (both buffers row-major). NaN matches only
// NaN; ±inf only the same infinity; +0 and -0 are equal.
Comparison compare_buffers(DType dtype, const Tolerance& tol, const void* expected,
                           const void* actual, std::int64_t count);

}  // namespace nbx::conformance
