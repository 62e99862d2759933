// The Vulkan backend through the BackendDevice seam: reported properties, memory and
// copies, batched dependent launches, the integer-division fault channel, refusals,
// and the GPU timestamp kernel.
#include <cmath>
#include <numeric>
#include <vector>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {

TEST_CASE("properties are the runtime's answers") {
  const DeviceProperties& p = vulkan_device().properties();
  CHECK(!p.name.empty());
  CHECK(p.pci_vendor_id != 0);
  CHECK(p.vulkan_driver_id != 0);
  CHECK(!p.arch.empty());
  REQUIRE(p.subgroup_size.has_value());
  CHECK(*p.subgroup_size >= 1);
  CHECK(!p.subgroup_sizes.empty());
  CHECK(p.max_threads_per_block.value_or(0) >= 128);
  CHECK(p.shared_memory_per_block.value_or(0) >= 16384);
  CHECK(p.max_push_constant_bytes.value_or(0) >= 128);
  CHECK(p.fp64.has_value());
  CHECK(p.bf16.value_or(false));
  CHECK(p.extra.count("subgroup_ops") == 1);
  CHECK(p.extra.count("memory_heap0") == 1);
  CHECK(p.total_memory > 0);
  if (p.vulkan_driver_id == 13) {  // VK_DRIVER_ID_MESA_LLVMPIPE
    CHECK(p.arch == "llvmpipe");
    CHECK(p.extra.at("zero_copy") == "yes");
  }
  CHECK(vulkan_device().display_name().rfind("vulkan:0 (", 0) == 0);
}

TEST_CASE("allocations round-trip bytes at any offset, across blocks") {
  BackendDevice& dev = vulkan_device();
  std::mt19937_64 rng(7);
  std::vector<DeviceMemory> live;
  for (std::size_t bytes : {1ul, 3ul, 256ul, 4097ul, 1ul << 20, 9ul << 20, 40ul << 20}) {
    CAPTURE(bytes);
    std::vector<std::uint8_t> data(bytes), back(bytes, 0);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng() | 1);
    DeviceMemory m = dev.allocate(bytes);
    REQUIRE(m);
    dev.copy_from_host(m, 0, data.data(), bytes);
    dev.copy_to_host(back.data(), m, 0, bytes);
    CHECK(back == data);
    if (bytes > 8) {  // a sub-range at an odd offset
      std::vector<std::uint8_t> part(bytes / 2);
      dev.copy_to_host(part.data(), m, 3, part.size());
      CHECK(std::equal(part.begin(), part.end(), data.begin() + 3));
    }
    live.push_back(m);
  }
  // Device-to-device copy between two allocations, then free everything in another order.
  std::vector<std::uint8_t> a(1000), back(1000);
  std::iota(a.begin(), a.end(), 1);
  DeviceMemory x = dev.allocate(1000), y = dev.allocate(2000);
  dev.copy_from_host(x, 0, a.data(), 1000);
  dev.copy_on_device(y, 999, x, 0, 1000);
  dev.copy_to_host(back.data(), y, 999, 1000);
  CHECK(back == a);
  CHECK_THROWS_AS(dev.copy_on_device(y, 0, y, 10, 100), InvalidArgument);
  dev.free(x);
  dev.free(y);
  for (std::size_t i = 0; i < live.size(); i += 2) dev.free(live[i]);
  for (std::size_t i = 1; i < live.size(); i += 2) dev.free(live[i]);
  const MemoryInfo mi = dev.memory_info();
  CHECK(mi.total > 0);
  CHECK(mi.free <= mi.total);
}

TEST_CASE("a chain of 1500 dependent launches spans several batches and stays ordered") {
  BackendDevice& dev = vulkan_device();
  const std::int64_t n = 1003;
  std::vector<float> init(n);
  for (std::int64_t i = 0; i < n; ++i) init[std::size_t(i)] = float(i % 17) - 8.25f;
  DeviceMemory buf[2] = {dev.allocate(n * 4), dev.allocate(n * 4)};
  dev.copy_from_host(buf[0], 0, init.data(), n * 4);
  Launch l = make_launch(abi::kOp_add, DType::kFloat32, DType::kFloat32, {n});
  abi::ElementwiseParams p = l.params;
  p.num_inputs = 2;
  p.contiguous = 1;
  p.attrs[0] = {1.0, 1};
  p.in[0].dtype = p.in[1].dtype = std::int32_t(DType::kFloat32);
  p.in[0].strides[0] = 1;
  p.in[1].is_scalar = 1;
  p.in[1].scalar = {0.5, 0};
  const int steps = 1500;
  for (int s = 0; s < steps; ++s) {
    const KernelBuffer b[3] = {{buf[(s + 1) % 2], true}, {buf[s % 2], false}, {{}, false}};
    dev.launch({nbx::KernelFamily::kElementwise, b, std::as_bytes(std::span(&p, 1))});
  }
  std::vector<float> out(n);
  dev.copy_to_host(out.data(), buf[steps % 2], 0, n * 4);
  dev.synchronize();
  for (std::int64_t i = 0; i < n; ++i)
    REQUIRE(out[std::size_t(i)] == init[std::size_t(i)] + 750.0f);
  dev.free(buf[0]);
  dev.free(buf[1]);
}

TEST_CASE("integer division by zero raises DeviceFault at synchronize, and the device recovers") {
  BackendDevice& dev = vulkan_device();
  for (std::int32_t op : {abi::kOp_floor_divide, abi::kOp_remainder}) {
    Launch l = make_launch(op, DType::kInt32, DType::kInt32, {64});
    std::mt19937_64 rng(11);
    for (int k = 0; k < 2; ++k) {
      Input x;
      x.raw = random_raw(DType::kInt32, 64, Values::kNonZero, rng);
      x.strides = {1};
      l.inputs.push_back(std::move(x));
    }
    set_element(l.inputs[1].raw, 41, 0, 0);
    try {
      run_on(dev, l);
      FAIL("no DeviceFault");
    } catch (const DeviceFault& e) {
      CHECK(e.position() == 41);
      CHECK(e.op() == (op == abi::kOp_floor_divide ? "floor_divide" : "remainder"));
      CHECK(std::string(e.what()).find("division by zero") != std::string::npos);
    }
    set_element(l.inputs[1].raw, 41, 0, 7);
    CHECK(compare(run_on(dev, l), run_on(host_device(), l)).empty());
  }
}

TEST_CASE("refusals and malformed launches are typed errors naming the op") {
  BackendDevice& dev = vulkan_device();
  // More elements than its buffers hold (and than the 32-bit index path takes): refused at
  // the seam, before the backend sees it.
  Launch big = make_launch(abi::kOp_neg, DType::kFloat32, DType::kFloat32, {8});
  std::mt19937_64 rng(3);
  Input x;
  x.raw = random_raw(DType::kFloat32, 8, Values::kSmall, rng);
  x.strides = {1};
  big.inputs.push_back(x);
  big.params.sizes[0] = big.params.numel = std::int64_t(1) << 31;
  try {
    run_on(dev, big);
    FAIL("a 2^31-element launch ran");
  } catch (const InvalidArgument& e) {
    CHECK(e.op() == "neg");
    CHECK(std::string(e.what()).find("beyond its buffer") != std::string::npos);
  }
  Launch bits = make_launch(abi::kOp_bitwise_and, DType::kFloat32, DType::kFloat32, {8});
  x.raw = random_raw(DType::kFloat32, 8, Values::kSmall, rng);
  bits.inputs = {x, x};
  CHECK_THROWS_AS(run_on(dev, bits), InvalidArgument);
  // An operand that would read past its buffer is refused before anything runs.
  Launch past = make_launch(abi::kOp_neg, DType::kFloat32, DType::kFloat32, {8});
  x.offset = 5;
  past.inputs = {x};
  CHECK_THROWS_AS(run_on(dev, past), InvalidArgument);
  const std::byte junk[16] = {};
  CHECK_THROWS_AS(dev.launch({nbx::KernelFamily::kElementwise, {}, junk}), InvalidArgument);
  CHECK_THROWS_AS(dev.launch({nbx::KernelFamily::kTimestamp, {}, junk}), InvalidArgument);
}

TEST_CASE("vk_timestamp brackets work with increasing GPU clock values") {
  BackendDevice& dev = vulkan_device();
  if (!dev.offers(nbx::KernelFamily::kTimestamp)) return;
  DeviceMemory ts = dev.allocate(16);
  const std::int64_t slot0 = 0, slot1 = 1;
  const KernelBuffer b[1] = {{ts, true}};
  dev.launch({nbx::KernelFamily::kTimestamp, b, std::as_bytes(std::span(&slot0, 1))});
  Launch l = make_launch(abi::kOp_sin, DType::kFloat32, DType::kFloat32, {1 << 16});
  std::mt19937_64 rng(5);
  Input x;
  x.raw = random_raw(DType::kFloat32, 1 << 16, Values::kGeneral, rng);
  x.strides = {1};
  l.inputs.push_back(x);
  DeviceMemory in = dev.allocate(x.raw.bytes.size()), out = dev.allocate(x.raw.bytes.size());
  dev.copy_from_host(in, 0, x.raw.bytes.data(), x.raw.bytes.size());
  abi::ElementwiseParams p = l.params;
  p.num_inputs = 1;
  p.contiguous = 1;
  p.in[0].dtype = std::int32_t(DType::kFloat32);
  p.in[0].strides[0] = 1;
  const KernelBuffer eb[2] = {{out, true}, {in, false}};
  dev.launch({nbx::KernelFamily::kElementwise, eb, std::as_bytes(std::span(&p, 1))});
  dev.launch({nbx::KernelFamily::kTimestamp, b, std::as_bytes(std::span(&slot1, 1))});
  std::uint64_t t[2] = {0, 0};
  dev.copy_to_host(t, ts, 0, 16);
  dev.synchronize();
  CHECK(t[1] > t[0]);
  CHECK(t[0] > 0);
  for (DeviceMemory m : {ts, in, out}) dev.free(m);
}

}  // namespace nbx::vktest
