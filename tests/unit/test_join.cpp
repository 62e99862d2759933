// cat and stack through the join family (core/families/join_family.cpp) on every present
// device, against a byte-level reference written here (each input's rows appended in turn):
// more inputs than one launch takes (abi::kJoinMaxInputs), empty and legacy [0] inputs, every
// dtype bit for bit (NaN payloads included), inputs of other dtypes cast beside joined ones,
// strided inputs beside contiguous ones, offsets and row lengths that narrow the copy unit,
// rows longer than a block, cat_out into strided outs, the 0-d refusal, and raw join launches:
// a well-formed one per variant and the misuses every backend refuses alike.
#include <doctest/doctest.h>

#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/families/kernel_family.hpp"
#include "core/ops/explain.hpp"
#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

using Bytes = std::vector<unsigned char>;

// Random bytes for `n` elements of `t` (bool: 0 or 1); floats get any bits, NaNs included,
// since a join copies bits.
Bytes random_bytes(DType t, std::int64_t n, std::mt19937& rng) {
  Bytes b(std::size_t(n) * dtype_size(t));
  for (unsigned char& c : b) c = (unsigned char)(rng() & 0xff);
  if (t == DType::kBool)
    for (unsigned char& c : b) c &= 1;
  return b;
}

// Finite, never-zero values of `t` (inputs read through strided views are first copied by the
// elementwise copy, which need not keep NaN payloads).
Bytes finite_bytes(DType t, std::int64_t n, std::mt19937& rng) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) {
    const int i = int(rng() % 200) - 100;
    x = float(i == 0 ? 1 : i) + (is_floating(t) ? 0.25f : 0.0f);
  }
  const Tensor h = Tensor::from_host(v, {n}, host_device()).to(t);
  Bytes b(std::size_t(n) * dtype_size(t));
  h.copy_to_host(b.data());
  return b;
}

Bytes bytes_of(const Tensor& t) {
  Bytes b(std::size_t(t.numel()) * t.itemsize());
  t.copy_to_host(b.data());
  return b;
}

// torch.cat of contiguous row-major byte arrays along `dim`, by hand.
Bytes cat_reference(const std::vector<Bytes>& in, const std::vector<Shape>& shapes, int dim,
                    std::size_t item) {
  std::int64_t outer = 1, inner = 1;
  const Shape& s0 = shapes[0];
  for (int d = 0; d < dim; ++d) outer *= s0[d];
  for (int d = dim + 1; d < s0.size(); ++d) inner *= s0[d];
  Bytes out;
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::size_t k = 0; k < in.size(); ++k) {
      const std::size_t row = std::size_t(shapes[k][dim] * inner) * item;
      out.insert(out.end(), in[k].begin() + std::ptrdiff_t(o * std::int64_t(row)),
                 in[k].begin() + std::ptrdiff_t((o + 1) * std::int64_t(row)));
    }
  return out;
}

Shape with_dim(Shape s, int dim, std::int64_t n) {
  s[dim] = n;
  return s;
}

bool supports(const Device& d, DType t) {
  try {
    Tensor::empty({1}, t, d);
    return true;
  } catch (const Unsupported&) {
    return false;
  }
}

}  // namespace

TEST_CASE("cat of more inputs than a launch takes, every dtype, bit for bit, along each dim") {
  std::mt19937 rng(20261203);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType t : kAllDTypes) {
      if (!supports(d, t)) continue;
      CAPTURE(dtype_name(t));
      for (int dim : {0, 1, 2}) {
        CAPTURE(dim);
        // 37 inputs (3 launches of up to 16), extents 0..4 along dim: empty ones included.
        std::vector<Bytes> host;
        std::vector<Shape> shapes;
        ops::TensorList parts;
        std::int64_t total = 0;
        for (int k = 0; k < 37; ++k) {
          const Shape s = with_dim(Shape{3, 5, 7}, dim, (k * 7) % 5);
          total += s[dim];
          host.push_back(random_bytes(t, numel(s), rng));
          shapes.push_back(s);
          parts.push_back(Tensor::from_host(host.back().data(), s, t, d));
        }
        const Tensor r = ops::cat(parts, dim);
        CHECK(r.dtype() == t);
        CHECK(r.shape() == with_dim(Shape{3, 5, 7}, dim, total));
        CHECK(bytes_of(r) == cat_reference(host, shapes, dim, dtype_size(t)));
        CHECK(d.context().backend_device().last_launch().family == KernelFamily::kJoin);
      }
    }
  }
}

// Vulkan cuts a launch into dispatches of five inputs and tells its hazard tracker only the span
// of the output each one writes: disjoint spans (cat along dim 0) take no barrier between
// them, but the next op must still wait for all of them — an op that reads too early reads
// unwritten memory here.
TEST_CASE("the next op on the device reads every slice of a cat of many inputs") {
  std::mt19937 rng(31);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (int dim : {0, 1}) {
      CAPTURE(dim);
      ops::TensorList parts;
      std::vector<std::vector<float>> host;
      for (int k = 0; k < 13; ++k) {
        host.emplace_back(std::size_t(257 * 33));
        for (float& x : host.back()) x = value(rng);
        parts.push_back(
            Tensor::from_host(host.back(), dim == 0 ? Shape{257, 33} : Shape{33, 257}, d));
      }
      for (int round = 0; round < 3; ++round) {
        const std::vector<float> got = ops::neg(ops::cat(parts, dim)).to_host<float>();
        REQUIRE(got.size() == std::size_t(13 * 257 * 33));
        // The output's element (i, j) comes from input k at (i', j').
        std::size_t bad = 0;
        const std::int64_t rows = dim == 0 ? 13 * 257 : 33, cols = dim == 0 ? 33 : 13 * 257;
        for (std::int64_t i = 0; i < rows; ++i)
          for (std::int64_t j = 0; j < cols; ++j) {
            const std::int64_t k = dim == 0 ? i / 257 : j / 257;
            const std::int64_t at = dim == 0 ? (i % 257) * 33 + j : i * 257 + j % 257;
            if (got[std::size_t(i * cols + j)] != -host[std::size_t(k)][std::size_t(at)]) ++bad;
          }
        CHECK(bad == 0);
      }
    }
  }
}

TEST_CASE("stack goes through cat: a new dim anywhere, many inputs") {
  std::mt19937 rng(7);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    std::vector<Bytes> host;
    ops::TensorList parts;
    for (int k = 0; k < 20; ++k) {
      host.push_back(finite_bytes(DType::kFloat32, 6, rng));
      parts.push_back(Tensor::from_host(host.back().data(), {2, 3}, DType::kFloat32, d));
    }
    for (int dim : {0, 1, 2}) {
      CAPTURE(dim);
      const Tensor r = ops::stack(parts, dim);
      Shape unit{2, 3};
      unit.insert(dim, 1);
      CHECK(bytes_of(r) == cat_reference(host, std::vector<Shape>(20, unit), dim, 4));
    }
  }
}

TEST_CASE("cat skips legacy [0] inputs, joins 0-size ones and a single input") {
  std::mt19937 rng(11);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Bytes a = finite_bytes(DType::kInt16, 6, rng), b = finite_bytes(DType::kInt16, 4, rng);
    const Tensor ta = Tensor::from_host(a.data(), {3, 2}, DType::kInt16, d);
    const Tensor tb = Tensor::from_host(b.data(), {2, 2}, DType::kInt16, d);
    const Tensor legacy = Tensor::empty({0}, DType::kInt16, d);
    const Tensor r =
        ops::cat({legacy, ta, legacy, Tensor::empty({0, 2}, DType::kInt16, d), tb, legacy}, 0);
    CHECK(r.shape() == Shape{5, 2});
    CHECK(bytes_of(r) == cat_reference({a, b}, {{3, 2}, {2, 2}}, 0, 2));
    CHECK(bytes_of(ops::cat({ta}, 1)) == a);
    CHECK(ops::cat({legacy, legacy}).shape() == Shape{0});
    CHECK(ops::cat({Tensor::empty({0, 2}, DType::kInt16, d), ta.narrow(0, 0, 0)}).shape() ==
          Shape{0, 2});
    // 0-d inputs are refused, as PyTorch ("zero-dimensional tensor cannot be concatenated").
    const Tensor scalar = Tensor::from_host(std::vector<float>{1.0f}, {}, d);
    CHECK_THROWS_AS(ops::cat({scalar, scalar}), InvalidArgument);
    CHECK_THROWS_AS(ops::cat({ta, scalar}), InvalidArgument);
  }
}

TEST_CASE("inputs of other dtypes are cast beside the joined ones, past one launch") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    // 18 float32 inputs of value k + 0.5 with int32 and bool inputs among them: float32 out.
    ops::TensorList parts;
    std::vector<float> expected;
    for (int k = 0; k < 24; ++k) {
      std::vector<float> v(4, float(k) + 0.5f);
      Tensor t = Tensor::from_host(v, {1, 4}, d);
      if (k % 4 == 1) t = Tensor::from_host(std::vector<std::int32_t>(4, k), {1, 4}, d);
      if (k % 4 == 3)
        t = Tensor::from_host(std::vector<float>(4, 1.0f), {1, 4}, d).to(DType::kBool);
      const float value = k % 4 == 1 ? float(k) : k % 4 == 3 ? 1.0f : float(k) + 0.5f;
      for (int i = 0; i < 4; ++i) expected.push_back(value);
      parts.push_back(t);
    }
    const Tensor r = ops::cat(parts, 0);
    CHECK(r.dtype() == DType::kFloat32);
    CHECK(r.to_host<float>() == expected);
  }
}

TEST_CASE("strided inputs (transposed, sliced, broadcast) beside contiguous ones") {
  std::mt19937 rng(13);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType t : {DType::kFloat32, DType::kInt8, DType::kFloat64}) {
      if (!supports(d, t)) continue;
      CAPTURE(dtype_name(t));
      const Bytes a = finite_bytes(t, 12, rng), b = finite_bytes(t, 35, rng),
                  c = finite_bytes(t, 4, rng), e = finite_bytes(t, 8, rng);
      const Tensor ta = Tensor::from_host(a.data(), {4, 3}, t, d).transpose(0, 1);  // [3, 4]
      const Tensor tb = Tensor::from_host(b.data(), {7, 5}, t, d).slice(0, 1, 7, 2).slice(1, 1, 5);
      const Tensor tc = Tensor::from_host(c.data(), {1, 4}, t, d).expand({3, 4});
      const Tensor te = Tensor::from_host(e.data(), {2, 4}, t, d);
      const ops::TensorList parts{ta, te, tb, tc, te};
      std::vector<Bytes> host;
      std::vector<Shape> shapes;
      for (const Tensor& p : parts) host.push_back(bytes_of(p)), shapes.push_back(p.shape());
      CHECK(bytes_of(ops::cat(parts, 0)) == cat_reference(host, shapes, 0, dtype_size(t)));
      // Along dim 1 the rows interleave: [3, 4] transposed beside [3, 4] broadcast.
      CHECK(bytes_of(ops::cat({ta, tc, tb.narrow(0, 0, 3)}, 1)) ==
            cat_reference({bytes_of(ta), bytes_of(tc), bytes_of(tb.narrow(0, 0, 3))},
                          {{3, 4}, {3, 4}, {3, 4}}, 1, dtype_size(t)));
    }
  }
}

TEST_CASE("odd offsets and row lengths narrow the copy unit; long rows cross blocks") {
  std::mt19937 rng(17);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    for (DType t : {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kInt64}) {
      if (!supports(d, t)) continue;
      CAPTURE(dtype_name(t));
      // Narrowed views start at odd elements; rows of 1, 3 and 40961 elements.
      const Bytes big = finite_bytes(t, 3 * 40970, rng);
      const Tensor whole = Tensor::from_host(big.data(), {3, 40970}, t, d);
      const ops::TensorList parts{whole.narrow(1, 1, 3), whole.narrow(1, 5, 40961),
                                  whole.narrow(1, 0, 1), whole.narrow(1, 2, 4)};
      std::vector<Bytes> host;
      std::vector<Shape> shapes;
      for (const Tensor& p : parts) host.push_back(bytes_of(p)), shapes.push_back(p.shape());
      CHECK(bytes_of(ops::cat(parts, 1)) == cat_reference(host, shapes, 1, dtype_size(t)));
      // One long run each (1-d): 100003 elements from an odd offset beside aligned ones.
      const Bytes flat = finite_bytes(t, 200000, rng);
      const Tensor line = Tensor::from_host(flat.data(), {200000}, t, d);
      const ops::TensorList runs{line.narrow(0, 3, 100003), line.narrow(0, 0, 64),
                                 line.narrow(0, 0, 70001)};
      host.clear(), shapes.clear();
      for (const Tensor& p : runs) host.push_back(bytes_of(p)), shapes.push_back(p.shape());
      CHECK(bytes_of(ops::cat(runs, 0)) == cat_reference(host, shapes, 0, dtype_size(t)));
    }
  }
}

TEST_CASE("cat_out writes strided and narrowed outs and keeps cat_out's checks") {
  std::mt19937 rng(19);
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const Bytes a = finite_bytes(DType::kFloat32, 6, rng),
                b = finite_bytes(DType::kFloat32, 9, rng);
    const Tensor ta = Tensor::from_host(a.data(), {2, 3}, DType::kFloat32, d);
    const Tensor tb = Tensor::from_host(b.data(), {3, 3}, DType::kFloat32, d);
    const Bytes want = cat_reference({a, b}, {{2, 3}, {3, 3}}, 0, 4);
    // A transposed out (the strided variant) and a window of a larger tensor at an odd offset
    // (the flat variant with rows apart).
    const Tensor tr = ops::full({3, 5}, 7, DType::kFloat32, d).transpose(0, 1);
    CHECK(ops::cat_out(tr, {ta, tb}, 0).storage() == tr.storage());
    CHECK(bytes_of(tr) == want);
    const Tensor frame = ops::full({7, 4}, 7, DType::kFloat32, d);
    const Tensor window = frame.narrow(0, 1, 5).narrow(1, 1, 3);
    ops::cat_out(window, {ta, tb}, 0);
    CHECK(bytes_of(window) == want);
    const std::vector<float> all = frame.to_host<float>();
    for (int c = 0; c < 4; ++c) CHECK(all[std::size_t(c)] == 7.0f);      // row 0 untouched
    for (int r = 0; r < 7; ++r) CHECK(all[std::size_t(r * 4)] == 7.0f);  // column 0 untouched
    // Along dim 1 into a window: rows of the out 9 apart, the inputs' 3 apart (flat rows).
    const Tensor wide = ops::full({4, 9}, 7, DType::kFloat32, d);
    const Tensor rows = wide.narrow(0, 1, 2).narrow(1, 1, 6);
    ops::cat_out(rows, {ta, tb.narrow(0, 0, 2)}, 1);
    CHECK(bytes_of(rows) ==
          cat_reference({a, Bytes(b.begin(), b.begin() + 24)}, {{2, 3}, {2, 3}}, 1, 4));
    CHECK(wide.to_host<float>()[9] == 7.0f);
    // A widening cast into a float64 out; the lossy direction is refused.
    const Tensor doubles = ops::full({5, 3}, 0, DType::kFloat64, d);
    if (supports(d, DType::kFloat64)) {
      ops::cat_out(doubles, {ta, tb}, 0);
      CHECK(doubles.to(DType::kFloat32).to_host<float>() == ops::cat({ta, tb}).to_host<float>());
    }
    CHECK_THROWS_AS(ops::cat_out(ops::full({5, 3}, 0, DType::kInt32, d), {ta, tb}, 0),
                    InvalidArgument);
    // Inputs that share out's memory are refused.
    const Tensor shared = ops::full({4, 3}, 1, DType::kFloat32, d);
    CHECK_THROWS_AS(ops::cat_out(shared, {shared.narrow(0, 0, 2), shared.narrow(0, 2, 2)}, 0),
                    InvalidArgument);
    // stack_out into a permuted out.
    const Tensor st = ops::full({3, 2, 2}, 7, DType::kFloat32, d).permute({2, 1, 0});  // [2, 2, 3]
    ops::stack_out(st, {ta, tb.narrow(0, 0, 2)}, 0);
    Bytes stacked = a;
    stacked.insert(stacked.end(), b.begin(), b.begin() + 24);
    CHECK(bytes_of(st) == stacked);
  }
}

namespace {

// A join launch of `n` contiguous float32 [2, 4] inputs into [2, 4n] along dim 1 (flat form:
// one row stride per operand) or along dim 0 of a transposed layout (strided).
struct JoinLaunch {
  abi::JoinParams p{};
  std::vector<KernelBuffer> buffers;
  std::vector<Tensor> keep;
};

JoinLaunch join_launch(const Device& d, int n, int variant) {
  JoinLaunch j;
  const Tensor out = Tensor::zeros({2, 4 * n}, DType::kFloat32, d);
  j.keep.push_back(out);
  j.buffers.push_back({out.storage()->memory(), true});
  abi::JoinParams& p = j.p;
  p.op = abi::kJoin_cat;
  p.variant = variant;
  p.dtype = std::int32_t(DType::kFloat32);
  p.ndim = 2;
  p.dim = 1;
  p.count = n;
  p.sizes[0] = 2, p.sizes[1] = 4 * n;
  p.out_strides[0] = 4 * n, p.out_strides[1] = 1;
  for (int k = 0; k < n; ++k) {
    std::vector<float> v(8);
    for (int i = 0; i < 8; ++i) v[std::size_t(i)] = float(100 * k + i + 1);
    const Tensor x = Tensor::from_host(v, {2, 4}, d);
    j.keep.push_back(x);
    j.buffers.push_back({x.storage()->memory(), false});
    p.inputs[k].extent = 4;
    p.inputs[k].at = 4 * k;
    p.inputs[k].strides[0] = 4, p.inputs[k].strides[1] = 1;
  }
  return j;
}

void run(const Device& d, const abi::JoinParams& p, const std::vector<KernelBuffer>& buffers) {
  std::lock_guard lock(d.context().launch_mutex());
  d.context().backend_device().launch(kernel_launch(p, buffers));
  d.context().backend_device().synchronize();
}

}  // namespace

TEST_CASE("raw join launches: each variant runs, malformed blocks are refused alike") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const BackendDevice& bd = d.context().backend_device();
    for (int v : {abi::kJoinFlat, abi::kJoinStrided}) {
      if (!bd.offers(KernelFamily::kJoin, v)) continue;
      JoinLaunch j = join_launch(d, 16, v);
      run(d, j.p, j.buffers);
      CHECK(bd.last_launch().variant == v);
      const std::vector<float> got = j.keep[0].to_host<float>();
      for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 64; ++c)
          CHECK(got[std::size_t(r * 64 + c)] == float(100 * (c / 4) + r * 4 + c % 4 + 1));
    }
    const auto refused = [&](JoinLaunch j, const char* words) {
      try {
        run(d, j.p, j.buffers);
        FAIL("accepted");
      } catch (const InvalidArgument& e) {
        CHECK_MESSAGE(std::string(e.what()).find(words) != std::string::npos, e.what());
      }
    };
    JoinLaunch j = join_launch(d, 2, abi::kJoinStrided);
    JoinLaunch bad = j;
    bad.p.count = 0;
    refused(bad, "count 0");
    bad = j, bad.p.count = abi::kJoinMaxInputs + 1;
    refused(bad, "count 17");
    bad = j, bad.buffers.pop_back();
    refused(bad, "buffer");
    bad = j, bad.p.inputs[1].at = 5;  // [5, 9) past the output's 8 positions
    refused(bad, "is not inside the output's 8 positions");
    bad = j, bad.p.inputs[0].strides[0] = 400;  // reads past its buffer
    refused(bad, "an input");
    bad = j, bad.p.dim = 2;
    refused(bad, "dim 2");
    // The flat variant's contract: rows of stride 1 (a transposed input is refused by name).
    bad = j, bad.p.variant = abi::kJoinFlat, bad.p.inputs[0].strides[1] = 2,
    bad.p.inputs[0].strides[0] = 1;
    try {
      run(d, bad.p, bad.buffers);
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK_MESSAGE(std::string(e.what()).find("stride 1") != std::string::npos, e.what());
    }
  }
}

TEST_CASE("explain names the join variant cat runs") {
  for (const Device& d : testing::present_devices()) {
    CAPTURE(d.str());
    const ops::PlanTarget target{d.capabilities(), d.str(), d.display_name(),
                                 &d.context().backend_device()};
    const ops::OpExplanation e =
        ops::explain("cat", {DType::kFloat32, DType::kFloat32, DType::kInt32},
                     {{2048, 64}, {1024, 64}, {8, 64}}, target);
    REQUIRE_FALSE(e.refused);
    CHECK(e.family == "join");
    CHECK(e.output == "float32 [3080, 64]");
    CHECK(e.kernel.find("variant join.flat") != std::string::npos);
    CHECK(e.kernel.find("1 elementwise copy") != std::string::npos);
    const ops::OpExplanation s =
        ops::explain("stack", {DType::kBFloat16, DType::kBFloat16}, {{4, 8}, {4, 8}}, target);
    if (!s.refused) CHECK(s.output == "bfloat16 [2, 4, 8]");
  }
}
