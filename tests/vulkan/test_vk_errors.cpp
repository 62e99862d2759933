// Bad input to the op-wave-1 families on vulkan:0, under the validation layer:
//  - the public API (shapes, dtypes, dims, undefined tensors, operands on host and
//    vulkan:0) refuses with the right nbx error type before any launch;
//  - malformed raw KernelLaunches of every family (reduce, fill, softmax, norm, scan,
//    matmul and its cooperative-matrix variant) are refused with a typed error before
//    anything is recorded: the synchronize() that follows reports no validation message;
//  - an allocation larger than the device is OutOfMemory with the figures.
// After every refusal a correct softmax, sum and matmul on vulkan:0 must match the host.
#include <cmath>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/errors.hpp"
#include "nbx/nbx.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

BackendDevice& raw() {
  return vk().context().backend_device();
}

// 0, 1, 2 … as float32 (or cast), shaped, on `d`.
Tensor seq(const Shape& s, const Device& d, DType t = DType::kFloat32) {
  return ops::arange(Scalar(0), Scalar(numel(s)), Scalar(1), DType::kFloat32)
      .reshape(s)
      .to(t)
      .to(d);
}

void check_close(const Tensor& got, const Tensor& want, double tol = 1e-5) {
  REQUIRE(got.shape() == want.shape());
  const auto g = got.to(::nbx::host_device()).to(DType::kFloat64).to_host<double>();
  const auto w = want.to(::nbx::host_device()).to(DType::kFloat64).to_host<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    CAPTURE(i);
    CHECK(g[i] == doctest::Approx(w[i]).epsilon(tol));
  }
}

// A correct op after a refusal: softmax, sum and matmul on vulkan:0 against the host.
void device_still_works() {
  const Device& h = ::nbx::host_device();
  const Tensor xh = seq({4, 8}, h) * Scalar(0.25), xv = xh.to(vk());
  check_close(ops::softmax(xv, 1), ops::softmax(xh, 1));
  check_close(ops::sum(xv, {0}), ops::sum(xh, {0}));
  check_close(ops::matmul(xv, xv.transpose(0, 1)), ops::matmul(xh, xh.transpose(0, 1)));
}

// Runs `f`, which must throw E naming every one of `words`; then the queue drains with no
// validation message or fault, and the device still computes.
template <class E>
void refused(const std::function<void()>& f, const std::vector<std::string>& words) {
  std::string msg;
  bool threw = false, right_type = false;
  try {
    f();
  } catch (const E& e) {
    threw = right_type = true;
    msg = e.what();
  } catch (const std::exception& e) {
    threw = true;
    msg = std::string("wrong type: ") + e.what();
  }
  CAPTURE(msg);
  CHECK_MESSAGE(threw, "no error for: " << words.front());
  CHECK_MESSAGE(right_type, msg);
  for (const std::string& w : words) CHECK_MESSAGE(msg.find(w) != std::string::npos, w);
  CHECK_NOTHROW(raw().synchronize());
  device_still_works();
}

// ---------------------------------------------------------------- raw launches

// One raw launch: buffers from tensors (or empty), the parameter block as given, or with
// `param_bytes` bytes of it (a block of the wrong size).
template <class P>
void launch(std::string_view family, const std::vector<KernelBuffer>& bufs, const P& p,
            std::size_t param_bytes = sizeof(P)) {
  std::vector<std::byte> block(param_bytes);
  std::memcpy(block.data(), &p, std::min(param_bytes, sizeof p));
  KernelLaunch kl;
  kl.family = family_named(family.substr(0, family.find('.'))).value();
  kl.buffers = bufs;
  kl.params = block;
  std::lock_guard lock(vk().context().launch_mutex());
  raw().launch(kl);
}
KernelBuffer out_buf(const Tensor& t) {
  return {t.storage()->memory(), true};
}
KernelBuffer in_buf(const Tensor& t) {
  return {t.storage()->memory(), false};
}
std::vector<KernelBuffer> drop_last(std::vector<KernelBuffer> b) {
  b.pop_back();
  return b;
}

constexpr std::int32_t kF32 = static_cast<std::int32_t>(DType::kFloat32);
constexpr std::int64_t kHuge = std::int64_t(1) << 62;  // wraps a 64-bit byte count × 4

// The checks every family's launch shares: a block of the wrong size, too few buffers
// (refused at the backend seam by the family table, core/families).
template <class P>
void common_refusals(const char* kernel, const std::vector<KernelBuffer>& bufs, const P& p) {
  refused<InvalidArgument>([&] { launch(kernel, bufs, p, sizeof p + 8); },
                           {kernel, "parameter block", std::to_string(sizeof p + 8)});
  refused<InvalidArgument>([&] { launch(kernel, bufs, p, sizeof p - 8); },
                           {"parameter block", std::to_string(sizeof p)});
  refused<InvalidArgument>([&] { launch(kernel, drop_last(bufs), p); }, {"buffers"});
}

TEST_CASE("raw reduce launches: malformed blocks are refused before recording") {
  const Device& h = ::nbx::host_device();
  const Tensor x = seq({4, 8}, vk()), out = Tensor::empty({4}, DType::kFloat32, vk());
  abi::ReduceParams p{};
  p.op = abi::kReduce_sum;
  p.accumulate_dtype = p.in_dtype = p.out_dtype = kF32;
  p.out_ndim = p.red_ndim = 1;
  p.row_tile = 8;
  p.rows = 4;
  p.row_len = 8;
  p.out_sizes[0] = 4;
  p.red_sizes[0] = 8;
  p.in_kept_strides[0] = 8;
  p.in_red_strides[0] = 1;
  p.out_strides[0] = 1;
  const std::vector<KernelBuffer> bufs = {out_buf(out), in_buf(x)};
  launch("reduce", bufs, p);  // the well-formed block computes the sum
  check_close(out, ops::sum(seq({4, 8}, h), {1}));

  common_refusals("reduce", bufs, p);
  auto with = [&](auto mutate, std::vector<std::string> words) {
    abi::ReduceParams q = p;
    mutate(q);
    refused<InvalidArgument>([&] { launch("reduce", bufs, q); }, words);
  };
  with([](auto& q) { q.op = 99; }, {"unknown op code 99"});
  with([](auto& q) { q.in_dtype = 42; }, {"dtype code"});
  with([](auto& q) { q.in_kept_strides[0] = 1000; }, {"sum", "the input reaches element 3007"});
  with([](auto& q) { q.in_offset = -1; }, {"the input"});
  with([](auto& q) { q.out_offset = 600; }, {"the output reaches element 603"});
  with([](auto& q) { q.in_offset = kHuge; }, {"the input reaches element 461168601842738"});
  with([](auto& q) { q.out_strides[0] = kHuge; }, {"sum", "past 2^63"});
  with([](auto& q) { q.rows = 5; }, {"disagree"});
  with([](auto& q) { q.row_len = 9; }, {"disagree"});
  with([](auto& q) { q.red_ndim = 9; }, {"red_ndim is 9"});
  // Two negative sizes multiply to the right row count.
  with(
      [](auto& q) {
        q.out_ndim = 2;
        q.out_sizes[0] = -2;
        q.out_sizes[1] = -2;
      },
      {"negative size"});
  with(
      [](auto& q) {
        q.red_ndim = 2;
        q.red_sizes[0] = -2;
        q.red_sizes[1] = -4;
      },
      {"negative size"});
  refused<InvalidArgument>(
      [&] {
        launch("reduce", {out_buf(out), KernelBuffer{}}, p);
      },
      {"the input has elements but no buffer"});
  abi::ReduceParams q = p;
  q.op = abi::kReduce_max_with_index;
  refused<InvalidArgument>([&] { launch("reduce", bufs, q); }, {"max", "the launch takes 3"});
}

TEST_CASE("raw fill launches: malformed blocks are refused before recording") {
  const Tensor out = Tensor::empty({16}, DType::kFloat32, vk());
  abi::FillParams p{};
  p.op = abi::kFill_arange;
  p.out_dtype = p.in_dtype = kF32;
  p.ndim = 1;
  p.numel = 16;
  p.sizes[0] = 16;
  p.out_strides[0] = 1;
  p.start.f = 0;
  p.step.f = 1;
  p.end.f = 16;
  const std::vector<KernelBuffer> bufs = {out_buf(out)};
  launch("fill", bufs, p);
  check_close(out, seq({16}, ::nbx::host_device()));

  refused<InvalidArgument>([&] { launch("fill", bufs, p, sizeof p + 8); }, {"parameter block"});
  refused<InvalidArgument>([&] { launch("fill", std::vector<KernelBuffer>{}, p); }, {"buffers"});
  auto with = [&](auto mutate, std::vector<std::string> words) {
    abi::FillParams q = p;
    mutate(q);
    refused<InvalidArgument>([&] { launch("fill", bufs, q); }, words);
  };
  with([](auto& q) { q.op = 7; }, {"unknown op code 7"});
  with([](auto& q) { q.op = -1; }, {"unknown op code -1"});
  with([](auto& q) { q.out_dtype = 77; }, {"unknown dtype code 77"});
  with(
      [](auto& q) {
        q.sizes[0] = 1000;
        q.numel = 1000;
      },
      {"arange", "the output reaches element 999"});
  with([](auto& q) { q.numel = 17; }, {"numel 17 is not the product"});
  with([](auto& q) { q.out_offset = -4; }, {"the output"});
  with([](auto& q) { q.out_offset = kHuge; }, {"the output reaches element 461168601842738"});
  with([](auto& q) { q.out_strides[0] = kHuge; }, {"arange", "past 2^63"});
  with([](auto& q) { q.ndim = 2; }, {"ndim 2 is not 1"});

  // triu: two buffers, a 2-d view, in and out of one dtype.
  const Tensor m = seq({4, 4}, vk()), t = Tensor::empty({4, 4}, DType::kFloat32, vk());
  abi::FillParams r{};
  r.op = abi::kFill_triu;
  r.out_dtype = r.in_dtype = kF32;
  r.ndim = 2;
  r.numel = 16;
  r.sizes[0] = r.sizes[1] = 4;
  r.out_strides[0] = r.in_strides[0] = 4;
  r.out_strides[1] = r.in_strides[1] = 1;
  const std::vector<KernelBuffer> tb = {out_buf(t), in_buf(m)};
  launch("fill", tb, r);
  check_close(t, ops::triu(seq({4, 4}, ::nbx::host_device())));
  refused<InvalidArgument>([&] { launch("fill", drop_last(tb), r); },
                           {"triu", "the launch takes 2"});
  abi::FillParams r2 = r;
  r2.ndim = 1;
  r2.numel = 4;
  refused<InvalidArgument>([&] { launch("fill", tb, r2); }, {"triu", "ndim 1 is outside"});
  r2 = r;
  r2.in_dtype = static_cast<std::int32_t>(DType::kInt32);
  refused<InvalidArgument>([&] { launch("fill", tb, r2); }, {"triu", "keep the input's dtype"});
  r2 = r;
  r2.in_offset = 500;
  refused<InvalidArgument>([&] { launch("fill", tb, r2); }, {"the input reaches element"});
  r2 = r;
  r2.ndim = 3;
  r2.sizes[0] = -1;
  r2.sizes[1] = -4;
  r2.sizes[2] = 4;
  refused<InvalidArgument>([&] { launch("fill", tb, r2); }, {"triu", "negative size"});
}

// softmax and scan share a row layout: outer sizes, strides and one row stride per view.
template <class P>
void row_layout(P& p) {
  p.outer_ndim = 1;
  p.rows = 4;
  p.row_len = 8;
  p.outer_sizes[0] = 4;
  p.in_outer_strides[0] = p.out_outer_strides[0] = 8;
  p.in_row_stride = p.out_row_stride = 1;
}
template <class P>
void row_layout_refusals(const char* kernel, const char* op, const std::vector<KernelBuffer>& bufs,
                         const P& p) {
  auto with = [&](auto mutate, std::vector<std::string> words) {
    P q = p;
    mutate(q);
    refused<InvalidArgument>([&] { launch(kernel, bufs, q); }, words);
  };
  with([](auto& q) { q.op = 9; }, {"unknown op code 9"});
  with([](auto& q) { q.in_dtype = 99; }, {"unknown dtype code 99"});
  with([](auto& q) { q.rows = 3; }, {op, "disagree"});
  with([](auto& q) { q.row_len = -1; }, {op, "disagree"});
  with([](auto& q) { q.outer_ndim = 9; }, {op, "outer_ndim is 9"});
  with([](auto& q) { q.in_offset = -1; }, {op, "the input has a negative offset"});
  with([](auto& q) { q.in_row_stride = 100; }, {op, "the input reaches element 724"});
  with([](auto& q) { q.out_offset = 120; }, {op, "the output reaches element 151"});
  with([](auto& q) { q.in_offset = kHuge; }, {op, "the input reaches element 461168601842738"});
  with([](auto& q) { q.out_row_stride = kHuge; }, {op, "the output"});
  with(
      [](auto& q) {
        q.outer_ndim = 3;
        q.outer_sizes[1] = -1;
        q.outer_sizes[2] = -1;
      },
      {op, "negative size"});
  refused<InvalidArgument>(
      [&] {
        launch(kernel, {bufs[0], KernelBuffer{}}, p);
      },
      {op, "the input has elements but no buffer is bound"});
}

TEST_CASE("raw softmax launches: malformed blocks are refused before recording") {
  const Device& h = ::nbx::host_device();
  const Tensor x = seq({4, 8}, vk()) * Scalar(0.125),
               out = Tensor::empty({4, 8}, DType::kFloat32, vk());
  abi::SoftmaxParams p{};
  p.op = abi::kSoftmax_softmax;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = kF32;
  p.variant = abi::kSoftmaxOnePass;
  p.row_tile = 8;
  p.scale = 1;
  row_layout(p);
  const std::vector<KernelBuffer> bufs = {out_buf(out), in_buf(x)};
  launch("softmax", bufs, p);
  check_close(out, ops::softmax(seq({4, 8}, h) * Scalar(0.125), 1));

  common_refusals("softmax", bufs, p);
  row_layout_refusals("softmax", "softmax", bufs, p);
  abi::SoftmaxParams q = p;
  q.variant = 5;
  refused<InvalidArgument>([&] { launch("softmax", bufs, q); }, {"unknown variant 5"});
  q = p;
  q.in_dtype = static_cast<std::int32_t>(DType::kInt32);
  refused<InvalidArgument>([&] { launch("softmax", bufs, q); }, {"not a floating dtype"});
  // A mask the parameters announce but the launch lacks, and one too small for its view.
  q = p;
  q.has_mask = 1;
  q.mask_outer_strides[0] = 8;
  q.mask_row_stride = 1;
  refused<InvalidArgument>([&] { launch("softmax", bufs, q); },
                           {"2 buffers bound; the launch takes 3"});
  const Tensor small_mask = Tensor::zeros({8}, DType::kBool, vk());
  q.mask_outer_strides[0] = 1000;
  refused<InvalidArgument>(
      [&] {
        launch("softmax", {bufs[0], bufs[1], in_buf(small_mask)}, q);
      },
      {"the mask reaches element 3007"});
}

TEST_CASE("raw scan launches: malformed blocks are refused before recording") {
  const Tensor x = seq({4, 8}, vk()), out = Tensor::empty({4, 8}, DType::kFloat32, vk());
  abi::ScanParams p{};
  p.op = abi::kScan_cumsum;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = kF32;
  p.lanes = 1;  // scan.lanes: Vulkan walks a row per invocation
  row_layout(p);
  const std::vector<KernelBuffer> bufs = {out_buf(out), in_buf(x)};
  launch("scan", bufs, p);
  check_close(out, ops::cumsum(seq({4, 8}, ::nbx::host_device()), 1));

  common_refusals("scan", bufs, p);
  row_layout_refusals("scan", "cumsum", bufs, p);
  abi::ScanParams q = p;
  q.op = abi::kScan_cummax;  // needs a third (index) buffer
  refused<InvalidArgument>([&] { launch("scan", bufs, q); }, {"cummax", "the launch takes 3"});
  q.index_outer_strides[0] = 8;
  q.index_row_stride = 1;
  q.index_offset = 1 << 20;
  const Tensor idx = Tensor::empty({4, 8}, DType::kInt64, vk());
  refused<InvalidArgument>(
      [&] {
        launch("scan", {bufs[0], bufs[1], out_buf(idx)}, q);
      },
      {"cummax", "the index output reaches element"});
  q = p;
  q.out_dtype = static_cast<std::int32_t>(DType::kInt32);
  refused<InvalidArgument>([&] { launch("scan", bufs, q); }, {"accumulating in float32"});
}

TEST_CASE("raw norm launches: malformed blocks are refused before recording") {
  const Device& h = ::nbx::host_device();
  const Tensor x = seq({4, 8}, vk()), out = Tensor::empty({4, 8}, DType::kFloat32, vk());
  const Tensor w = Tensor::ones({8}, DType::kFloat32, vk());
  abi::NormParams p{};
  p.op = abi::kNorm_layer_norm;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = p.param_dtype = kF32;
  p.row_tile = 8;
  p.rows = 4;
  p.row_len = 8;
  p.eps = 1e-5;
  const std::vector<KernelBuffer> bufs = {out_buf(out), in_buf(x), KernelBuffer{}, KernelBuffer{}};
  launch("norm", bufs, p);
  check_close(out, ops::layer_norm(seq({4, 8}, h), {8}), 1e-4);

  refused<InvalidArgument>([&] { launch("norm", bufs, p, sizeof p + 8); }, {"parameter block"});
  refused<InvalidArgument>([&] { launch("norm", {bufs[0]}, p); },
                           {"layer_norm", "1 buffers bound"});
  auto with = [&](auto mutate, std::vector<std::string> words,
                  const std::vector<KernelBuffer>* b = nullptr) {
    abi::NormParams q = p;
    mutate(q);
    refused<InvalidArgument>([&] { launch("norm", b ? *b : bufs, q); }, words);
  };
  with([](auto& q) { q.op = 4; }, {"unknown op code 4"});
  with([](auto& q) { q.param_dtype = static_cast<std::int32_t>(DType::kInt8); },
       {"not a floating dtype"});
  with([](auto& q) { q.rows = 100; }, {"layer_norm", "the output reaches element"});
  with([](auto& q) { q.row_len = -8; }, {"negative rows or row_len"});
  with([](auto& q) { q.has_weight = 1; },
       {"layer_norm", "the weight has elements but no buffer is bound"});
  // 256 elements in 1024-byte blocks; the 8 weights sit in a 512-byte block.
  const Tensor xb = seq({1, 256}, vk()), ob = Tensor::empty({1, 256}, DType::kFloat32, vk());
  const std::vector<KernelBuffer> short_w = {out_buf(ob), in_buf(xb), in_buf(w), KernelBuffer{}};
  with(
      [](auto& q) {
        q.has_weight = 1;
        q.rows = 1;
        q.row_len = 256;
      },
      {"the weight reaches element 255"}, &short_w);
  // channels × inner wraps to row_len in 64 bits (2^62 + 2 channels of 4): refused, not
  // bounds-checked through a wrapped byte count.
  const std::vector<KernelBuffer> six = {bufs[0],   bufs[1],   in_buf(w),
                                         in_buf(w), in_buf(w), in_buf(w)};
  with(
      [](auto& q) {
        q.op = abi::kNorm_batch_norm;
        q.channels = (std::int64_t(1) << 62) + 2;
        q.inner = 4;
        q.groups = 1;
      },
      {"batch_norm", "disagree with row_len 8"}, &six);
  with(
      [](auto& q) {
        q.op = abi::kNorm_group_norm;
        q.channels = 4;
        q.groups = 3;
        q.inner = 2;
      },
      {"group_norm", "channels 4, groups 3"});
  with(
      [](auto& q) {
        q.op = abi::kNorm_batch_norm;
        q.channels = 4;
        q.inner = 2;
        q.groups = 1;
      },
      {"batch_norm", "4 buffers bound"});
}

TEST_CASE("raw matmul launches: malformed blocks are refused before recording") {
  const Device& h = ::nbx::host_device();
  const Tensor a = seq({4, 8}, vk()), b = seq({8, 4}, vk());
  const Tensor out = Tensor::empty({4, 4}, DType::kFloat32, vk());
  abi::MatmulParams p{};
  p.a_dtype = p.out_dtype = p.accumulate_dtype = p.addend_dtype = kF32;
  p.tile_m = p.tile_n = p.tile_k = 16;
  p.num_stages = 1;
  p.variant = abi::kMatmulTiled;
  p.m = 4;
  p.n = 4;
  p.k = 8;
  p.batch = 1;
  p.a_row_stride = 8;
  p.a_col_stride = 1;
  p.b_row_stride = 4;
  p.b_col_stride = 1;
  p.out_row_stride = 4;
  p.out_col_stride = 1;
  p.alpha = 1;
  const std::vector<KernelBuffer> bufs = {out_buf(out), in_buf(a), in_buf(b)};
  launch("matmul", bufs, p);
  check_close(out, ops::matmul(seq({4, 8}, h), seq({8, 4}, h)));

  common_refusals("matmul", bufs, p);
  auto with = [&](auto mutate, std::vector<std::string> words) {
    abi::MatmulParams q = p;
    mutate(q);
    refused<InvalidArgument>([&] { launch("matmul", bufs, q); }, words);
  };
  with([](auto& q) { q.a_dtype = 50; }, {"dtype code"});
  with([](auto& q) { q.a_dtype = q.out_dtype = static_cast<std::int32_t>(DType::kBool); },
       {"bool"});
  with([](auto& q) { q.out_dtype = static_cast<std::int32_t>(DType::kInt32); },
       {"a floating product with an integer output"});
  with([](auto& q) { q.m = 40; }, {"the output reaches element 159"});
  with([](auto& q) { q.k = -1; }, {"negative m, n or k"});
  with([](auto& q) { q.batch = 2; }, {"batch disagrees"});
  with(
      [](auto& q) {
        q.batch_ndim = 1;
        q.batch_sizes[0] = -1;
        q.batch = -1;
      },
      {"negative size"});
  with([](auto& q) { q.b_offset = -3; }, {"B has a negative offset"});
  with([](auto& q) { q.b_offset = kHuge; }, {"B reaches element 461168601842738"});
  with([](auto& q) { q.out_col_stride = kHuge; }, {"the output"});
  with([](auto& q) { q.a_row_stride = -8; }, {"A has a negative stride"});
  with([](auto& q) { q.tile_m = 24; }, {"tile 24x16x16"});
  with([](auto& q) { q.variant = 9; }, {"unknown variant 9"});
  with([](auto& q) { q.has_addend = 1; }, {"3 buffers bound; the launch takes 4"});
  abi::MatmulParams q = p;
  q.variant = abi::kMatmulVendorBlas;
  refused<Unsupported>([&] { launch("matmul", bufs, q); }, {"matmul.blas"});
  // The cooperative-matrix variant takes float16 only: its contract refuses float32.
  q = p;
  q.variant = abi::kMatmulCoopMatrix;
  refused<InvalidArgument>([&] { launch("matmul", bufs, q); },
                           {"matmul", "matmul.coopmat variant does not serve it"});
  if (raw().offers(nbx::KernelFamily::kMatmul, nbx::abi::kMatmulCoopMatrix)) {
    q.m = 400;  // checked before the variant: the output's view leaves its buffer
    refused<InvalidArgument>([&] { launch("matmul.coopmat", bufs, q); },
                             {"the output reaches element 1599"});
  }
}

TEST_CASE("raw copies on vulkan:0: ranges outside a buffer and overlaps are refused") {
  const Tensor src = seq({64}, vk()), dst = Tensor::zeros({64}, DType::kFloat32, vk());
  const DeviceMemory s = src.storage()->memory(), d = dst.storage()->memory();
  auto copy = [&](std::size_t dst_off, DeviceMemory from, std::size_t src_off, std::size_t n) {
    std::lock_guard lock(vk().context().launch_mutex());
    raw().copy_on_device(d, dst_off, from, src_off, n);
  };
  copy(0, s, 0, 256);  // the well-formed copy (the copy shader) moves all 64 values
  check_close(dst, seq({64}, ::nbx::host_device()));
  refused<InvalidArgument>([&] { copy(0, s, 8, d.bytes); }, {"copy_on_device", "fall outside"});
  refused<InvalidArgument>([&] { copy(d.bytes, s, 0, 4); }, {"copy_on_device", "fall outside"});
  refused<InvalidArgument>([&] { copy(0, s, SIZE_MAX - 2, 8); }, {"copy_on_device"});
  refused<InvalidArgument>([&] { copy(4, d, 0, 64); }, {"copy_on_device", "overlap"});
  std::vector<float> back(64);
  refused<InvalidArgument>(
      [&] {
        std::lock_guard lock(vk().context().launch_mutex());
        raw().copy_to_host(back.data(), s, s.bytes - 4, 8);
      },
      {"copy_to_host", "fall outside"});
}

TEST_CASE("raw memory the device did not allocate: another device's, freed, oversized") {
  const Tensor host_t = seq({64}, ::nbx::host_device());
  const DeviceMemory foreign = host_t.storage()->memory();  // the host backend's allocation
  const Tensor dst = Tensor::zeros({64}, DType::kFloat32, vk());
  const Tensor src = seq({64}, vk());
  const DeviceMemory d = dst.storage()->memory();
  // Raw calls take the device's launch lock, as the ops do (refused() then runs ops itself).
  auto locked = [&](const std::function<void()>& f) {
    return [&, f] {
      std::lock_guard lock(vk().context().launch_mutex());
      f();
    };
  };
  refused<InvalidArgument>(locked([&] { raw().copy_on_device(d, 0, foreign, 0, 256); }),
                           {"copy_on_device", "not live memory of this device"});
  std::vector<float> back(64);
  refused<InvalidArgument>(locked([&] { raw().copy_to_host(back.data(), foreign, 0, 256); }),
                           {"copy_to_host", "not live memory of this device"});
  // A launch binding the foreign buffer is refused before the backend sees the handle.
  const KernelBuffer bufs[] = {{d, true}, {foreign, false}};
  refused<InvalidArgument>(
      locked([&] { raw().launch(kernel_launch(abi::CopyProbeParams{0}, bufs)); }),
      {"copy_probe", "not live memory of this device"});
  // A DeviceMemory claiming more bytes than its allocation.
  const KernelBuffer big[] = {{{d.handle, d.bytes * 2}, true}, {d, false}};
  refused<InvalidArgument>(
      locked([&] { raw().launch(kernel_launch(abi::CopyProbeParams{0}, big)); }),
      {"copy_probe", "names an allocation of"});
  // Freed memory, and a second free.
  DeviceMemory m;
  locked([&] {
    m = raw().allocate(256);
    raw().free(m);
  })();
  refused<InvalidArgument>(locked([&] { raw().copy_from_host(m, 0, back.data(), 16); }),
                           {"copy_from_host", "already freed"});
  refused<InvalidArgument>(locked([&] { raw().free(m); }), {"free", "already freed"});
  // The device still works: a real copy lands.
  locked([&] {
    raw().copy_on_device(d, 0, src.storage()->memory(), 0, 256);
    raw().copy_to_host(back.data(), d, 0, 256);
  })();
  for (int i = 0; i < 64; ++i) CHECK(back[i] == float(i));
}

// ---------------------------------------------------------------- the public API

TEST_CASE("public API on vulkan:0: shapes, dims, dtypes, devices") {
  const Device& h = ::nbx::host_device();
  const Tensor x = seq({2, 4, 3}, vk()), m = seq({2, 3}, vk());
  refused<InvalidArgument>(
      [&] {
        ops::matmul(m, seq({4, 5}, vk()));
      },
      {"matmul", "[2, 3]", "[4, 5]"});
  refused<InvalidArgument>(
      [&] {
        ops::matmul(seq({2, 2, 3}, vk()), seq({3, 3, 4}, vk()));
      },
      {"matmul", "[2, 2, 3]", "[3, 3, 4]"});
  refused<InvalidArgument>(
      [&] {
        ops::matmul(m.to(DType::kBool), seq({3, 2}, vk(), DType::kBool));
      },
      {"matmul", "bool"});
  refused<InvalidArgument>(
      [&] {
        ops::linear(m, seq({4, 3}, vk(), DType::kInt32));
      },
      {"linear", "float32", "int32"});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {4}); }, {"layer_norm", "[4]", "[2, 4, 3]"});
  refused<InvalidArgument>([&] { ops::group_norm(x, 3); }, {"group_norm", "3 groups"});
  refused<InvalidArgument>([&] { ops::batch_norm(x, seq({3}, vk()), seq({4}, vk())); },
                           {"batch_norm", "running_mean", "[3]"});
  refused<InvalidArgument>([&] { ops::softmax(x, 3); }, {"softmax", "dimension 3"});
  refused<InvalidArgument>([&] { ops::softmax(seq({3}, vk(), DType::kInt32), 0); },
                           {"softmax", "int32"});
  refused<InvalidArgument>([&] { ops::cumsum(x, -4); }, {"cumsum", "-4"});
  refused<InvalidArgument>([&] { ops::sum(x, {2, -1}); }, {"sum", "more than once"});
  refused<InvalidArgument>([&] { ops::amax(x, {3}); }, {"amax", "out of range"});
  refused<InvalidArgument>(
      [&] { ops::scaled_masked_softmax(m, 1, 1.0, Tensor::zeros({2}, DType::kBool, vk())); },
      {"scaled_masked_softmax", "[2]", "[2, 3]"});
  refused<InvalidArgument>([&] { ops::triu(seq({3}, vk())); }, {"triu", "[3]"});
  refused<InvalidArgument>([&] { ops::softmax(Tensor(), 0); }, {"softmax", "undefined"});
  refused<InvalidArgument>(
      [&] {
        ops::arange(Scalar(0), Scalar(std::int64_t(1) << 61), Scalar(1), DType::kInt64, vk());
      },
      {"arange", "2^63 bytes"});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {}); }, {"layer_norm", "normalized_shape"});
  // Operands on two devices.
  refused<InvalidArgument>([&] { ops::matmul(m, seq({3, 2}, h)); }, {"matmul", "vulkan:0", "host"});
  refused<InvalidArgument>([&] { ops::addmm(seq({2, 2}, h), m, seq({3, 2}, vk())); }, {"addmm"});
  refused<InvalidArgument>([&] { ops::layer_norm(x, {3}, seq({3}, h)); },
                           {"layer_norm", "weight", "host", "vulkan:0"});
  refused<InvalidArgument>([&] { ops::batch_norm(x, seq({4}, h), seq({4}, vk())); },
                           {"batch_norm", "running_mean", "host"});
  refused<InvalidArgument>(
      [&] {
        ops::scaled_masked_softmax(m, 1, 1.0, Tensor::zeros({2, 3}, DType::kBool, h));
      },
      {"scaled_masked_softmax", "mask", "host"});
  // Accepted as PyTorch does, and equal to the host: empty tensors.
  check_close(ops::softmax(seq({0, 3}, vk()), 1), ops::softmax(seq({0, 3}, h), 1));
  check_close(ops::sum(seq({0, 3}, vk()), {0}), ops::sum(seq({0, 3}, h), {0}));
  check_close(ops::matmul(seq({2, 0}, vk()), seq({0, 3}, vk())),
              Tensor::zeros({2, 3}, DType::kFloat32));
  check_close(ops::cumsum(seq({3, 0}, vk()), 1), seq({3, 0}, h));
  check_close(ops::layer_norm(seq({0, 3}, vk()), {3}), seq({0, 3}, h));
}

TEST_CASE("out of memory on vulkan:0: a 1 PiB tensor, the device still usable") {
  vk().empty_cache();
  const AllocatorStats before = vk().memory_stats();
  const std::uint64_t pib = std::uint64_t(1) << 50;
  try {
    Tensor::empty({std::int64_t(pib / 4)}, DType::kFloat32, vk());
    FAIL("a 1 PiB allocation succeeded");
  } catch (const OutOfMemory& e) {
    CHECK(e.requested() >= pib);
    CHECK(e.free_bytes() < pib);
    const std::string m = e.what();
    CAPTURE(m);
    CHECK(m.find("vulkan:0") != std::string::npos);
    CHECK(m.find("requested") != std::string::npos);
  }
  CHECK(vk().memory_stats().allocated == before.allocated);
  // A product whose output alone exceeds the device: [2^20, 1] @ [1, 2^28] float32.
  const Tensor a = Tensor::ones({1, 1}, DType::kFloat32, vk()).expand({1 << 20, 1});
  const Tensor b = Tensor::ones({1, 1}, DType::kFloat32, vk()).expand({1, 1 << 28});
  CHECK_THROWS_AS(ops::matmul(a, b), OutOfMemory);
  CHECK_NOTHROW(raw().synchronize());
  device_still_works();
}

}  // namespace
}  // namespace nbx::vktest
