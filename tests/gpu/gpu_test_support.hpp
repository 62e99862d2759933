// Helpers of the CUDA/HIP tests: the devices under test, elementwise cases built from raw
// buffers (so every layout the kernel ABI allows can be written down), seeded random data
// with the awkward values (±0, NaN, ±inf, integer extremes), and the comparison with the
// host reference under the per-dtype tolerances of the conformance suite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/kernel_abi.hpp"

namespace nbx::gputest {

// The backend under test: $NBX_TEST_GPU_BACKEND ("cuda" or "hip"; "cuda" when unset).
std::string backend_under_test();

// The devices the tests compare: the host reference, and device 0 of the backend under
// test opened three times with launch batching off (NBX_GPU_BATCH=0), so each launch takes
// its own kernel — default options, generic kernel only (NBX_GPU_ELEMENTWISE=generic), and
// the 64-wide tile of wavefront-64 GPUs (NBX_GPU_TILE=64) — and once more as users get it,
// small launches queued into one batch kernel (`batched`).
struct Devices {
  // The host device an nbx::Device owns (its kernels take scratch rows from that Device's
  // allocator, BackendDevice::scratch); not owned here.
  BackendDevice* host = nullptr;
  struct Variant {
    std::string name;
    std::unique_ptr<BackendDevice> device;
  };
  std::vector<Variant> gpu;
  std::unique_ptr<BackendDevice> batched;
};
// Opened on first use. Throws Unavailable when the backend has no device (main() checks
// first and exits 77).
Devices& devices();

// A reduction's accumulation and output dtypes for input dtype `t` (the wrapper's rules:
// 16-bit floats accumulate in float32, integer sums and products in int64; index ops and
// counts give int64, any/all bool), for tests that fill abi::ReduceParams by hand.
DType reduce_accumulate_dtype(int op, DType t);
DType reduce_out_dtype(int op, DType t);

// Device 0 opened once per NBX_GPU_ROWS value, for the tests of the contiguous-row kernels
// (reduce, softmax, norm): `general` takes the general kernels for every launch, `fast` the
// row kernels where they apply (the default), `fast_only` refuses a launch they do not
// serve, so a case that passes there ran them. Opened on first use.
struct RowKernelDevices {
  std::unique_ptr<BackendDevice> general, fast, fast_only;
};
RowKernelDevices& row_kernel_devices();
// Device 0 opened with NBX_GPU_ROWS=`value` (the variable is restored afterwards).
std::unique_ptr<BackendDevice> open_with_rows(const char* value);

// An operand of a case: a whole buffer's bytes, and the view the kernel reads.
struct Operand {
  DType dtype = DType::kFloat32;
  bool scalar = false;
  abi::ScalarValue value{};  // when scalar
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::vector<std::byte> storage;
};

struct Case {
  std::string label;  // op, dtypes, layout and seed: printed with every failure
  int op = 0;
  DType compute = DType::kFloat32;
  std::vector<std::int64_t> sizes;
  Operand out;  // storage holds the bytes the buffer starts with
  std::vector<Operand> in;
  abi::ScalarValue attrs[3] = {};
};

abi::ElementwiseParams make_params(const Case& c);

// Allocates the buffers on `device`, uploads, launches "elementwise", synchronises and
// returns the output buffer's bytes. Errors (DeviceFault included) propagate.
std::vector<std::byte> run_case(BackendDevice& device, const Case& c);

// "" when `got` matches `expected` everywhere in the output buffer (elements outside the
// view must be untouched); otherwise a sentence naming the first bad element.
std::string compare_outputs(const Case& c, const std::vector<std::byte>& expected,
                            const std::vector<std::byte>& got);

// Uploads every case, launches them all back to back (so a batching device queues them),
// synchronises once and returns each case's output buffer.
std::vector<std::vector<std::byte>> run_cases_queued(BackendDevice& device,
                                                     const std::vector<Case>& cases);

// Element access on raw buffers.
void put_element(std::vector<std::byte>& buf, DType t, std::int64_t index, double f,
                 std::int64_t i);
double element_as_double(const std::vector<std::byte>& buf, DType t, std::int64_t index);
std::int64_t element_as_int(const std::vector<std::byte>& buf, DType t, std::int64_t index);

// What random values an input gets.
enum class Role {
  kGeneral,    // floats in [-4, 4] with specials; integers small, with extremes
  kDivisor,    // as kGeneral, never an integer 0
  kShift,      // integers in [-1, bits + 1]
  kExponent,   // floats in [-3, 3]; integers in [-2, 8]
  kCondition,  // bool
  kPositive,   // floats in [0.25, 2], integers in [0, 100]: sums without cancellation
};

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}
  // Fills `count` elements of `buf` (dtype t) with values for `role`.
  void fill(std::vector<std::byte>& buf, DType t, std::int64_t count, Role role);
  // One scalar value for the compute dtype.
  abi::ScalarValue scalar(DType compute, Role role);

 private:
  double value(DType t, Role role);
  std::mt19937_64 rng_;
};

}  // namespace nbx::gputest
