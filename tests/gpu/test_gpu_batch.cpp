// Launch batching (kernels/gpu/elementwise_batch.*): small elementwise launches queued into
// one kernel must give the bytes that one launch per op gives, and the host's, when ops
// depend on each other, when a block is freed and handed out again, when one op faults,
// and when a large launch (which takes its own kernel) sits between small ones.
#include <doctest/doctest.h>

#include <cstring>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/variant_plan.hpp"
#include "core/tensor.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

// An operand of a raw launch: a 1-D contiguous view into a buffer, or a scalar.
struct Arg {
  DeviceMemory mem;
  DType dtype = DType::kFloat32;
  std::int64_t offset = 0;
  bool scalar = false;
  abi::ScalarValue value{};
};

Arg scalar(DType t, double f, std::int64_t i) {
  Arg a;
  a.dtype = t, a.scalar = true, a.value = {f, i};
  return a;
}

// Runs the same program of raw launches on any device: owns its buffers.
class Program {
 public:
  explicit Program(BackendDevice& device) : dev_(device) {}
  ~Program() {
    for (DeviceMemory m : owned_) dev_.free(m);
  }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;

  Arg upload(const std::vector<std::byte>& bytes, DType t) {
    Arg a;
    a.mem = dev_.allocate(bytes.size());
    owned_.push_back(a.mem);
    a.dtype = t;
    dev_.copy_from_host(a.mem, 0, bytes.data(), bytes.size());
    return a;
  }
  Arg random(DType t, std::int64_t n, std::uint64_t seed, Role role = Role::kPositive) {
    std::vector<std::byte> bytes(static_cast<std::size_t>(n * dtype_size(t)));
    Generator(seed).fill(bytes, t, n, role);
    return upload(bytes, t);
  }
  // out = op(in…) over n elements; compute dtype `compute`, attrs[0] = `attr0`.
  void op(int code, DType compute, const Arg& out, std::initializer_list<Arg> in, std::int64_t n,
          abi::ScalarValue attr0 = {1.0, 1}) {
    abi::ElementwiseParams p{};
    p.op = code;
    p.num_inputs = static_cast<std::int32_t>(in.size());
    p.ndim = 1;
    p.compute_dtype = static_cast<std::int32_t>(compute);
    p.numel = n;
    p.sizes[0] = n;
    p.contiguous = 1;
    p.attrs[0] = attr0;
    std::vector<KernelBuffer> buffers{{out.mem, true}};
    auto fill = [](abi::ElementwiseOperand& o, const Arg& a) {
      o.offset = a.offset;
      o.strides[0] = a.scalar ? 0 : 1;
      o.dtype = static_cast<std::int32_t>(a.dtype);
      o.is_scalar = a.scalar ? 1 : 0;
      o.scalar = a.value;
    };
    fill(p.out, out);
    int k = 0;
    for (const Arg& a : in) {
      fill(p.in[k++], a);
      buffers.push_back({a.scalar ? DeviceMemory{} : a.mem, false});
    }
    p.variant = ops::elementwise_variant_for(dev_, n);  // batched up to the batch size
    KernelLaunch launch;
    launch.family = nbx::KernelFamily::kElementwise;
    launch.buffers = buffers;
    launch.params = std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1));
    dev_.launch(launch);
  }
  std::vector<std::byte> download(const Arg& a) {
    std::vector<std::byte> bytes(a.mem.bytes);
    dev_.copy_to_host(bytes.data(), a.mem, 0, bytes.size());
    return bytes;
  }
  BackendDevice& device() { return dev_; }

 private:
  BackendDevice& dev_;
  std::vector<DeviceMemory> owned_;
};

// Float results here are exact (add, sub, min, max, halving and casts round once in either
// precision), so bytes are compared, not values within a tolerance.
std::vector<std::vector<std::byte>> dependent_chains(BackendDevice& device) {
  Program pr(device);
  constexpr std::int64_t n = 777;  // not a multiple of any block or vector width
  constexpr int kBuffers = 6;
  std::vector<Arg> f, i;
  for (int b = 0; b < kBuffers; ++b) {
    f.push_back(pr.random(DType::kFloat32, n, 11 + b));
    i.push_back(pr.random(DType::kInt64, n, 31 + b));
  }
  const Arg divisor = pr.random(DType::kInt64, n, 77, Role::kDivisor);
  const Arg wide = pr.random(DType::kFloat64, n, 91);
  const Arg narrow = pr.random(DType::kBFloat16, n, 92);
  // 160 ops, several batches' worth: op k reads what ops k-1 and k-2 wrote and overwrites
  // a buffer that op k-4 read. Float, double and int64 ops alternate within each batch.
  const int float_ops[] = {abi::kOp_add, abi::kOp_sub, abi::kOp_maximum, abi::kOp_minimum};
  const int int_ops[] = {abi::kOp_add, abi::kOp_mul, abi::kOp_floor_divide, abi::kOp_sub};
  for (int k = 0; k < 160; ++k) {
    const Arg &a = f[k % kBuffers], &b = f[(k + 1) % kBuffers], &dst = f[(k + 2) % kBuffers];
    switch (k % 4) {
      case 0:
        pr.op(float_ops[(k / 4) % 4], DType::kFloat32, dst, {a, b}, n);
        break;
      case 1:
        pr.op(abi::kOp_mul, DType::kFloat32, dst, {a, scalar(DType::kFloat32, 0.5, 0)}, n);
        break;
      case 2: {
        const Arg &x = i[k % kBuffers], &y = i[(k + 1) % kBuffers], &out = i[(k + 2) % kBuffers];
        const int code = int_ops[(k / 4) % 4];
        pr.op(code, DType::kInt64, out, {x, code == abi::kOp_floor_divide ? divisor : y}, n);
        break;
      }
      default:
        // float32 → float64, a float64 add, → bfloat16, → float32: every category in a row.
        pr.op(abi::kOp_copy, DType::kFloat64, wide, {a}, n);
        pr.op(abi::kOp_add, DType::kFloat64, wide, {wide, scalar(DType::kFloat64, 0.125, 0)}, n);
        pr.op(abi::kOp_copy, DType::kBFloat16, narrow, {wide}, n);
        pr.op(abi::kOp_copy, DType::kFloat32, dst, {narrow}, n);
        break;
    }
  }
  std::vector<std::vector<std::byte>> out;
  for (int b = 0; b < kBuffers; ++b) out.push_back(pr.download(f[b]));
  for (int b = 0; b < kBuffers; ++b) out.push_back(pr.download(i[b]));
  out.push_back(pr.download(wide));
  out.push_back(pr.download(narrow));
  return out;
}

// A small op writing into a large buffer, a large op (its own kernel) reading all of it,
// then a small op reading the large op's output.
std::vector<std::vector<std::byte>> large_between_small(BackendDevice& device) {
  Program pr(device);
  constexpr std::int64_t big = std::int64_t(1) << 20;
  const Arg a = pr.random(DType::kFloat32, 16, 5), b = pr.random(DType::kFloat32, 16, 6);
  Arg buffer = pr.random(DType::kFloat32, big, 7);
  const Arg doubled = pr.random(DType::kFloat32, big, 8);
  Arg last = pr.random(DType::kFloat32, 16, 9);
  Arg window = buffer;
  window.offset = 1000;
  pr.op(abi::kOp_add, DType::kFloat32, window, {a, b}, 16);
  pr.op(abi::kOp_add, DType::kFloat32, doubled, {buffer, buffer}, big);
  Arg doubled_window = doubled;
  doubled_window.offset = 1000;
  pr.op(abi::kOp_sub, DType::kFloat32, last, {doubled_window, a}, 16);
  return {pr.download(doubled), pr.download(last)};
}

BackendDevice& unbatched() {
  return *devices().gpu[0].device;
}

TEST_CASE("dependent small ops give the same bytes batched, one launch each, and on the host") {
  const auto host = dependent_chains(*devices().host);
  const auto single = dependent_chains(unbatched());
  const auto batched = dependent_chains(*devices().batched);
  REQUIRE(host.size() == batched.size());
  for (std::size_t k = 0; k < host.size(); ++k) {
    CAPTURE(k);
    CHECK(single[k] == host[k]);
    CHECK(batched[k] == host[k]);
  }
}

TEST_CASE("a large launch between small ones sees their writes, and they see its") {
  const auto host = large_between_small(*devices().host);
  const auto batched = large_between_small(*devices().batched);
  CHECK(batched[0] == host[0]);
  CHECK(batched[1] == host[1]);
}

TEST_CASE("freeing a buffer that queued ops use runs them first") {
  BackendDevice& dev = *devices().batched;
  std::vector<float> x(64), y(64);
  for (int k = 0; k < 64; ++k) x[k] = 1.5f + k, y[k] = 0.25f * k - 3.f;
  std::vector<std::byte> xb(256), yb(256);
  std::memcpy(xb.data(), x.data(), 256);
  std::memcpy(yb.data(), y.data(), 256);
  std::vector<std::byte> result;
  {
    Program pr(dev);
    const Arg out = pr.upload(xb, DType::kFloat32);
    {
      Program inputs(dev);  // its buffers are freed while the op reading them is queued
      const Arg a = inputs.upload(xb, DType::kFloat32), b = inputs.upload(yb, DType::kFloat32);
      inputs.op(abi::kOp_mul, DType::kFloat32, out, {a, b}, 64);
    }
    result = pr.download(out);
  }
  std::vector<float> got(64);
  std::memcpy(got.data(), result.data(), 256);
  for (int k = 0; k < 64; ++k) CHECK(got[k] == x[k] * y[k]);
}

TEST_CASE("tensor ops whose blocks the caching allocator hands out again match the host") {
  const Device gpu = open(backend_under_test() + ":0");  // batching on: the default
  const Device host;
  std::vector<float> values(300);
  for (int k = 0; k < 300; ++k) values[k] = 0.5f + 0.03125f * float(k % 37) - (k % 3 ? 0 : 2.f);
  auto run = [&](const Device& d) {
    Tensor x = Tensor::from_host(values, {300}).to(d);
    const Tensor y = Tensor::from_host(values, {300}).to(d);
    // Every temporary dies at once: its block goes back to the pool and the next op's
    // output takes it, while the op that wrote it may still be queued.
    for (int k = 0; k < 200; ++k) x = ops::add(ops::mul(ops::sub(x, y), 0.5), y);
    return x.to_host<float>();
  };
  const std::vector<float> expected = run(host);
  const std::uint64_t hits_before = gpu.memory_stats().cache_hits;
  const std::vector<float> got = run(gpu);
  CHECK(gpu.memory_stats().cache_hits > hits_before + 100);
  CHECK(got == expected);
}

TEST_CASE("an integer division by zero inside a batch is reported, and the batch carries on") {
  for (BackendDevice* dev : {devices().batched.get(), &unbatched()}) {
    Program pr(*dev);
    constexpr std::int64_t n = 100;
    std::vector<std::int64_t> a(n), b(n);
    for (int k = 0; k < n; ++k) a[k] = 3 * k + 7, b[k] = k % 9 + 1;
    b[37] = 0;
    std::vector<std::byte> ab(n * 8), bb(n * 8);
    std::memcpy(ab.data(), a.data(), ab.size());
    std::memcpy(bb.data(), b.data(), bb.size());
    const Arg x = pr.upload(ab, DType::kInt64), d = pr.upload(bb, DType::kInt64);
    const Arg t1 = pr.upload(ab, DType::kInt64), t2 = pr.upload(ab, DType::kInt64),
              t3 = pr.upload(ab, DType::kInt64);
    pr.op(abi::kOp_add, DType::kInt64, t1, {x, x}, n);
    pr.op(abi::kOp_floor_divide, DType::kInt64, t2, {t1, d}, n);
    pr.op(abi::kOp_add, DType::kInt64, t3, {t2, x}, n);
    try {
      dev->synchronize();
      FAIL("no fault was raised");
    } catch (const DeviceFault& e) {
      CHECK(std::string(e.what()).find("floor_divide") != std::string::npos);
      CHECK(std::string(e.what()).find("position 37") != std::string::npos);
    }
    const std::vector<std::byte> out = pr.download(t3);
    std::vector<std::int64_t> got(n);
    std::memcpy(got.data(), out.data(), out.size());
    for (int k = 0; k < n; ++k)
      if (k != 37) CHECK(got[k] == 2 * a[k] / b[k] + a[k]);
    dev->synchronize();  // the fault was reported once
  }
}

}  // namespace
}  // namespace nbx::gputest
