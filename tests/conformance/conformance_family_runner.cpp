// Runs one cell of a family op: every case on the host reference and on the device with
// the same values, then compares each output. A case both sides reject with
// InvalidArgument (an extremum over a zero-size dim, say) agrees; when the first case is
// rejected alike the op is not defined for the dtype: n/a.
#include <cmath>
#include <cstddef>

#include "core/errors.hpp"
#include "core/ops/linalg.hpp"
#include "tests/conformance/conformance_compare.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> b(static_cast<std::size_t>(t.numel()) * t.itemsize());
  t.contiguous().copy_to_host(b.data());
  return b;
}

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(shape.size()));
  for (int d = shape.size() - 1; d >= 0; --d) {
    idx[static_cast<std::size_t>(d)] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return idx;
}

}  // namespace

CellResult run_family_cell(const Device& dut, const FamilySpec& spec, DType dtype,
                           std::uint64_t seed, bool quick) {
  CellResult r;
  r.op = std::string(spec.name);
  r.dtype = dtype;
  r.seed = seed;
  auto fail = [&](std::string_view layout, std::string why) {
    r.status = CellStatus::kFail;
    r.failed_case = layout;
    r.reason = std::move(why);
    return r;
  };
  Rng rng = Rng::for_case(seed, spec.name, dtype, -1, 0);
  std::vector<FamilyCase> cases;
  try {
    cases = spec.cases(dtype, rng, dut);
  } catch (const Unsupported& e) {
    r.status = CellStatus::kRefused;
    r.reason = e.what();
    return r;
  } catch (const Error& e) {
    return fail("", std::string("could not place the inputs on the device: ") + e.what());
  }
  const Device host = host_device();
  bool refused = false, accepted = false;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    FamilyCase& c = cases[ci];
    if (quick && (c.large || (c.view && dtype != DType::kFloat32 && dtype != DType::kInt32)))
      continue;
    if (c.build) {
      try {
        c.build(c);
      } catch (const Unsupported& e) {
        refused = true;
        if (r.reason.empty()) r.failed_case = c.name, r.reason = e.what();
        continue;
      } catch (const Error& e) {
        return fail(c.name, std::string("could not place the inputs on the device: ") + e.what());
      }
    }
    // A large case's operands go once it is compared: a cell holds one at a time.
    struct Release {
      FamilyCase& c;
      ~Release() {
        if (!c.build) return;
        c.reference.clear();
        c.device.clear();
      }
    } release{c};
    Outputs ref;
    std::string host_rejects;
    try {
      ref = c.call(c.reference, host);
      host.synchronize();
    } catch (const InvalidArgument& e) {
      host_rejects = e.what();
    } catch (const Error& e) {
      return fail(c.name, std::string("the host reference itself failed: ") + e.what());
    }
    Outputs out;
    try {
      out = c.call(c.device, dut);
      dut.synchronize();
    } catch (const Unsupported& e) {
      refused = true;
      if (r.reason.empty()) r.failed_case = c.name, r.reason = e.what();
      continue;
    } catch (const InvalidArgument& e) {
      if (host_rejects.empty())
        return fail(c.name, std::string("the device rejected what the host ran: ") + e.what());
      if (!accepted && ci == 0) {
        r.status = CellStatus::kNotApplicable;
        r.reason = host_rejects;
        return r;
      }
      ++r.cases_run;  // rejected alike
      continue;
    } catch (const Error& e) {
      return fail(c.name, std::string("the device threw where the host did not: ") + e.what());
    }
    if (!host_rejects.empty())
      return fail(c.name, "the host rejects this case (" + host_rejects +
                              ") but the device gave a result.");
    accepted = true;
    ++r.cases_run;
    if (out.size() != ref.size())
      return fail(c.name, "the device gave " + std::to_string(out.size()) + " outputs, the host " +
                              std::to_string(ref.size()) + ".");
    for (std::size_t o = 0; o < ref.size(); ++o) {
      // A float16 product on a device without native bf16 is float32 by design (overflow
      // protection, see plan_matmul); its values must still round to the host's.
      if (spec.family == "linalg" && ref[o].dtype() == DType::kFloat16 &&
          out[o].dtype() == DType::kFloat32 &&
          ops::plan_matmul(DType::kFloat16, dut.capabilities()).out_dtype == DType::kFloat32)
        out[o] = out[o].to(host).to(DType::kFloat16);
      if (out[o].dtype() != ref[o].dtype() || !(out[o].shape() == ref[o].shape()))
        return fail(c.name, "output " + std::to_string(o) + ": " + out[o].str() +
                                " differs in dtype or shape from the host's " + ref[o].str() + ".");
      const std::vector<std::byte> want = bytes_of(ref[o]), got = bytes_of(out[o]);
      Tolerance tol = c.growth == Growth::kDtype || spec.exact
                          ? accumulated_tolerance(spec.exact, ref[o].dtype(), c.k)
                          : growth_tolerance(c.growth, ref[o].dtype(), c.k);
      if (c.rounded_intermediate) tol = with_rounded_intermediate(tol, ref[o].dtype());
      const Comparison cmp =
          compare_buffers(ref[o].dtype(), tol, want.data(), got.data(), ref[o].numel());
      if (cmp.ok) continue;
      r.max_abs_error = cmp.max_abs_error;
      r.max_rel_error = cmp.max_rel_error;
      r.worst = WorstElement{unravel(cmp.worst_index, ref[o].shape()),
                             format_element(cmp.worst_expected),
                             format_element(cmp.worst_actual),
                             {}};
      return fail(c.name, "output " + std::to_string(o) + ": " + std::to_string(cmp.mismatches) +
                              " of " + std::to_string(ref[o].numel()) +
                              " elements outside the tolerance (k = " + std::to_string(c.k) + ").");
    }
  }
  if (refused) r.status = CellStatus::kRefused;
  return r;
}

namespace {

// NaN in row 1, +inf in row 2, -inf next to +inf in row 3 of a float tensor of 4 rows or more.
void plant_specials(Rng& rng, DType dtype, const Shape& shape, std::vector<double>& v) {
  if (!is_floating(dtype) || shape.size() < 2 || shape[0] < 4) return;
  const std::int64_t row = numel(shape) / shape[0];
  if (row < 2) return;
  v[std::size_t(row + rng.below(row))] = NAN;
  v[std::size_t(2 * row + rng.below(row))] = INFINITY;
  v[std::size_t(3 * row)] = -INFINITY;
  v[std::size_t(3 * row + 1 + rng.below(row - 1))] = INFINITY;
}

constexpr double kPowersOfTwo[] = {1.0 / 128, 1.0 / 64, 1.0 / 32, 1.0 / 16,
                                   1.0 / 8,   1.0 / 4,  1.0 / 2,  1.0};

}  // namespace

Tensor draw_tensor(Rng& rng, DType dtype, const Shape& shape, bool specials) {
  const std::int64_t n = numel(shape);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v) {
    if (dtype == DType::kBool) {
      x = double(rng.below(2));
    } else if (is_floating(dtype)) {
      // ±(1 + u) · 2^e, e in -7 … 0, drawn in this order; a power of two scales exactly, as
      // ldexp would, at a fifth of the cost of a 10^5-element case.
      const double sign = rng.below(2) ? -1.0 : 1.0, mantissa = 1.0 + rng.uniform();
      x = sign * mantissa * kPowersOfTwo[rng.range(-7, 0) + 7];
    } else {
      x = double(dtype == DType::kUInt8 ? rng.range(0, 5) : rng.range(-5, 5));
    }
  }
  if (specials) plant_specials(rng, dtype, shape, v);
  return Tensor::from_host(v, shape, host_device()).to(dtype);
}

Tensor draw_positive(Rng& rng, DType dtype, const Shape& shape) {
  const std::int64_t n = numel(shape);
  std::vector<double> v(static_cast<std::size_t>(n));
  for (double& x : v)
    x = is_floating(dtype) ? 0.25 + 1.75 * rng.uniform() : double(rng.range(1, 3));
  return Tensor::from_host(v, shape, host_device()).to(dtype);
}

Tensor with_zeros(Rng& rng, const Tensor& x) {
  std::vector<double> v = x.to(DType::kFloat64).to_host<double>();
  for (double& e : v)
    if (rng.below(3) == 0) e = rng.below(2) ? -0.0 : 0.0;
  return Tensor::from_host(v, x.shape(), host_device()).to(x.dtype());
}

Tensor draw_ties(Rng& rng, DType dtype, const Shape& shape) {
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) {
    if (dtype == DType::kBool) {
      x = double(rng.below(2));
    } else if (!is_floating(dtype)) {
      x = double(dtype == DType::kUInt8 ? rng.range(0, 2) : rng.range(-2, 2));
    } else {
      x = double(rng.range(-4, 4)) / 2;
      if (x == 0 && rng.below(2)) x = -0.0;  // tied zeros of both signs
    }
  }
  return tensor_of(v, shape, dtype);
}

Tensor draw_near_one(Rng& rng, DType dtype, const Shape& shape, bool specials) {
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) {
    const double sign = rng.below(2) ? -1.0 : 1.0;
    if (dtype == DType::kBool)
      x = rng.below(16) != 0;
    else if (is_floating(dtype))
      x = sign * std::exp(0.001 * (2 * rng.uniform() - 1));
    else if (dtype == DType::kUInt8)
      x = rng.below(2) ? 3 : 1;
    else
      x = sign * (rng.below(2) ? 3 : 1);
  }
  if (specials) plant_specials(rng, dtype, shape, v);
  return tensor_of(v, shape, dtype);
}

Tensor tensor_of(const std::vector<double>& values, const Shape& shape, DType dtype) {
  return Tensor::from_host(values, shape, host_device()).to(dtype);
}

Tensor general_values(Rng& rng, DType t, const Shape& shape) {
  if (numel(shape) == 0) return Tensor::empty(shape, t);
  const std::vector<std::byte> b = draw_values(rng, t, ValueKind::kGeneral, numel(shape));
  return Tensor::from_host(b.data(), shape, t);
}

DType bits_dtype(DType t) {
  switch (dtype_size(t)) {
    case 1:
      return DType::kUInt8;
    case 2:
      return DType::kInt16;
    case 4:
      return DType::kInt32;
    default:
      return DType::kInt64;
  }
}

Tensor bits_of(const Tensor& t) {
  if (t.numel() == 0) return Tensor::empty(t.shape(), bits_dtype(t.dtype()));
  std::vector<std::byte> b(static_cast<std::size_t>(t.numel()) * t.itemsize());
  t.contiguous().copy_to_host(b.data());
  return Tensor::from_host(b.data(), t.shape(), bits_dtype(t.dtype()));
}

void defer_operands(FamilyCase& c, Rng& rng, std::function<void(FamilyCase&, Rng&)> operands) {
  c.large = true;
  c.build = [fork = Rng(rng.next()), operands = std::move(operands)](FamilyCase& self) mutable {
    Rng r = fork;  // the same values each time the case is built
    operands(self, r);
  };
}

void add_operand(FamilyCase& c, const Tensor& host, const Device& device,
                 const std::function<Tensor(const Tensor&)>& view) {
  auto apply = [&](const Tensor& t) { return view ? view(t) : t; };
  c.reference.push_back(apply(host).contiguous());
  c.device.push_back(apply(device.is_host() ? host : host.to(device)));
}

}  // namespace nbx::conformance

namespace nbx::conformance {

std::span<const FamilySpec> family_specs() {
  static const std::vector<FamilySpec> all = [] {
    std::vector<FamilySpec> v;
    for (auto part :
         {glu_specs(), reduce_specs(), scan_specs(), softmax_norm_specs(), linalg_creation_specs(),
          gather_specs(), sort_specs(), shape_specs(), index_write_specs(), search_specs(),
          attention_specs(), rotary_specs(), loss_specs(), moe_specs()})
      v.insert(v.end(), part.begin(), part.end());
    return v;
  }();
  return all;
}

const FamilySpec* find_family_spec(std::string_view name) {
  for (const FamilySpec& s : family_specs())
    if (s.name == name) return &s;
  return nullptr;
}

std::vector<std::string> family_names() {
  std::vector<std::string> out{"elementwise"};
  for (const FamilySpec& s : family_specs())
    if (out.back() != s.family) out.emplace_back(s.family);
  return out;
}

}  // namespace nbx::conformance
