// Shared by the Vulkan tests: the host and vulkan:0 devices, raw operands of any dtype,
// one elementwise launch run on both, and the per-dtype comparison of the results.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::vktest {

// Opened once per process; vk_test_main.cpp exits 77 before any test when there is none.
BackendDevice& vulkan_device();
BackendDevice& host_device();
// vulkan:0 through the public API (nbx::open), opened once per process.
const Device& vk();
// Whether vulkan:0's capabilities hold dtype `t` (float64, int64, float16 are optional).
bool device_holds(DType t);

// Values of one dtype as raw little-endian bytes.
struct Raw {
  DType dtype = DType::kFloat32;
  std::vector<std::byte> bytes;
  std::size_t count() const { return bytes.size() / dtype_size(dtype); }
};

double element_as_double(const Raw& r, std::size_t i);
std::int64_t element_as_int(const Raw& r, std::size_t i);
void set_element(Raw& r, std::size_t i, double v, std::int64_t iv);

// What a random operand holds.
enum class Values {
  kGeneral,   // floats ~ N(0, 3) with ±0, NaN, ±inf sprinkled; integers over the full range
  kSmall,     // floats ~ N(0, 1.5), no specials; integers in [-20, 20] (within uint8: [0, 20])
  kNonZero,   // like kGeneral, but integers never 0 (divisors)
  kShift,     // integers in [-3, 70] (shift amounts)
  kExponent,  // integers in [-2, 12]
  kCast,      // floats spanning every integer range, with specials; integers full range
};
Raw random_raw(DType t, std::size_t n, Values kind, std::mt19937_64& rng);

// One input: a tensor (raw + view) or a host scalar.
struct Input {
  Raw raw;
  std::int64_t offset = 0;
  std::vector<std::int64_t> strides;
  bool scalar = false;
  abi::ScalarValue value{0, 0};
};

struct Launch {
  abi::ElementwiseParams params{};
  std::vector<Input> inputs;
  Raw out;  // initial contents of the output buffer (its dtype and size)
};

// A launch of `op` over `sizes` with contiguous output; inputs and views are the caller's.
Launch make_launch(std::int32_t op, DType out, DType compute, std::vector<std::int64_t> sizes);

// Runs the launch on `dev` and returns the whole output buffer afterwards.
Raw run_on(BackendDevice& dev, const Launch& l);

// Compares two outputs with the team's per-dtype tolerances; returns "" or the first
// mismatch as a sentence.
std::string compare(const Raw& got, const Raw& want, const Raw* input0 = nullptr);

}  // namespace nbx::vktest
