// The op families beyond elementwise (reductions, scans, softmax, normalizations, matrix
// products, creation): each op is a list of cases, every case the same seeded values on
// the host reference (contiguous copies) and on the device under test (in the case's
// view). Public API only.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.hpp"
#include "tests/conformance/conformance.hpp"
#include "tests/conformance/conformance_compare.hpp"
#include "tests/conformance/conformance_values.hpp"

namespace nbx::conformance {

using Outputs = std::vector<Tensor>;  // values, and indices where the op gives them
using FamilyCall = std::function<Outputs(std::span<const Tensor> inputs, const Device& device)>;

// How a float result's error grows with k (conformance_tolerance.cpp).
enum class Growth {
  kDtype,         // the dtype's rtol and atol × √k (the default)
  kWideSigned,    // long sums of signed terms in ops whose contract accumulates half types in
                  // float32: the dtype's rounding plus float32's (float64's) tolerance × √k,
                  // so a 10^5-term bfloat16 sum still has a tolerance that can fail
  kWidePositive,  // the same rtol for sums of positive terms (softmax over a long row): no
                  // cancellation, so no atol (outputs near 1/k would pass any value), 2 ulps
  kWideLog,       // the log of such a sum (log_softmax): its relative error, float32's (or
                  // float64's) rtol × √k, is an absolute one; the dtype's rtol for rounding
};

struct FamilyCase {
  std::string name;    // "last-dim", "dim0-of-transposed", "full", "0-size", …
  std::int64_t k = 1;  // terms accumulated per output element: the tolerance grows with it
  bool view = false;   // a strided/broadcast view: --quick keeps it for float32 and int32 only
  std::vector<Tensor> reference, device;
  FamilyCall call;
  bool large = false;  // 10^5-element rows, tiles crossed: full mode only (--quick skips it)
  Growth growth = Growth::kDtype;
  // The op rounds an intermediate to the output dtype on its way (fused attention's softmax
  // weights before P·V, as cuDNN's, FlashAttention's and PyTorch's kernels do; fused_moe's
  // activation before the second GEMM): see with_rounded_intermediate.
  bool rounded_intermediate = false;
  // Set by defer_operands: adds `reference` and `device` when the case runs, so the draws
  // and uploads of a large case cost nothing under --quick.
  std::function<void(FamilyCase&)> build;
};

struct FamilySpec {
  std::string_view name;    // "sum", "norm_p2", "layer_norm", …
  std::string_view family;  // "reduce", "scan", "softmax", "norm", "linalg", "creation",
                            // "gather", "shape", "sort", "index_write", "search",
                            // "attention", "rotary", "loss", "moe"
  bool exact;               // float results exact by definition (selections, triangles)
  std::vector<FamilyCase> (*cases)(DType dtype, Rng& rng, const Device& device);
};

// Every family op, in a fixed order; nullptr for an unknown name.
std::span<const FamilySpec> family_specs();
const FamilySpec* find_family_spec(std::string_view name);
// "elementwise" plus the families above, in order.
std::vector<std::string> family_names();

// The per-family tables (conformance_cases_rows.cpp, …_scan.cpp, …_rownorm.cpp,
// …_linalg.cpp, …_gather.cpp).
std::span<const FamilySpec> reduce_specs();
std::span<const FamilySpec> scan_specs();
std::span<const FamilySpec> softmax_norm_specs();
std::span<const FamilySpec> linalg_creation_specs();
std::span<const FamilySpec> gather_specs();
std::span<const FamilySpec> shape_specs();  // conformance_cases_shape.cpp
std::span<const FamilySpec> sort_specs();
std::span<const FamilySpec> index_write_specs();  // conformance_cases_index_write.cpp
std::span<const FamilySpec> search_specs();       // conformance_cases_index_write.cpp
std::span<const FamilySpec> attention_specs();    // conformance_cases_attention.cpp
std::span<const FamilySpec> rotary_specs();       // conformance_cases_rotary.cpp
std::span<const FamilySpec> loss_specs();         // conformance_cases_loss.cpp
std::span<const FamilySpec> moe_specs();          // conformance_cases_moe.cpp
// The gated products (conformance_cases_glu.cpp), family "elementwise": first in
// family_specs(), so `--families elementwise` runs them beside the table's ops.
std::span<const FamilySpec> glu_specs();

// Seeded values on the host, contiguous: floats of magnitude 2^-6 … 2 with random signs
// (bounded, so sums cannot overflow in one order and not in another), integers in
// -5 … 5 (0 … 5 unsigned), bools. `specials`: floating rows 1, 2 and 3 of a 2-d (or more)
// tensor get a NaN, a +inf, and a -inf next to a +inf.
Tensor draw_tensor(Rng& rng, DType dtype, const Shape& shape, bool specials = false);
// Strictly positive floats 0.25 … 2 (variances), 1 … 3 for integers.
Tensor draw_positive(Rng& rng, DType dtype, const Shape& shape);
// `x` with about a third of its elements set to zero (±0 for floats), so counts of
// non-zeros (count_nonzero, norm p = 0, any, all) depend on the values.
Tensor with_zeros(Rng& rng, const Tensor& x);
// The tolerance of a float result of `growth` (not kDtype) over k terms.
Tolerance growth_tolerance(Growth growth, DType out, std::int64_t k);
// `t` with an absolute allowance of 2 units of roundoff of `out` (2^-11 for float16, 2^-8 for
// bfloat16): an intermediate rounded one way on the device and the other on the host (its
// float32 sums differ in the last bits) moves an output built from terms bounded by 2 (the
// suite's inputs) by up to u × 2, whatever the output's own magnitude.
Tolerance with_rounded_intermediate(Tolerance t, DType out);
// Floats on a grid of halves in -2 … 2 (ties everywhere, ±0 included), integers in -2 … 2
// (0 … 2 unsigned), bools.
Tensor draw_ties(Rng& rng, DType dtype, const Shape& shape);
// Factors whose long products neither vanish nor overflow: floats ±e^u, |u| <= 0.001;
// integers odd in -3 … 3 (1 or 3 unsigned; an even factor would wrap a product to 0); bools
// mostly true. `specials` as draw_tensor's: a float32 product that underflowed before an
// infinity (0 · inf = NaN) would part ways with the host's float64 one.
Tensor draw_near_one(Rng& rng, DType dtype, const Shape& shape, bool specials = false);
// `values` (row-major) as a host tensor of `dtype`.
Tensor tensor_of(const std::vector<double>& values, const Shape& shape, DType dtype);
// Adds `host` to the case: `view` applied on both sides, the reference made contiguous.
void add_operand(FamilyCase& c, const Tensor& host, const Device& device,
                 const std::function<Tensor(const Tensor&)>& view = {});
// Marks `c` large and defers its operands: `operands` runs when the case does, with a
// generator forked from `rng` now, so the values are the same with and without --quick.
void defer_operands(FamilyCase& c, Rng& rng, std::function<void(FamilyCase&, Rng&)> operands);

// The elementwise suite's general values of the dtype (mixed magnitudes, ±0, NaN, ±inf,
// extremes; few ties), as a host tensor.
Tensor general_values(Rng& rng, DType t, const Shape& shape);
// The elements' bits, row-major, as a host tensor of the integer type of their size: results
// that copy elements (gather, sort) are compared as bits too (compare_buffers holds -0 equal
// to +0 and any NaN equal to any NaN).
DType bits_dtype(DType t);
Tensor bits_of(const Tensor& t);

// One cell of a family op on `dut` (conformance_family_runner.cpp).
CellResult run_family_cell(const Device& dut, const FamilySpec& spec, DType dtype,
                           std::uint64_t seed, bool quick);

}  // namespace nbx::conformance
