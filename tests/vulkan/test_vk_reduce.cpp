// The public reductions (core/ops/reduce.hpp) on vulkan:0 against the host reference:
// every op and every dtype the device holds, inner/middle/outer/multi-dim/full reductions
// with and without keepdim, rows of 1, 65 and 100000 elements, NaN and inf rows, ties
// (the first index wins), strided views; and on-device copies at odd sizes and offsets.
#include <cmath>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

// Seeded values on the host as float64, cast to `t` there. `kind`: 0 general (signed,
// with small-integer ties), 1 positive (sums without cancellation), 2 products: floats in
// [0.5, 1.5] (a float32 product of 100 terms must not overflow where float64's does not),
// integers in [-3, 3].
Tensor random_tensor(const Shape& shape, DType t, int kind, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) {
    if (t == DType::kBool) {
      x = rng() % 3 == 0 ? 0 : 1;
    } else if (kind == 2) {
      x = is_floating(t) ? std::uniform_real_distribution<double>(0.5, 1.5)(rng)
                         : double(int(rng() % 7) - (t == DType::kUInt8 ? 0 : 3));
    } else if (!is_floating(t)) {
      const int lo = t == DType::kUInt8 ? 0 : -40;
      x = lo + static_cast<int>(rng() % 80);
      if (kind == 1) x = std::fabs(x) + 1;
    } else if (kind == 1) {
      x = 0.25 + std::uniform_real_distribution<double>(0, 2)(rng);
    } else {
      x = std::normal_distribution<double>(0, 1.5)(rng);
      if (rng() % 8 == 0) x = std::round(x);  // ties for the extrema
    }
  }
  return Tensor::from_host(v, shape).to(t);
}

// Rows of k terms: the dtype's tolerance scaled by sqrt(k) for accumulated results (the host
// accumulates in float64, the device in float32 for float32/half inputs).
struct Tol {
  double rtol = 0, atol = 0;
};
Tol tolerance(DType out, bool accumulated, std::int64_t k) {
  Tol t;
  switch (out) {
    case DType::kFloat16:
      t = {1e-3, 1e-5};
      break;
    case DType::kBFloat16:
      t = {1.6e-2, 1e-5};
      break;
    case DType::kFloat32:
      t = {1.3e-6, 1e-5};
      break;
    case DType::kFloat64:
      t = {1e-7, 1e-7};
      break;
    default:
      return t;
  }
  if (accumulated && k > 1) {
    const double s = std::sqrt(double(k));
    t.rtol *= s;
    t.atol *= s;
  }
  return t;
}

// "" when `got` (on the device) equals `want` (the host's) within `tol`; NaN must meet NaN,
// inf the same inf; integers and bools exactly.
std::string compare(const Tensor& got, const Tensor& want, Tol tol) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype())
    return "shape/dtype " + got.str() + " vs " + want.str();
  const Tensor g = got.to(::nbx::host_device()), w = want;
  if (!is_floating(want.dtype())) {
    const auto a = g.to(DType::kInt64).to_host<std::int64_t>();
    const auto b = w.to(DType::kInt64).to_host<std::int64_t>();
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i])
        return "element " + std::to_string(i) + ": " + std::to_string(a[i]) + " vs host " +
               std::to_string(b[i]);
    return "";
  }
  const auto a = g.to(DType::kFloat64).to_host<double>();
  const auto b = w.to(DType::kFloat64).to_host<double>();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool ok = std::isnan(b[i]) ? std::isnan(a[i])
                    : std::isinf(b[i])
                        ? a[i] == b[i]
                        : std::fabs(a[i] - b[i]) <= tol.atol + tol.rtol * std::fabs(b[i]);
    if (!ok) {
      std::ostringstream s;
      s.precision(17);
      s << "element " << i << ": " << a[i] << " vs host " << b[i];
      return s.str();
    }
  }
  return "";
}

using ops::DimList;

// One public reduction by name on a tensor (any device).
struct Result {
  Tensor values, indices;
};
Result reduce_by_name(const std::string& op, const Tensor& x, const DimList& dims, bool keepdim,
                      double attr) {
  if (op == "sum") return {ops::sum(x, dims, keepdim), {}};
  if (op == "prod") return {ops::prod(x, dims, keepdim), {}};
  if (op == "mean") return {ops::mean(x, dims, keepdim), {}};
  if (op == "amax") return {ops::amax(x, dims, keepdim), {}};
  if (op == "amin") return {ops::amin(x, dims, keepdim), {}};
  if (op == "max" || op == "min") {
    const std::int64_t dim = dims.empty() ? 0 : dims[0];
    const auto r = op == "max" ? ops::max(x, dim, keepdim) : ops::min(x, dim, keepdim);
    return {r.values, r.indices};
  }
  if (op == "argmax" || op == "argmin") {
    std::optional<std::int64_t> dim;
    if (!dims.empty()) dim = dims[0];
    return {op == "argmax" ? ops::argmax(x, dim, keepdim) : ops::argmin(x, dim, keepdim), {}};
  }
  if (op == "var") return {ops::var(x, dims, attr, keepdim), {}};
  if (op == "std") return {ops::stddev(x, dims, attr, keepdim), {}};
  if (op == "norm") return {ops::norm(x, attr, dims, keepdim), {}};
  if (op == "logsumexp") return {ops::logsumexp(x, dims, keepdim), {}};
  if (op == "any") return {ops::any(x, dims, keepdim), {}};
  if (op == "all") return {ops::all(x, dims, keepdim), {}};
  return {ops::count_nonzero(x, dims), {}};
}

bool accumulates(const std::string& op) {
  return op == "sum" || op == "mean" || op == "var" || op == "std" || op == "norm" ||
         op == "logsumexp" || op == "prod";
}

// Runs `op` on the host copy and on vulkan:0; the host's InvalidArgument (an op a dtype
// does not define) must be the device's too. Returns the number of compared cells.
int check(const std::string& op, const Tensor& host_x, const DimList& dims, bool keepdim,
          double attr, const std::string& label, const Tensor* device_x = nullptr) {
  Result want;
  try {
    want = reduce_by_name(op, host_x, dims, keepdim, attr);
  } catch (const InvalidArgument&) {
    const Tensor dx = device_x ? *device_x : host_x.to(vk());
    CHECK_THROWS_AS(reduce_by_name(op, dx, dims, keepdim, attr), InvalidArgument);
    return 0;
  }
  const Tensor dx = device_x ? *device_x : host_x.to(vk());
  const Result got = reduce_by_name(op, dx, dims, keepdim, attr);
  std::int64_t k = 1;  // the row length, for the tolerance
  if (host_x.numel() > 0 && want.values.numel() > 0) k = host_x.numel() / want.values.numel();
  const Tol tol = tolerance(want.values.dtype(), accumulates(op), op == "prod" ? 1 : k);
  INFO(op << " of " << host_x.str() << " over " << dims.size() << " dims, keepdim " << keepdim
          << ", attr " << attr << ": " << label);
  const std::string problem = compare(got.values, want.values, tol);
  CHECK_MESSAGE(problem.empty(), problem);
  if (want.indices.defined()) {
    const std::string p = compare(got.indices, want.indices, {});
    CHECK_MESSAGE(p.empty(), "indices: " << p);
  }
  return 1;
}

const std::vector<std::string> kOps = ops::reduction_op_names();

std::vector<double> attrs_for(const std::string& op) {
  if (op == "norm") return {2, 1, 0, 3, INFINITY, -INFINITY, 0.5};
  if (op == "var" || op == "std") return {1, 0};
  return {0};
}

int kind_for(const std::string& op) {
  if (op == "prod") return 2;
  return accumulates(op) ? 1 : 0;
}

TEST_CASE(
    "every reduction and dtype matches the host over inner, middle, outer, multi and all dims") {
  const Shape shape = {4, 65, 3};
  const std::vector<std::pair<DimList, bool>> cases = {
      {{1}, false}, {{2}, true}, {{0}, false}, {{0, 2}, true}, {{}, false}};
  std::uint64_t seed = 100;
  int cells = 0;
  for (DType t : kAllDTypes) {
    if (!device_holds(t)) continue;
    for (const std::string& op : kOps)
      for (const auto& [dims, keepdim] : cases) {
        if ((op == "max" || op == "min" || op == "argmax" || op == "argmin") && dims.size() > 1)
          continue;
        const Tensor x =
            random_tensor(op == "prod" ? Shape{4, 9, 3} : shape, t, kind_for(op), seed++);
        for (double attr : attrs_for(op))
          cells += check(op, x, dims, keepdim, attr, "seed " + std::to_string(seed - 1));
      }
  }
  MESSAGE(cells << " reductions compared");
}

TEST_CASE("rows of 1, 65 and 100000 elements; many rows and one row") {
  std::uint64_t seed = 900;
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kInt32, DType::kFloat64}) {
    if (!device_holds(t)) continue;
    for (const Shape& shape : {Shape{3000, 1}, Shape{700, 65}, Shape{2, 100000}})
      for (const std::string op :
           {"sum", "mean", "amax", "argmin", "var", "norm", "logsumexp", "count_nonzero", "all"}) {
        const Tensor x = random_tensor(shape, t, kind_for(op), seed++);
        check(op, x, {1}, false, op == "norm" ? 2 : 1, "seed " + std::to_string(seed - 1));
      }
    // The whole tensor as one row.
    const Tensor x = random_tensor({100000}, t, 1, seed++);
    check("sum", x, {}, false, 0, "full");
    check("argmax", x, {}, false, 0, "full");
  }
}

TEST_CASE("NaN and inf rows follow PyTorch: extrema and their indices propagate the first NaN") {
  for (DType t : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    if (!device_holds(t)) continue;
    const double nan = NAN, inf = INFINITY;
    // Row 0 holds NaN twice, row 1 +inf and -inf, row 2 only +inf ties, row 3 -inf and a
    // finite maximum, row 4 two equal maxima (first index), row 5 zeros.
    const std::vector<double> v = {1,   nan, 3, nan, -2,  inf,  1, -inf, 2,    0,
                                   inf, inf, 5, inf, inf, -inf, 7, -inf, 7,    -1,
                                   4,   9,   9, -3,  9,   0,    0, 0,    -0.0, 0};
    const Tensor x = Tensor::from_host(v, {6, 5}).to(t);
    for (const std::string& op : kOps)
      for (double attr : attrs_for(op)) {
        check(op, x, {1}, false, attr, "special rows");
        check(op, x.transpose(0, 1), {0}, true, attr, "special rows, transposed");
      }
  }
}

TEST_CASE("long rows split over workgroups keep NaN, inf and first-index semantics") {
  // Rows of 100000: row 0 plain, row 1 one +inf, row 2 NaN late and a maximum tie, row 3
  // all -inf but one element, row 4 +inf and -inf. The chunks of a split row meet in stage 2.
  for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kFloat64}) {
    if (!device_holds(t)) continue;
    const std::int64_t n = 100000;
    std::mt19937_64 rng(77);
    std::vector<double> v(static_cast<std::size_t>(5 * n));
    for (double& x : v) x = std::uniform_real_distribution<double>(-2, 2)(rng);
    auto at = [&](int r, std::int64_t k) -> double& { return v[std::size_t(r * n + k)]; };
    at(1, 77777) = INFINITY;
    at(2, 99990) = NAN;
    at(2, 1234) = at(2, 80000) = 9;
    for (std::int64_t k = 0; k < n; ++k) at(3, k) = -INFINITY;
    at(3, 50001) = -5;
    at(4, 10) = INFINITY;
    at(4, 90000) = -INFINITY;
    const Tensor x = Tensor::from_host(v, {5, n}).to(t);
    for (const std::string op :
         {"sum", "mean", "amax", "argmax", "max", "min", "var", "std", "logsumexp", "norm"})
      for (double attr :
           op == "norm" ? std::vector<double>{2, INFINITY, 0} : std::vector<double>{1})
        check(op, x, {1}, false, attr, "long special rows");
    // One whole row as a full reduction.
    for (const std::string op : {"sum", "var", "logsumexp", "argmin"})
      check(op, x.narrow(0, 0, 1), {}, false, 1, "one long row");
  }
}

TEST_CASE("strided views reduce without a copy") {
  std::uint64_t seed = 3000;
  for (DType t : {DType::kFloat32, DType::kInt16, DType::kFloat16}) {
    if (!device_holds(t)) continue;
    const Tensor base = random_tensor({6, 40, 12}, t, 1, seed++);
    const Tensor dbase = base.to(vk());
    // Permuted, sliced with a step, and narrowed at an offset: the same views on both.
    const Tensor hv[] = {base.permute({2, 0, 1}), base.slice(1, 3, 37, 3), base.narrow(2, 5, 6)};
    const Tensor dv[] = {dbase.permute({2, 0, 1}), dbase.slice(1, 3, 37, 3), dbase.narrow(2, 5, 6)};
    for (int i = 0; i < 3; ++i)
      for (const std::string op : {"sum", "amax", "argmax", "max", "var", "count_nonzero"})
        for (const DimList& dims : {DimList{1}, DimList{0, 2}, DimList{}}) {
          if ((op == "argmax" || op == "max") && dims.size() != 1) continue;
          check(op, hv[i], dims, false, 1, "view " + std::to_string(i), &dv[i]);
        }
  }
}

TEST_CASE("a dtype the device lacks is refused by name") {
  for (DType t : {DType::kFloat64, DType::kInt64, DType::kFloat16}) {
    if (device_holds(t)) continue;
    const Tensor x = Tensor::zeros({4}, DType::kFloat32, vk());
    CHECK_THROWS_AS(ops::sum(x, {}, false, t), Unsupported);
  }
}

TEST_CASE("on-device copies at odd sizes and offsets match the source bytes") {
  BackendDevice& dev = vulkan_device();
  std::mt19937_64 rng(11);
  std::vector<std::uint8_t> src(70000);
  for (auto& b : src) b = static_cast<std::uint8_t>(rng());
  DeviceMemory s = dev.allocate(src.size()), d = dev.allocate(src.size());
  dev.copy_from_host(s, 0, src.data(), src.size());
  for (auto [so, dof, n] : {std::tuple<std::size_t, std::size_t, std::size_t>{0, 0, 65536},
                            {16, 48, 4097},
                            {3, 3, 1000},
                            {4, 8, 777},
                            {1, 2, 65001},
                            {5, 0, 1},
                            {0, 7, 15},
                            {13, 29, 60003},
                            {0, 0, 70000}}) {
    CAPTURE(so);
    CAPTURE(dof);
    CAPTURE(n);
    std::vector<std::uint8_t> before(src.size(), 0xa5), after(src.size());
    dev.copy_from_host(d, 0, before.data(), before.size());
    dev.copy_on_device(d, dof, s, so, n);
    dev.synchronize();
    dev.copy_to_host(after.data(), d, 0, after.size());
    std::vector<std::uint8_t> want = before;
    std::copy(src.begin() + long(so), src.begin() + long(so + n), want.begin() + long(dof));
    CHECK(after == want);
  }
  // Two ranges of one allocation.
  dev.copy_on_device(s, 39999, s, 1, 30001);
  dev.synchronize();
  std::vector<std::uint8_t> after(src.size());
  dev.copy_to_host(after.data(), s, 0, after.size());
  CHECK(std::equal(after.begin() + 39999, after.end(), src.begin() + 1));
  CHECK(std::equal(after.begin(), after.begin() + 39999, src.begin()));
  dev.free(s);
  dev.free(d);
  // Strided views become contiguous on the device (core/ops/copy.cpp: an elementwise copy).
  const Tensor x = random_tensor({33, 17}, DType::kFloat32, 0, 5).to(vk());
  const std::uint64_t launches = x.device().context().backend_device().launches();
  const Tensor c = x.transpose(0, 1).contiguous();
  CHECK(x.device().context().backend_device().launches() == launches + 1);
  CHECK(compare(c, x.to(::nbx::host_device()).transpose(0, 1).contiguous(), {}).empty());
}

}  // namespace
}  // namespace nbx::vktest
