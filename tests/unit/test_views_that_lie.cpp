// Issue 15, "views that lie", on every present device (the host, vulkan:0 on llvmpipe …):
// a view is checked against its storage's bytes when it is made — by the constructor and by
// every view-producing op — with one overflow-checked extent (ViewExtent); launch validation
// uses the same extent; the host's scratch comes from the allocator; errors are nbx types.
// meson runs it with NBX_HOST_MEMORY_LIMIT=64M, so the host's out-of-memory paths are exact.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/softmax.hpp"
#include "core/shape.hpp"
#include "core/tensor.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kTwo40 = std::int64_t(1) << 40;

const std::vector<float> kSix = {1, 2, 3, 4, 5, 6};

bool has(const std::exception& e, const std::string& s) {
  return std::string(e.what()).find(s) != std::string::npos;
}
bool has_words(const std::string& message, const std::string& s) {
  const bool found = message.find(s) != std::string::npos;
  if (!found) MESSAGE("\"" << s << "\" not in: " << message);
  return found;
}

// The message of the InvalidArgument `f` throws; FAILs when it throws nothing or another type
// (std::length_error, std::bad_alloc: defect 8).
template <class F>
std::string invalid(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  } catch (const std::exception& e) {
    FAIL("not an InvalidArgument: " << e.what());
  }
  FAIL("accepted");
  return "";
}

// An elementwise neg launch of `in` (sizes, strides, offset as given) into a [4, 3] float32.
void raw_neg(const Device& d, const Tensor& in, std::int64_t offset, std::int64_t stride0) {
  const Tensor out = Tensor::empty({4, 3}, DType::kFloat32, d);
  abi::ElementwiseParams p{};
  p.op = abi::kOp_neg;
  p.num_inputs = 1;
  p.ndim = 2;
  p.compute_dtype = std::int32_t(DType::kFloat32);
  p.numel = 12;
  p.sizes[0] = 4;
  p.sizes[1] = 3;
  p.out.dtype = p.in[0].dtype = std::int32_t(DType::kFloat32);
  p.out.strides[0] = 3;
  p.out.strides[1] = 1;
  p.in[0].offset = offset;
  p.in[0].strides[0] = stride0;
  p.in[0].strides[1] = 1;
  const KernelBuffer buffers[2] = {{out.storage()->memory(), true},
                                   {in.storage()->memory(), false}};
  std::lock_guard lock(d.context().launch_mutex());
  d.context().backend_device().launch(kernel_launch(p, buffers));
  d.context().backend_device().synchronize();
}

}  // namespace

TEST_CASE("ViewExtent: the furthest element without overflow, faults named, fits in elements") {
  using Fault = ViewExtent::Fault;
  const ViewExtent plain(2, {4, 3}, {3, 1});
  CHECK(plain.ok());
  CHECK(plain.last() == 2 + 9 + 2);
  CHECK(plain.fits(14 * 4, 4));
  CHECK_FALSE(plain.fits(13 * 4, 4));
  CHECK(plain.end_bytes(4) == 14 * 4);
  // (4 - 1) · 2^62 wrapped to a small positive step.
  CHECK(ViewExtent(0, {4, 3}, {kMax / 2, 1}).fault() == Fault::kOverflow);
  CHECK(ViewExtent(kMax - 4, {4, 3}, {1, 1}).fault() == Fault::kOverflow);
  CHECK_FALSE(ViewExtent(kMax - 4, {4, 3}, {1, 1}).fits(~std::uint64_t(0), 1));
  // In range as elements, past 2^63 as bytes: fits() compares elements, end_bytes() refuses.
  const ViewExtent high(kMax / 4, {1}, {1});
  CHECK(high.ok());
  CHECK_FALSE(high.fits(1024, 8));
  CHECK_FALSE(high.end_bytes(8).has_value());
  // A size-0 dim touches nothing, whatever the strides; a size-1 dim's stride is never walked.
  CHECK(ViewExtent(7, {0, 5}, {kMax, kMax}).empty());
  CHECK(ViewExtent(7, {0, 5}, {kMax, kMax}).fits(0, 4));
  CHECK(ViewExtent(0, {1, 2}, {kMax, 3}).last() == 3);
  // Negatives are faults even in an empty view, and named.
  CHECK(ViewExtent(0, {0, 3}, {1, -2}).fault() == Fault::kNegativeStride);
  CHECK(ViewExtent(0, {0, 3}, {1, -2}).fault_text() == "a negative stride (-2) in dim 1");
  CHECK(ViewExtent(0, {2, -3}, {3, 1}).fault() == Fault::kNegativeSize);
  CHECK(ViewExtent(-1, {1}, {1}).fault() == Fault::kNegativeOffset);
}

TEST_CASE("a view past its storage is refused when it is made, on every device") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = Tensor::from_host(kSix, {6}, d);
    const auto st = a.storage();
    const auto make = [&](std::int64_t offset, const Shape& shape, const Strides& strides,
                          DType t) {
      return invalid([&] { Tensor(st, offset, shape, strides, t); });
    };
    // Defect 1: a stride of 2^40 on 6 floats read host memory at random.
    CHECK(has_words(make(0, {2, 3}, {kTwo40, 1}, DType::kFloat32), "past the storage"));
    // Defect 2: (4 - 1) · 2^62 wrapped the bounds check; the extent does not.
    CHECK(has_words(make(0, {4, 3}, {kMax / 2, 1}, DType::kFloat32), "past 2^63"));
    // Defect 3: checked against the storage's 24 bytes, not the allocator's 512-byte block.
    REQUIRE(st->memory().bytes > st->bytes());
    CHECK(has_words(make(100, {1}, {1}, DType::kFloat32), "past the storage's 6 elements"));
    CHECK(has_words(make(0, {4}, {1}, DType::kFloat64), "past the storage's 3 elements"));
    CHECK(has_words(make(3, {1}, {1}, DType::kFloat64), "past the storage"));
    // Defect 8: a negative size is an InvalidArgument, not std::length_error.
    CHECK(has_words(make(0, {2, -3}, {3, 1}, DType::kFloat32), "non-negative"));
    CHECK(has_words(make(0, {3}, {-1}, DType::kFloat32), "negative strides"));
    CHECK(has_words(make(-1, {1}, {1}, DType::kFloat32), "offset"));
    // Stride-0 dims cost no memory, but the element count must not wrap.
    CHECK(has_words(make(0, {1LL << 32, 1LL << 32, 1LL << 32}, {0, 0, 0}, DType::kFloat32),
                    "multiply past"));
    // What fits is a view, read back exactly on this device.
    CHECK(Tensor(st, 5, {1}, {1}, DType::kFloat32).to_host<float>() == std::vector<float>{6});
    CHECK(Tensor(st, 0, {3}, {1}, DType::kFloat64).numel() == 3);
    CHECK(Tensor(st, 1000, {0, 4}, {kMax, 1}, DType::kFloat32).numel() == 0);
    CHECK(Tensor(st, 2, {4, 3}, {0, 1}, DType::kFloat32).to_host<float>() ==
          std::vector<float>{3, 4, 5, 3, 4, 5, 3, 4, 5, 3, 4, 5});
  }
}

TEST_CASE("view-producing ops cannot make a lying view either, on every device") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor x = Tensor::from_host(kSix, {2, 3}, d);
    // A step near 2^63 wrapped the slice's length and stride; it keeps one element per row.
    const Tensor first = x.slice(1, 0, 3, kMax);
    CHECK(first.shape() == Shape{2, 1});
    CHECK(first.to_host<float>() == std::vector<float>{1, 4});
    CHECK(x.slice(1, 1, kMax, kMax).to_host<float>() == std::vector<float>{2, 5});
    CHECK(x.slice(0, 0, 2, kMax / 2).to_host<float>() == std::vector<float>{1, 2, 3});
    // start + length wrapped past the dim's end.
    CHECK(has_words(invalid([&] { (void)x.narrow(1, 1, kMax); }), "out of range"));
    CHECK(has_words(invalid([&] { (void)x.slice(0, 0, 1).expand({-2, 3}); }), "non-negative"));
    CHECK(has_words(invalid([&] {
                      (void)x.slice(0, 0, 1).expand({1LL << 32, 1LL << 32, 3});
                    }),
                    "multiply past"));
    // The sizes of a view and a reshape are multiplied without wrapping: (2^62 + 1)^2 wraps
    // to 2^63 + 1 and its square to 1, so 6 · a · a and a^4 "were" 6 and 1 elements.
    const std::int64_t a = (std::int64_t(1) << 62) + 1;
    CHECK(has_words(invalid([&] { (void)x.view({6, a, a}); }), "is invalid for 6"));
    CHECK(has_words(invalid([&] { (void)x.reshape({-1, a, a, a, a}); }), "is invalid for 6"));
    CHECK(has_words(invalid([&] { (void)x.view({kTwo40, kTwo40, 0}); }), "is invalid for 6"));
    // Expanded dims are views of any size; their permutations too.
    const Tensor wide = x.slice(1, 0, 1).expand({2, kTwo40});
    CHECK(wide.numel() == 2 * kTwo40);
    CHECK(wide.strides() == Strides{3, 0});
    CHECK(wide.transpose(0, 1).unsqueeze(0).shape() == Shape{1, kTwo40, 2});
    CHECK(wide.slice(1, kTwo40 - 2, kTwo40).to_host<float>() == std::vector<float>{1, 1, 4, 4});
  }
}

TEST_CASE("ops read the right elements of views whose strides no element walks") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor a = Tensor::from_host(kSix, {6}, d);
    // A stride of 2^50 on a size-1 dim is never walked: a 1 × 2 view of elements 0 and 3.
    const Tensor v(a.storage(), 0, {1, 2}, {std::int64_t(1) << 50, 3}, DType::kFloat32);
    CHECK(ops::neg(v).to_host<float>() == std::vector<float>{-1, -4});
    CHECK(ops::sum(v).item().to_double() == 5.0);
    CHECK(ops::matmul(v, v.transpose(0, 1)).to_host<float>() == std::vector<float>{17});
    const std::vector<float> s = ops::softmax(v, 1).to_host<float>();
    CHECK(s[1] / s[0] == doctest::Approx(std::exp(3.0)).epsilon(1e-5));
    // Every element of a stride-0 view is the one at its offset.
    const Tensor six(a.storage(), 5, {4, 3}, {0, 0}, DType::kFloat32);
    CHECK(ops::neg(six).to_host<float>() == std::vector<float>(12, -6));
  }
}

TEST_CASE("a raw launch whose strides wrap the bounds check is refused by every backend") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Tensor in = Tensor::from_host(kSix, {6}, d);
    CHECK(has_words(invalid([&] { raw_neg(d, in, 0, kMax / 2); }), "past 2^63"));
    CHECK(has_words(invalid([&] { raw_neg(d, in, kMax - 4, 1); }), "past 2^63"));
    CHECK(has_words(invalid([&] { raw_neg(d, in, 1000, 1); }), "beyond its buffer"));
    CHECK_NOTHROW(raw_neg(d, in, 0, 0));  // four reads of the same row
  }
}

TEST_CASE(
    "the host's scratch comes from its allocator: within the cap, OutOfMemory with its figures") {
  REQUIRE_MESSAGE(std::getenv("NBX_HOST_MEMORY_LIMIT"), "run through meson: it sets the cap");
  const Device host = host_device();
  host.empty_cache();
  const Tensor column = Tensor::full({6, 1}, 2.0, DType::kFloat32);
  // Defect 8: a sum over expand({6, 2^40}) asked std::vector for 2^40 values (std::bad_alloc).
  for (const bool mean : {false, true}) {
    CAPTURE(mean);
    try {
      const Tensor e = column.expand({6, kTwo40});
      (void)(mean ? ops::mean(e, {1}) : ops::sum(e, {1}));
      FAIL("accepted");
    } catch (const OutOfMemory& e) {
      const AllocatorStats stats = host.memory_stats();
      CHECK(e.device() == "host");
      CHECK(e.requested() >= std::uint64_t(kTwo40) * sizeof(double));
      CHECK(e.free_bytes() == host.context().backend_device().memory_info().free);
      // The allocator's own figures (the old row scratch reported 0 and 0); the sum's output
      // was held when it threw and has gone back to the pool since.
      CHECK(e.reserved() == stats.reserved);
      CHECK(e.allocated() > stats.allocated);
      CHECK(e.allocated() <= e.reserved());
      CHECK(has(e, "Out of memory on host"));
    }
  }
  // A row past 2^64 bytes of scratch: refused as such, not wrapped to a small request.
  try {
    (void)ops::sum(column.slice(0, 0, 1).expand({1, std::int64_t(1) << 62}));
    FAIL("accepted");
  } catch (const OutOfMemory& e) {
    CHECK(e.requested() == std::numeric_limits<std::uint64_t>::max());
    CHECK(has(e, "2^64 bytes or more"));
  }
  // The scratch counts against the cap beside the tensors: a 2^20-element row (16 MiB of
  // scratch or more) fits the 64 MiB cap alone, not beside 56 MiB of tensors.
  const Tensor row = column.slice(0, 0, 1).expand({1, std::int64_t(1) << 20});
  {
    const Tensor held = Tensor::empty({14 << 20}, DType::kFloat32);
    CHECK_THROWS_AS(ops::sum(row), OutOfMemory);
  }
  CHECK(ops::sum(row).item().to_double() == 2.0 * (1 << 20));
  // Requests whose size class would wrap are refused, not served by an empty block.
  for (std::size_t bytes : {std::numeric_limits<std::size_t>::max(), (std::size_t(1) << 63) + 1}) {
    CAPTURE(bytes);
    CHECK_THROWS_AS(host.context().allocator().allocate(bytes), OutOfMemory);
  }
}

TEST_CASE("a reduction over an expanded 2^40-element row is a typed error on host and Vulkan") {
  for (const Device& d : testing::present_devices()) {
    // A CUDA/HIP device needs no scratch row for it and reduces the 6 · 2^40 stride-0
    // elements for real (the right answer, minutes of GPU time): no error to expect there.
    if (d.id().backend == "cuda" || d.id().backend == "hip") continue;
    CAPTURE(d.str());
    const Tensor e = Tensor::full({6, 1}, 1.0, DType::kFloat32, d).expand({6, kTwo40});
    CHECK_THROWS_AS(ops::sum(e, {1}), Error);
  }
}

TEST_CASE("an undefined tensor has no element count") {
  const Tensor t;
  CHECK(has_words(invalid([&] { (void)t.numel(); }), "undefined"));
  CHECK(has_words(invalid([&] { (void)t.size(0); }), "undefined"));
  CHECK(has_words(invalid([&] { (void)t.to_host<float>(); }), "undefined"));
}
