// In-place and out= forms on every present device: copy_/fill_/zero_ into slices and
// transposes (broadcast, cast, across devices), the in-place elementwise forms against their
// out-of-place ops on strided views, PyTorch's dtype, shape and overlap refusals by name, the
// out= forms of elementwise ops, reductions, matrix products, softmax and norms, and writes
// into a tensor that queued (batched) launches still read. Seeded random data throughout.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

constexpr unsigned kSeed = 20261211;

std::vector<double> values(const Tensor& t) {
  return t.to(host_device()).to(float64).to_host<double>();
}

// Uniform values in [lo, hi), seeded; never all zero.
Tensor random(const Shape& shape, const Device& d, unsigned seed, double lo = -2, double hi = 2,
              DType dtype = float32) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<std::size_t>(numel(shape)));
  for (double& x : v) x = dist(gen);
  return Tensor::from_host(v, shape).to(dtype).to(d);
}

Tensor random_int(const Shape& shape, const Device& d, unsigned seed, int lo, int hi,
                  DType dtype = int32) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  std::vector<std::int64_t> v(static_cast<std::size_t>(numel(shape)));
  for (auto& x : v) x = dist(gen);
  return Tensor::from_host(v, shape).to(dtype).to(d);
}

bool same(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
  return true;
}

bool close(const std::vector<double>& a, const std::vector<double>& b, double tol) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= tol * (1 + std::fabs(b[i])))) return false;
  return true;
}

template <class F>
std::string refusal(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no InvalidArgument)";
}
#define CHECK_REFUSED(expr, text)                                               \
  CHECK_MESSAGE(refusal([&] { (void)(expr); }).find(text) != std::string::npos, \
                refusal([&] { (void)(expr); }))

}  // namespace

TEST_CASE("copy_ writes slices and transposes, broadcasting, casting and across devices") {
  for (const Device& d : testing::present_devices()) {
    INFO(d.str() << " seed " << kSeed);
    const Tensor base = random({4, 5}, d, kSeed);
    const std::vector<double> before = values(base);
    // A row broadcast into rows 1 and 2, float64 from the host cast to float32 on the way.
    const Tensor row = random({5}, host_device(), kSeed + 1, -2, 2, float64);
    const Tensor x = base.clone();
    const Tensor r = x.slice(0, 1, 3).copy_(row);
    CHECK(r.shape() == Shape{2, 5});
    std::vector<double> want = before;
    const std::vector<double> rv = values(row.to(float32));
    for (int i = 1; i < 3; ++i)
      for (int j = 0; j < 5; ++j) want[std::size_t(i * 5 + j)] = rv[std::size_t(j)];
    CHECK(same(values(x), want));
    // int32 into a transposed float32 view: the tensor becomes src transposed.
    const Tensor src = random_int({5, 4}, d, kSeed + 2, -50, 50);
    x.transpose(0, 1).copy_(src);
    CHECK(same(values(x), values(src.transpose(0, 1))));
    // From the device back into a host view.
    const Tensor h = Tensor::full({5, 4}, 1.5, float64);
    h.slice(1, 1, 3).copy_(x.transpose(0, 1).slice(1, 1, 3));
    CHECK(same(values(h.slice(1, 1, 3)), values(src.slice(1, 1, 3))));
    CHECK(same(values(h.slice(1, 0, 1)), std::vector<double>(5, 1.5)));
    // x.copy_(x) leaves it alone; an interleaved strided source is read before writing.
    x.copy_(x);
    CHECK(same(values(x), values(src.transpose(0, 1))));
    const Tensor y = random({4, 6}, d, kSeed + 3);
    const std::vector<double> yv = values(y);
    y.slice(1, 0, 6, 2).copy_(y.slice(1, 1, 6, 2));
    std::vector<double> yw = yv;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 6; j += 2) yw[std::size_t(i * 6 + j)] = yv[std::size_t(i * 6 + j + 1)];
    CHECK(same(values(y), yw));
    // Refusals, in PyTorch's words.
    CHECK_REFUSED(x.slice(0, 0, 1).expand({3, 5}).copy_(row), "more than one element");
    CHECK_REFUSED(x.slice(0, 1, 4).copy_(x.slice(0, 0, 3)), "some elements of the input tensor");
    CHECK_REFUSED(x.copy_(random({3, 5}, d, kSeed)), "does not broadcast");
  }
}

TEST_CASE("fill_ and zero_ write any view; out-of-range values are refused") {
  for (const Device& d : testing::present_devices()) {
    INFO(d.str());
    const Tensor x = random({3, 4}, d, kSeed + 4);
    const std::vector<double> before = values(x);
    x.transpose(0, 1).slice(0, 1, 4, 2).fill_(-3.25);  // columns 1 and 3
    std::vector<double> want = before;
    for (int i = 0; i < 3; ++i) want[std::size_t(i * 4 + 1)] = want[std::size_t(i * 4 + 3)] = -3.25;
    CHECK(same(values(x), want));
    x.slice(0, 2, 3).zero_();
    for (int j = 0; j < 4; ++j) want[std::size_t(8 + j)] = 0;
    CHECK(same(values(x), want));
    // An expanded view may be filled (every write stores the same value), as in PyTorch.
    const Tensor col = random({3, 1}, d, kSeed + 5);
    col.expand({3, 7}).fill_(2.5);
    CHECK(same(values(col), std::vector<double>(3, 2.5)));
    const Tensor i8 = random_int({4}, d, kSeed, -5, 5, int8);
    CHECK_REFUSED(i8.fill_(193), "cannot be converted");
  }
}

namespace {

struct InPlaceCase {
  const char* name;
  DType dtype;
  std::function<Tensor(const Tensor& self, const Tensor& other)> in_place;
  std::function<Tensor(const Tensor& self, const Tensor& other)> out_of_place;
};

std::vector<InPlaceCase> in_place_cases() {
  using T = const Tensor&;
  return {
      {"add_ alpha", float32, [](T s, T o) { return ops::add_(s, o, 3); },
       [](T s, T o) { return ops::add(s, o, 3); }},
      {"sub_", float32, [](T s, T o) { return ops::sub_(s, o); },
       [](T s, T o) { return ops::sub(s, o); }},
      {"mul_ scalar", float32, [](T s, T) { return ops::mul_(s, -1.75); },
       [](T s, T) { return ops::mul(s, -1.75); }},
      {"div_", float32, [](T s, T o) { return ops::div_(s, o); },
       [](T s, T o) { return ops::div(s, o); }},
      {"pow_", float32, [](T s, T o) { return ops::pow_(s, o); },
       [](T s, T o) { return ops::pow(s, o); }},
      {"exp_", float32, [](T s, T) { return ops::exp_(s); }, [](T s, T) { return ops::exp(s); }},
      {"sigmoid_", float32, [](T s, T) { return ops::sigmoid_(s); },
       [](T s, T) { return ops::sigmoid(s); }},
      {"gelu_ tanh", float32, [](T s, T) { return ops::gelu_(s, ops::GeluApproximation::kTanh); },
       [](T s, T) { return ops::gelu(s, ops::GeluApproximation::kTanh); }},
      {"clamp_", float32, [](T s, T) { return ops::clamp_(s, -0.5, 0.75); },
       [](T s, T) { return ops::clamp(s, -0.5, 0.75); }},
      {"masked_fill_", float32, [](T s, T o) { return ops::masked_fill_(s, ops::gt(o, 0), 9.5); },
       [](T s, T o) { return ops::masked_fill(s, ops::gt(o, 0), 9.5); }},
      {"addcmul_", float32, [](T s, T o) { return ops::addcmul_(s, o, o, 0.5); },
       [](T s, T o) { return ops::addcmul(s, o, o, 0.5); }},
      {"lerp_", float32, [](T s, T o) { return ops::lerp_(s, o, 0.25); },
       [](T s, T o) { return ops::lerp(s, o, 0.25); }},
      {"lt_ into float32", float32, [](T s, T o) { return ops::lt_(s, o); },
       [](T s, T o) { return ops::lt(s, o).to(float32); }},
      {"bitwise_xor_", int32, [](T s, T o) { return ops::bitwise_xor_(s, o); },
       [](T s, T o) { return ops::bitwise_xor(s, o); }},
      {"remainder_", int32, [](T s, T o) { return ops::remainder_(s, ops::add(ops::abs(o), 1)); },
       [](T s, T o) { return ops::remainder(s, ops::add(ops::abs(o), 1)); }},
      {"add_ int64 into int32 (wraps)", int32,
       [](T s, T o) { return ops::add_(s, ops::mul(o.to(int64), 1000000000)); },
       [](T s, T o) { return ops::add(s, ops::mul(o.to(int64), 1000000000)).to(int32); }},
  };
}

}  // namespace

TEST_CASE("in-place elementwise forms equal their ops on transposed slices, the rest untouched") {
  for (const Device& d : testing::present_devices()) {
    unsigned seed = kSeed + 10;
    for (const InPlaceCase& c : in_place_cases()) {
      INFO(d.str() << " " << c.name << " seed " << seed);
      const bool integral = !is_floating(c.dtype);
      const Tensor buffer = integral ? random_int({6, 7}, d, seed, -40, 40, c.dtype)
                                     : random({6, 7}, d, seed, 0.1, 2, c.dtype);
      // self: a transposed [5, 3] window of the buffer; other broadcasts along its rows.
      const Tensor self = buffer.slice(0, 1, 4).slice(1, 2, 7).transpose(0, 1);
      const Tensor other = integral ? random_int({1, 3}, d, seed + 1, -9, 9, c.dtype)
                                    : random({1, 3}, d, seed + 1, -2, 2, c.dtype);
      const std::vector<double> whole = values(buffer);
      const std::vector<double> want = values(c.out_of_place(self.clone(), other));
      const Tensor r = c.in_place(self, other);
      CHECK(r.storage() == buffer.storage());
      CHECK(same(values(self), want));
      // Outside the window nothing changed.
      const std::vector<double> after = values(buffer);
      for (int i = 0; i < 6; ++i)
        for (int j = 0; j < 7; ++j)
          if (!(i >= 1 && i < 4 && j >= 2))
            CHECK(after[std::size_t(i * 7 + j)] == whole[std::size_t(i * 7 + j)]);
      ++seed;
    }
  }
}

TEST_CASE("in-place forms: PyTorch's dtype, shape and overlap rules, refused by name") {
  for (const Device& d : testing::present_devices()) {
    INFO(d.str());
    const Tensor i32 = random_int({3, 3}, d, kSeed + 30, -20, 20);
    CHECK_REFUSED(ops::add_(i32, 2.5),
                  "result type float32 can't be cast to the desired output type int32");
    CHECK_REFUSED(ops::div_(i32, i32), "can't be cast to the desired output type int32");
    CHECK_REFUSED(ops::add_(i32.to(bool_), i32), "can't be cast to the desired output type bool");
    // float16 self with a float32 operand: computed in float32, rounded once into float16.
    const Tensor h = random({3, 3}, d, kSeed + 31, -2, 2, float16);
    const Tensor f = random({3, 3}, d, kSeed + 32);
    const std::vector<double> want = values(ops::add(h, f).to(float16));
    ops::add_(h, f);
    CHECK(same(values(h), want));
    // self never grows.
    const Tensor row = random({3}, d, kSeed + 33);
    CHECK_REFUSED(ops::mul_(row, f), "doesn't match the broadcast shape");
    // Overlaps: the same elements are fine; a partial overlap is refused; an interleaved
    // strided input is read before it is written.
    const Tensor x = random({4, 6}, d, kSeed + 34);
    const std::vector<double> xv = values(x);
    ops::add_(x, x);
    CHECK(same(values(x), values(ops::mul(Tensor::from_host(xv, {4, 6}).to(float32).to(d), 2))));
    CHECK_REFUSED(ops::add_(x.slice(0, 1, 4), x.slice(0, 0, 3)), "some elements of the input");
    CHECK_REFUSED(ops::add_(x, x.slice(0, 0, 1)), "some elements of the input");
    CHECK_REFUSED(ops::neg_(x.slice(1, 0, 1).expand({4, 3})), "more than one element");
    const std::vector<double> x2 = values(x);
    ops::sub_(x.slice(1, 1, 6, 2), x.slice(1, 0, 6, 2));
    std::vector<double> w = x2;
    for (int i = 0; i < 4; ++i)
      for (int j = 1; j < 6; j += 2)
        w[std::size_t(i * 6 + j)] =
            double(float(x2[std::size_t(i * 6 + j)]) - float(x2[std::size_t(i * 6 + j - 1)]));
    CHECK(same(values(x), w));
  }
}

TEST_CASE("elementwise out= forms: strided out, castable dtypes, shape and device refused") {
  for (const Device& d : testing::present_devices()) {
    INFO(d.str());
    const Tensor a = random({4, 3}, d, kSeed + 40), b = random({3}, d, kSeed + 41);
    const Tensor out = Tensor::empty({3, 4}, float32, d).fill_(7);
    const Tensor r = ops::mul_out(out.transpose(0, 1), a, b);
    CHECK(r.storage() == out.storage());
    CHECK(same(values(out.transpose(0, 1)), values(ops::mul(a, b))));
    // float32 results into float64 (castable); bool results into float32.
    if (d.capabilities().fp64.value) {
      const Tensor o64 = Tensor::empty({4, 3}, float64, d);
      ops::add_out(o64, a, b, 2);
      CHECK(same(values(o64), values(ops::add(a, b, 2))));
    }
    const Tensor of = Tensor::empty({4, 3}, float32, d);
    ops::ge_out(of, a, b);
    CHECK(same(values(of), values(ops::ge(a, b).to(float32))));
    ops::where_out(of, ops::gt(a, 0), a, -1.0);
    CHECK(same(values(of), values(ops::where(ops::gt(a, 0), a, -1.0))));
    CHECK_REFUSED(ops::add_out(Tensor::empty({4, 3}, int32, d), a, b), "can't be cast");
    CHECK_REFUSED(ops::add_out(Tensor::empty({4, 4}, float32, d), a, b), "never resizes");
    CHECK_REFUSED(ops::add_out(Tensor::empty({0}, float32, d), a, b), "never resizes");
    if (!d.is_host())
      CHECK_REFUSED(ops::add_out(Tensor::empty({4, 3}, float32), a, b), "lives on host");
  }
}

TEST_CASE("out= forms of reductions, matrix products, softmax and norms") {
  for (const Device& d : testing::present_devices()) {
    INFO(d.str());
    const Tensor x = random({5, 6}, d, kSeed + 50);
    const Tensor buf = Tensor::empty({2, 6}, float32, d).fill_(-9);
    ops::sum_out(buf.slice(0, 1, 2).squeeze(0), x, {0});
    CHECK(close(values(buf.slice(0, 1, 2)), values(ops::sum(x, {0}, true)), 1e-6));
    CHECK(same(values(buf.slice(0, 0, 1)), std::vector<double>(6, -9)));
    const Tensor xi = random_int({5, 6}, d, kSeed + 51, -100, 100);
    const Tensor si = Tensor::empty({5}, int32, d);
    ops::sum_out(si, xi, {1});  // out's dtype is the requested one: int32, not int64
    CHECK(same(values(si), values(ops::sum(xi, {1}))));
    CHECK_REFUSED(ops::sum_out(si, xi, {1}, false, int64), "Expected out tensor to have dtype");
    CHECK_REFUSED(ops::amax_out(Tensor::empty({6}, float16, d), x, {0}), "writes only its result");
    const Tensor mv = Tensor::empty({5}, float32, d), mi = Tensor::empty({5}, int64, d);
    ops::max_out(mv, mi, x, 1);
    CHECK(same(values(mv), values(ops::max(x, 1).values)));
    CHECK(same(values(mi), values(ops::max(x, 1).indices)));
    // Products: a contiguous out is written directly, a transposed one through a copy.
    const Tensor m = random({6, 4}, d, kSeed + 52);
    const Tensor p = Tensor::empty({5, 4}, float32, d), pt = Tensor::empty({4, 5}, float32, d);
    const std::vector<double> want = values(ops::matmul(x, m));
    ops::matmul_out(p, x, m);
    ops::mm_out(pt.transpose(0, 1), x, m);
    CHECK(same(values(p), want));
    CHECK(same(values(pt.transpose(0, 1)), want));
    const Tensor bias = random({4}, d, kSeed + 53);
    ops::addmm_out(p, bias, x, m, 0.5, 2);
    CHECK(same(values(p), values(ops::addmm(bias, x, m, 0.5, 2))));
    const Tensor sq = random({4, 4}, d, kSeed + 55);
    CHECK_REFUSED(ops::mm_out(sq, sq, m.slice(0, 0, 4)), "shares memory with an operand");
    // An out interleaved with an operand (x's first four columns) gets the product of x as
    // it was, through a temporary.
    const Tensor xc = x.clone();
    ops::mm_out(xc.slice(1, 0, 4), xc, m);
    CHECK(same(values(xc.slice(1, 0, 4)), want));
    CHECK(same(values(xc.slice(1, 4, 6)), values(x.slice(1, 4, 6))));
    CHECK_REFUSED(ops::mm_out(Tensor::empty({5, 4}, float16, d), x, m), "writes only its result");
    // softmax and norms into a slice of a wider buffer.
    const Tensor wide = Tensor::empty({5, 8}, float32, d).fill_(4);
    ops::softmax_out(wide.slice(1, 1, 7), x, -1);
    CHECK(same(values(wide.slice(1, 1, 7)), values(ops::softmax(x, -1))));
    ops::log_softmax_out(wide.slice(1, 1, 7), x, 0);
    CHECK(same(values(wide.slice(1, 1, 7)), values(ops::log_softmax(x, 0))));
    const Tensor g = random({6}, d, kSeed + 54);
    ops::layer_norm_out(wide.slice(1, 2, 8), x, {6}, g);
    CHECK(same(values(wide.slice(1, 2, 8)), values(ops::layer_norm(x, {6}, g))));
    ops::rms_norm_out(wide.slice(1, 0, 6), x, {6}, g, 1e-6);
    CHECK(same(values(wide.slice(1, 0, 6)), values(ops::rms_norm(x, {6}, g, 1e-6))));
    CHECK(same(values(wide.slice(1, 6, 8)), values(ops::layer_norm(x, {6}, g).slice(1, 4, 6))));
  }
}

TEST_CASE("writes into a tensor that queued launches still read keep their order") {
  // Small elementwise launches are queued on CUDA/HIP (kernels/gpu/elementwise_batch.*) and
  // run later in issue order: every write below lands in the queue between reads of the
  // same storage, and the temporaries go back to the caching allocator while queued ops may
  // still read them. The host and Vulkan run the same sequence as the reference order.
  for (const Device& d : testing::present_devices()) {
    INFO(d.str() << " seed " << kSeed + 60);
    const Tensor x = random({64}, d, kSeed + 60);
    std::vector<double> ref = values(x);
    const Tensor before = ops::mul(x, 2);                      // queued: reads all of x
    x.slice(0, 8, 24).fill_(7);                                // queued write into x
    const Tensor mid = ops::add(x, 1);                         // must see the 7s
    x.slice(0, 24, 40).copy_(random({16}, host_device(), 1));  // a host copy flushes the queue
    ops::mul_(x.slice(0, 40, 64), x.slice(0, 40, 64));         // in place, same elements
    std::vector<double> want_before(64), want_mid(64);
    for (int i = 0; i < 64; ++i)
      want_before[std::size_t(i)] = double(float(ref[std::size_t(i)]) * 2);
    for (int i = 8; i < 24; ++i) ref[std::size_t(i)] = 7;
    for (int i = 0; i < 64; ++i) want_mid[std::size_t(i)] = double(float(ref[std::size_t(i)]) + 1);
    const std::vector<double> host_src = values(random({16}, host_device(), 1));
    for (int i = 24; i < 40; ++i) ref[std::size_t(i)] = host_src[std::size_t(i - 24)];
    for (int i = 40; i < 64; ++i)
      ref[std::size_t(i)] = double(float(ref[std::size_t(i)]) * float(ref[std::size_t(i)]));
    // Temporaries freed while queued: each round's product is freed as soon as its copy is
    // queued, and the next round's allocation may take the same block.
    const Tensor acc = Tensor::full({16}, 0.5, float32, d);
    std::vector<double> acc_ref(16, 0.5);
    for (int round = 0; round < 40; ++round) {
      acc.copy_(ops::add(ops::mul(acc, 0.5), float(round)));
      for (double& v : acc_ref) v = double(float(float(v) * 0.5f) + float(round));
    }
    const Tensor h = Tensor::full({16}, 1, float16, d);
    for (int round = 0; round < 10; ++round)
      ops::add_(h, random({16}, d, round, -1, 1));  // cast path
    std::vector<double> h_ref(16, 1);
    for (int round = 0; round < 10; ++round) {
      const std::vector<double> r = values(random({16}, host_device(), round, -1, 1));
      for (int i = 0; i < 16; ++i)
        h_ref[std::size_t(i)] =
            values(Tensor::from_host(std::vector<double>{double(float(h_ref[std::size_t(i)]) +
                                                                float(r[std::size_t(i)]))},
                                     {1})
                       .to(float16))[0];
    }
    CHECK(same(values(before), want_before));
    CHECK(same(values(mid), want_mid));
    CHECK(same(values(x), ref));
    CHECK(same(values(acc), acc_ref));
    CHECK(same(values(h), h_ref));
  }
}
