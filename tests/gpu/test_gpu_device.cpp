// The CUDA/HIP device through the BackendDevice API: properties, copies through the staging
// buffers, out-of-memory, the fault channel, malformed launches, and 64-bit indexing.
#include <doctest/doctest.h>

#include <cstdlib>
#include <numeric>
#include <random>

#include "core/errors.hpp"
#include "core/half.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

BackendDevice& gpu() {
  return *devices().gpu[0].device;
}

TEST_CASE("properties come from the runtime") {
  const DeviceProperties& p = gpu().properties();
  CHECK_FALSE(p.name.empty());
  CHECK(p.arch.rfind(backend_under_test() == "cuda" ? "sm_" : "gfx", 0) == 0);
  CHECK(p.total_memory > 0);
  CHECK(p.compute_units > 0);
  REQUIRE(p.subgroup_size.has_value());
  CHECK((*p.subgroup_size == 32 || *p.subgroup_size == 64));
  CHECK(p.max_threads_per_block.value_or(0) >= 256);
  CHECK(p.shared_memory_per_block.value_or(0) >= 32 * 1024);
  CHECK(p.shared_memory_per_block_optin.value_or(0) >= p.shared_memory_per_block.value_or(0));
  CHECK(p.l2_cache_bytes.value_or(0) > 0);
  CHECK(p.fp64.value_or(false));
  CHECK(gpu().offers(nbx::KernelFamily::kElementwise));
  CHECK_FALSE(gpu().offers(nbx::KernelFamily::kTimestamp));
  MESSAGE(p.name << " " << p.arch << ", " << p.compute_units << " units, warp " << *p.subgroup_size
                 << ", " << p.driver);
}

TEST_CASE("copies through the staging buffers keep every byte, at any offset") {
  // 20 MiB + 123 crosses several 8 MiB staging slots and ends mid-slot.
  const std::size_t n = (std::size_t(20) << 20) + 123;
  std::vector<unsigned char> src(n), back(n, 0);
  std::mt19937 rng(7);
  for (auto& b : src) b = static_cast<unsigned char>(rng());
  BackendDevice& d = gpu();
  DeviceMemory a = d.allocate(n + 16), b = d.allocate(n + 16);
  d.copy_from_host(a, 7, src.data(), n);
  d.copy_on_device(b, 3, a, 7, n);
  d.copy_to_host(back.data(), b, 3, n);
  CHECK(back == src);
  // A host buffer may be reused as soon as copy_from_host returns.
  std::vector<unsigned char> small = {1, 2, 3, 4, 5};
  d.copy_from_host(a, 0, small.data(), small.size());
  small.assign(5, 0);
  d.copy_to_host(small.data(), a, 0, 5);
  CHECK(small == std::vector<unsigned char>{1, 2, 3, 4, 5});
  d.free(a);
  d.free(b);
  const MemoryInfo info = d.memory_info();
  CHECK(info.total > 0);
  CHECK(info.free <= info.total);
}

TEST_CASE("an allocation larger than the device is OutOfMemory, and the device carries on") {
  BackendDevice& d = gpu();
  const std::uint64_t huge = d.properties().total_memory * 4;
  try {
    d.allocate(huge);
    FAIL("allocating " << huge << " bytes succeeded");
  } catch (const OutOfMemory& e) {
    CHECK(e.requested() == huge);
    MESSAGE(std::string(e.what()));
  }
  DeviceMemory m = d.allocate(1024);
  CHECK(bool(m));
  d.free(m);
}

Case integer_division(int op, DType t, std::vector<std::int64_t> divisors) {
  Case c;
  c.op = op;
  c.compute = t;
  const std::int64_t n = std::int64_t(divisors.size());
  c.sizes = {n};
  c.out.dtype = t;
  c.out.strides = {1};
  c.out.storage.assign(std::size_t(n) * dtype_size(t), std::byte{0});
  Operand a, b;
  a.dtype = b.dtype = t;
  a.strides = b.strides = {1};
  a.storage.resize(c.out.storage.size());
  b.storage.resize(c.out.storage.size());
  for (std::int64_t i = 0; i < n; ++i) {
    put_element(a.storage, t, i, 0, 100 + i);
    put_element(b.storage, t, i, 0, divisors[std::size_t(i)]);
  }
  c.in = {a, b};
  return c;
}

TEST_CASE("integer division by zero is a DeviceFault at synchronize, and the device stays usable") {
  for (int op : {abi::kOp_floor_divide, abi::kOp_remainder})
    for (DType t : {DType::kInt32, DType::kInt64, DType::kUInt8}) {
      CAPTURE(op);
      CAPTURE(dtype_name(t));
      std::vector<std::int64_t> divisors(3000, 3);
      divisors[5] = 0;
      divisors[2999] = 0;
      const Case faulty = integer_division(op, t, divisors);
      for (Devices::Variant& v : devices().gpu) {
        try {
          run_case(*v.device, faulty);
          FAIL("no fault was reported on " << v.name);
        } catch (const DeviceFault& e) {
          CHECK((e.position() == 5 || e.position() == 2999));
          CHECK(e.op() == (op == abi::kOp_floor_divide ? "floor_divide" : "remainder"));
          // The record carries the dividend (as stored: uint8 values wrap).
          CHECK(e.index() == element_as_int(faulty.in[0].storage, t, e.position()));
        }
        // The record was cleared: a clean launch reports nothing.
        std::vector<std::int64_t> ok(64, -3);
        const Case clean = integer_division(op, t, ok);
        CHECK(compare_outputs(clean, run_case(*devices().host, clean), run_case(*v.device, clean))
                  .empty());
      }
    }
}

TEST_CASE("malformed launches are refused before they reach the GPU") {
  std::vector<std::int64_t> divisors(16, 2);
  Case c = integer_division(abi::kOp_floor_divide, DType::kInt32, divisors);
  c.sizes = {17};  // one element past the buffers
  CHECK_THROWS_AS(run_case(gpu(), c), InvalidArgument);
  c.sizes = {16};
  c.in[1].offset = -1;
  CHECK_THROWS_AS(run_case(gpu(), c), InvalidArgument);
  c.in[1].offset = 0;
  c.op = abi::kOp_bitwise_and;
  c.compute = DType::kFloat32;
  CHECK_THROWS_AS(run_case(gpu(), c), InvalidArgument);
  KernelLaunch bad;
  // A well-formed timestamp launch, refused by name: CUDA/HIP time with events.
  const abi::TimestampParams slot{0};
  const DeviceMemory slots = gpu().allocate(8);
  const KernelBuffer slot_buffer[] = {{slots, true}};
  bad.family = nbx::KernelFamily::kTimestamp;
  bad.buffers = slot_buffer;
  bad.params = std::as_bytes(std::span<const abi::TimestampParams>(&slot, 1));
  CHECK_THROWS_AS(gpu().launch(bad), Unsupported);
  bad.buffers = {};
  gpu().free(slots);
  bad.family = nbx::KernelFamily::kElementwise;
  bad.params = {};
  CHECK_THROWS_AS(gpu().launch(bad), InvalidArgument);  // empty parameter block
}

// 2^31 + 4096 elements: positions and offsets past 2^31 must not wrap. Opt in with
// NBX_TEST_GPU_LARGE=1 (about 11 GB of device memory and a few seconds).
TEST_CASE("views of more than 2^31 elements index with 64 bits") {
  if (!std::getenv("NBX_TEST_GPU_LARGE")) {
    MESSAGE("set NBX_TEST_GPU_LARGE=1 to run");
    return;
  }
  const std::int64_t cols = (std::int64_t(1) << 30) + 2048, n = 2 * cols;
  BackendDevice& d = gpu();
  SUBCASE("uint8, broadcast row, generic kernel") {
    std::vector<std::uint8_t> a(static_cast<std::size_t>(n)), b(static_cast<std::size_t>(cols)),
        out(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) a[std::size_t(i)] = std::uint8_t(i * 7);
    for (std::int64_t j = 0; j < cols; ++j) b[std::size_t(j)] = std::uint8_t(j * 13 + 5);
    DeviceMemory da = d.allocate(a.size()), db = d.allocate(b.size()),
                 dout = d.allocate(out.size());
    d.copy_from_host(da, 0, a.data(), a.size());
    d.copy_from_host(db, 0, b.data(), b.size());
    abi::ElementwiseParams p{};
    p.op = abi::kOp_add, p.num_inputs = 2, p.ndim = 2, p.numel = n;
    p.compute_dtype = p.out.dtype = p.in[0].dtype = p.in[1].dtype = std::int32_t(DType::kUInt8);
    p.sizes[0] = 2, p.sizes[1] = cols;
    p.attrs[0] = {2.0, 2};
    p.out.strides[0] = p.in[0].strides[0] = cols;
    p.out.strides[1] = p.in[0].strides[1] = p.in[1].strides[1] = 1;
    const KernelBuffer bufs[] = {{dout, true}, {da, false}, {db, false}};
    d.launch({nbx::KernelFamily::kElementwise, bufs,
              std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1))});
    d.synchronize();
    d.copy_to_host(out.data(), dout, 0, out.size());
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < n; ++i)
      if (out[std::size_t(i)] != std::uint8_t(a[std::size_t(i)] + 2 * b[std::size_t(i % cols)]))
        ++bad;
    CHECK(bad == 0);
    d.free(da), d.free(db), d.free(dout);
  }
  SUBCASE("bfloat16, contiguous, vectorised fast path") {
    const std::int64_t m = (std::int64_t(1) << 31) + 1000;  // with a tail
    // Small integers and halves are exact in bfloat16: a = i % 64, b = i % 7,
    // a + 1.5 b = the table below, bit for bit.
    std::uint16_t a_bits[64], b_bits[7], sum_bits[64][7];
    for (int i = 0; i < 64; ++i) a_bits[i] = double_to_bf16_bits(i);
    for (int j = 0; j < 7; ++j) b_bits[j] = double_to_bf16_bits(j);
    for (int i = 0; i < 64; ++i)
      for (int j = 0; j < 7; ++j) sum_bits[i][j] = double_to_bf16_bits(i + 1.5 * j);
    std::vector<std::uint16_t> a(static_cast<std::size_t>(m)), b(static_cast<std::size_t>(m));
    for (std::int64_t i = 0; i < m; ++i) {
      a[std::size_t(i)] = a_bits[i % 64];
      b[std::size_t(i)] = b_bits[i % 7];
    }
    const std::size_t bytes = a.size() * 2;
    DeviceMemory da = d.allocate(bytes), db = d.allocate(bytes), dout = d.allocate(bytes);
    d.copy_from_host(da, 0, a.data(), bytes);
    d.copy_from_host(db, 0, b.data(), bytes);
    abi::ElementwiseParams p{};
    p.op = abi::kOp_add, p.num_inputs = 2, p.ndim = 1, p.numel = m, p.contiguous = 1;
    p.compute_dtype = std::int32_t(DType::kFloat32);
    p.out.dtype = p.in[0].dtype = p.in[1].dtype = std::int32_t(DType::kBFloat16);
    p.sizes[0] = m;
    p.attrs[0] = {1.5, 1};
    p.out.strides[0] = p.in[0].strides[0] = p.in[1].strides[0] = 1;
    const KernelBuffer bufs[] = {{dout, true}, {da, false}, {db, false}};
    d.launch({nbx::KernelFamily::kElementwise, bufs,
              std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1))});
    d.synchronize();
    d.copy_to_host(a.data(), dout, 0, bytes);  // a's memory now holds the result
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < m; ++i)
      if (a[std::size_t(i)] != sum_bits[i % 64][i % 7]) ++bad;
    CHECK(bad == 0);
    d.free(da), d.free(db), d.free(dout);
  }
}

}  // namespace
}  // namespace nbx::gputest
