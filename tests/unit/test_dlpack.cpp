// DLPack (core/dlpack.hpp): export shares memory (the first element's address, strides in
// elements, the deleter releasing the storage), import borrows it (offsets, strides, alignment,
// the deleter once after the last view), refusals by name. On every present device: the host,
// CUDA and HIP share memory; Vulkan refuses both ways.
#include <dlpack/dlpack.h>
#include <doctest/doctest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "core/dlpack.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/reduce.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

std::vector<float> iota(int n) {
  std::vector<float> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0.5f);
  return v;
}

// A DLManagedTensor over caller memory whose deleter counts its calls.
struct Lent {
  DLManagedTensor managed{};
  std::vector<std::int64_t> shape, strides;
  int deleted = 0;

  Lent(void* data, DLDataType dtype, std::vector<std::int64_t> sizes,
       std::vector<std::int64_t> steps, std::uint64_t byte_offset = 0,
       DLDevice device = {kDLCPU, 0})
      : shape(std::move(sizes)), strides(std::move(steps)) {
    DLTensor& t = managed.dl_tensor;
    t.data = data;
    t.device = device;
    t.ndim = static_cast<std::int32_t>(shape.size());
    t.dtype = dtype;
    t.shape = shape.data();
    t.strides = strides.empty() ? nullptr : strides.data();
    t.byte_offset = byte_offset;
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensor* m) { ++static_cast<Lent*>(m->manager_ctx)->deleted; };
  }
};

constexpr DLDataType kF32{kDLFloat, 32, 1};

}  // namespace

TEST_CASE("to_dlpack: the first element's address, sizes and strides in elements, the dtype") {
  const Tensor base = Tensor::from_host(iota(24), {4, 6});
  const Tensor view = base.slice(1, 2, 6).transpose(0, 1);  // [4, 4] at offset 2
  DLManagedTensor* m = view.to_dlpack();
  const DLTensor& t = m->dl_tensor;
  CHECK(t.device.device_type == kDLCPU);
  CHECK(t.ndim == 2);
  CHECK(t.shape[0] == 4);
  CHECK(t.shape[1] == 4);
  CHECK(t.strides[0] == 1);
  CHECK(t.strides[1] == 6);
  CHECK(t.byte_offset == 0);
  CHECK(t.dtype.code == kDLFloat);
  CHECK(t.dtype.bits == 32);
  const auto* data = static_cast<const float*>(t.data);
  CHECK(data[0] == 2.5f);               // [0, 0] is base[0, 2]
  CHECK(data[1 * 1 + 2 * 6] == 15.5f);  // [1, 2] is base[2, 3]
  m->deleter(m);
}

TEST_CASE("to_dlpack: bool is kDLBool, bfloat16 kDLBfloat, and the deleter releases the storage") {
  std::weak_ptr<Storage> storage;
  DLManagedTensor* m = nullptr;
  {
    const Tensor flags = Tensor::from_host(std::vector<bool>{true, false, true}, {3});
    storage = flags.storage();
    m = flags.to_dlpack();
  }
  CHECK_FALSE(storage.expired());  // the export alone keeps it
  CHECK(m->dl_tensor.dtype.code == 6);
  CHECK(m->dl_tensor.dtype.bits == 8);
  CHECK(static_cast<const std::uint8_t*>(m->dl_tensor.data)[2] == 1);
  m->deleter(m);
  CHECK(storage.expired());
  DLManagedTensor* b = Tensor::ones({2}, bfloat16).to_dlpack();
  CHECK(b->dl_tensor.dtype.code == kDLBfloat);
  CHECK(b->dl_tensor.dtype.bits == 16);
  CHECK(static_cast<const std::uint16_t*>(b->dl_tensor.data)[1] == 0x3f80);  // 1.0
  b->deleter(b);
}

TEST_CASE("from_dlpack views the lender's memory: strides, byte_offset, writes both ways") {
  std::vector<float> memory = iota(30);
  {
    // [3, 4] with row stride 10, starting at element 2 (byte_offset 8).
    Lent lent(memory.data(), kF32, {3, 4}, {10, 1}, 8);
    const Tensor t = from_dlpack(&lent.managed);
    CHECK(t.shape() == Shape{3, 4});
    CHECK(t.strides() == Strides{10, 1});
    CHECK(t.to_host<float>() == std::vector<float>{2.5f, 3.5f, 4.5f, 5.5f, 12.5f, 13.5f, 14.5f,
                                                   15.5f, 22.5f, 23.5f, 24.5f, 25.5f});
    t.slice(0, 1, 2).fill_(-1.0f);  // a write lands in the lender's memory
    CHECK(memory[12] == -1.0f);
    CHECK(memory[16] == 16.5f);  // outside the view: untouched
    memory[2] = 100.0f;          // and the lender's writes are seen
    CHECK(ops::sum(t.slice(0, 0, 1)).item().to_double() == 100.0 + 3.5 + 4.5 + 5.5);
    CHECK(lent.deleted == 0);
    const Tensor view = t.transpose(0, 1);
    { const Tensor drop = t; }
    CHECK(lent.deleted == 0);  // `view` still holds the memory
  }
}

TEST_CASE("from_dlpack: the deleter runs once, after the last view; never when it refuses") {
  std::vector<float> memory = iota(8);
  Lent lent(memory.data(), kF32, {8}, {});
  {
    const Tensor t = from_dlpack(&lent.managed);
    const Tensor doubled = ops::mul(t, 2.0);  // launches take borrowed memory
    CHECK(doubled.to_host<float>()[3] == 7.0f);
    const Tensor view = t.slice(0, 2, 5);
    CHECK(lent.deleted == 0);
  }
  CHECK(lent.deleted == 1);

  Lent negative(memory.data() + 7, kF32, {8}, {-1});
  CHECK_THROWS_AS(from_dlpack(&negative.managed), InvalidArgument);
  Lent uint16(memory.data(), DLDataType{kDLUInt, 16, 1}, {4}, {});
  CHECK_THROWS_AS(from_dlpack(&uint16.managed), InvalidArgument);
  Lent lanes(memory.data(), DLDataType{kDLFloat, 32, 4}, {2}, {});
  CHECK_THROWS_AS(from_dlpack(&lanes.managed), InvalidArgument);
  Lent misaligned(reinterpret_cast<std::byte*>(memory.data()) + 2, kF32, {2}, {});
  CHECK_THROWS_AS(from_dlpack(&misaligned.managed), InvalidArgument);
  Lent opencl(memory.data(), kF32, {2}, {}, 0, {kDLOpenCL, 0});
  CHECK_THROWS_AS(from_dlpack(&opencl.managed), InvalidArgument);
  Lent vulkan(memory.data(), kF32, {2}, {}, 0, {kDLVulkan, 0});
  CHECK_THROWS_AS(from_dlpack(&vulkan.managed), Unsupported);
  Lent nine(memory.data(), kF32, {1, 1, 1, 1, 1, 1, 1, 1, 1}, {});
  CHECK_THROWS_AS(from_dlpack(&nine.managed), InvalidArgument);
  CHECK_THROWS_AS(from_dlpack(nullptr), InvalidArgument);
  for (const Lent* l : {&negative, &uint16, &lanes, &misaligned, &opencl, &vulkan, &nine})
    CHECK(l->deleted == 0);
}

TEST_CASE("from_dlpack: bool and bfloat16 memory, the lender's address when exported again") {
  std::vector<std::uint8_t> flags = {1, 0, 1, 1};
  std::vector<std::uint16_t> halves = {0x3f80, 0x4000, 0xbf80, 0x4040};  // 1, 2, -1, 3
  Lent lent_flags(flags.data(), DLDataType{6, 8, 1}, {4}, {});           // 6: kDLBool (DLPack 0.8)
  Lent lent_halves(halves.data(), DLDataType{kDLBfloat, 16, 1}, {2, 2}, {1, 2});
  {
    const Tensor b = from_dlpack(&lent_flags.managed);
    CHECK(b.dtype() == DType::kBool);
    CHECK(b.to_host<bool>() == std::vector<bool>{true, false, true, true});
    const Tensor h = from_dlpack(&lent_halves.managed);
    CHECK(h.dtype() == DType::kBFloat16);
    CHECK(h.to(float32).to_host<float>() == std::vector<float>{1, -1, 2, 3});  // column-major
    // No copy on the way in or out: the export points at the lender's own memory.
    DLManagedTensor* again = h.to_dlpack();
    CHECK(again->dl_tensor.data == static_cast<void*>(halves.data()));
    CHECK(again->dl_tensor.strides[0] == 1);
    CHECK(again->dl_tensor.strides[1] == 2);
    again->deleter(again);
    CHECK(lent_halves.deleted == 0);  // `h` still holds it
  }
  CHECK(lent_flags.deleted == 1);
  CHECK(lent_halves.deleted == 1);
}

TEST_CASE("from_dlpack: an address past an alignment boundary keeps kernels aligned") {
  // The borrowed handle is rounded down to 256 bytes; the element offset carries the rest.
  alignas(256) float memory[80];
  std::iota(std::begin(memory), std::end(memory), 0.0f);
  Lent lent(memory + 3, kF32, {64}, {});
  const Tensor t = from_dlpack(&lent.managed);
  CHECK(t.offset() == 3);
  CHECK(ops::sum(t).item().to_double() == (3.0 + 66.0) * 64 / 2);
  Lent empty(memory, kF32, {0, 5}, {});
  CHECK(from_dlpack(&empty.managed).numel() == 0);
}

TEST_CASE("round trips on every present device share memory; Vulkan refuses by name") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor t = Tensor::from_host(iota(12), {3, 4}, d);
    if (d.id().backend == "vulkan") {
      try {
        (void)t.to_dlpack();
        FAIL("a Vulkan tensor was exported");
      } catch (const Unsupported& e) {
        CHECK(e.capability() == "dlpack");
      }
      continue;
    }
    DLManagedTensor* m = t.slice(1, 1, 4).to_dlpack();
    const auto [type, index] = dlpack_device(d);
    CHECK(m->dl_tensor.device.device_type == type);
    CHECK(m->dl_tensor.device.device_id == index);
    const Tensor back = from_dlpack(m);
    CHECK(back.device() == d);
    CHECK(back.to_host<float>() ==
          std::vector<float>{1.5f, 2.5f, 3.5f, 5.5f, 6.5f, 7.5f, 9.5f, 10.5f, 11.5f});
    back.fill_(0.0f);  // one memory: the original sees the write
    CHECK(ops::sum(t).item().to_double() == 0.5 + 4.5 + 8.5);
  }
}

TEST_CASE("from_blob: caller memory as a tensor, released once after the last view") {
  std::vector<std::int32_t> memory = {1, 2, 3, 4, 5, 6};
  int released = 0;
  {
    const Tensor t =
        from_blob(memory.data(), {2, 3}, {1, 2}, int32, host_device(), [&] { ++released; });
    CHECK(t.to_host<std::int32_t>() == std::vector<std::int32_t>{1, 3, 5, 2, 4, 6});
    CHECK(released == 0);
  }
  CHECK(released == 1);
  CHECK_THROWS_AS(from_blob(memory.data(), {2}, {1, 1}, int32, host_device(), [&] { ++released; }),
                  InvalidArgument);
  CHECK_THROWS_AS(from_blob(memory.data(), {2}, {-1}, int32, host_device(), [&] { ++released; }),
                  InvalidArgument);
  CHECK(released == 1);
}
