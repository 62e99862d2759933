// The helpers of the index-write unit tests (test_index_write*.cpp): tensors from host
// values on a device, values and bytes back, the scatter-mode guard and the refusal check.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/ops/index_write.hpp"
#include "nbx/nbx.hpp"
#include "tests/scatter_mode.hpp"
#include "tests/unit/present_devices.hpp"

namespace nbx::testing::index_write {

using D = std::vector<double>;
using F = std::vector<float>;
using I64 = std::vector<std::int64_t>;
using I32 = std::vector<std::int32_t>;
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();
constexpr DType f32 = DType::kFloat32, f64 = DType::kFloat64, i32 = DType::kInt32,
                i64 = DType::kInt64, b8 = DType::kBool;

// `v` as `t` on `d` (converted on the host first: a device without fp64 still takes it).
inline Tensor on(const D& v, const Shape& s, const Device& d, DType t = f32) {
  return Tensor::from_host(v, s).to(t).to(d);
}
inline Tensor ids(const I64& v, const Shape& s, const Device& d, DType t = i64) {
  return Tensor::from_host(v, s).to(t).to(d);
}
inline Tensor mask(const std::vector<bool>& v, const Shape& s, const Device& d) {
  return Tensor::from_host(v, s).to(d);
}
// A result's values as doubles (through the host: the device may lack fp64).
inline D vals(const Tensor& t) {
  return t.to(host_device()).contiguous().to(f64).to_host<double>();
}
inline I64 ints(const Tensor& t) {
  return t.to(host_device()).contiguous().to(i64).to_host<std::int64_t>();
}
// Equal element by element, NaN equal to NaN.
inline bool same(const D& a, const D& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t k = 0; k < a.size(); ++k)
    if (!(a[k] == b[k] || (std::isnan(a[k]) && std::isnan(b[k])))) return false;
  return true;
}
inline std::vector<std::byte> bytes_of(const Tensor& t) {
  std::vector<std::byte> b(std::size_t(t.numel()) * t.itemsize());
  if (!b.empty()) t.to(host_device()).contiguous().copy_to_host(b.data());
  return b;
}

// Restores the deterministic flag and NBX_SCATTER when a case ends (tests/scatter_mode.hpp).
using ModeGuard = testing::ScatterModeScope;
inline void deterministic(bool on) {
  set_deterministic_algorithms(on);
  unsetenv("NBX_SCATTER");
}

// A throw of InvalidArgument or DeviceFault (a value check PyTorch makes on the host that a
// device may make in its kernel: a negative count, a class past num_classes).
inline bool refused(const std::function<void(void)>& f, const Device& d) {
  try {
    f();
    d.synchronize();
  } catch (const InvalidArgument&) {
    return true;
  } catch (const DeviceFault&) {
    return true;
  }
  return false;
}

}  // namespace nbx::testing::index_write
