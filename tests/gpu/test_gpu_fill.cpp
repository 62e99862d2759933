// The "fill" family (arange, linspace, triu, tril) on the GPU against the host reference.
#include <doctest/doctest.h>

#include <span>

#include "core/errors.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

// Runs one fill launch on `d` over an output buffer of `out_elements` (starting as
// 0x5a bytes, so elements the view skips must stay that way) and returns its bytes.
std::vector<std::byte> run_fill(BackendDevice& d, const abi::FillParams& p,
                                std::int64_t out_elements, const std::vector<std::byte>* in) {
  const std::size_t out_bytes =
      std::size_t(out_elements) * dtype_size(static_cast<DType>(p.out_dtype));
  std::vector<std::byte> out(out_bytes, std::byte{0x5a});
  std::vector<KernelBuffer> buffers;
  DeviceMemory o = d.allocate(out_bytes);
  d.copy_from_host(o, 0, out.data(), out_bytes);
  buffers.push_back({o, true});
  if (in) {
    DeviceMemory i = d.allocate(in->size());
    d.copy_from_host(i, 0, in->data(), in->size());
    buffers.push_back({i, false});
  }
  d.launch(
      {nbx::KernelFamily::kFill, buffers, std::as_bytes(std::span<const abi::FillParams>(&p, 1))});
  d.synchronize();
  d.copy_to_host(out.data(), o, 0, out_bytes);
  for (KernelBuffer& b : buffers) d.free(b.memory);
  return out;
}

void check_fill(const abi::FillParams& p, std::int64_t out_elements,
                const std::vector<std::byte>* in, const std::string& label) {
  Case c;  // only the output dtype matters to compare_outputs
  c.out.dtype = static_cast<DType>(p.out_dtype);
  const auto expected = run_fill(*devices().host, p, out_elements, in);
  for (Devices::Variant& v : devices().gpu) {
    const std::string problem =
        compare_outputs(c, expected, run_fill(*v.device, p, out_elements, in));
    INFO(label << " [" << v.name << "]");
    CHECK_MESSAGE(problem.empty(), problem);
  }
}

abi::FillParams range(abi::FillOp op, DType out, DType in, std::int64_t n, std::int64_t stride) {
  abi::FillParams p{};
  p.op = op;
  p.out_dtype = std::int32_t(out);
  p.in_dtype = std::int32_t(in);
  p.ndim = 1;
  p.numel = n;
  p.sizes[0] = n;
  p.out_strides[0] = stride;
  p.out_offset = stride > 1 ? 1 : 0;
  return p;
}

TEST_CASE("arange and linspace match the host reference") {
  for (DType out : kAllDTypes) {
    if (out == DType::kBool) continue;
    for (std::int64_t stride : {1, 3}) {
      const std::int64_t n = 1999;
      abi::FillParams p = range(abi::kFill_arange, out, DType::kInt64, n, stride);
      p.start = {-40.0, -40}, p.step = {3.0, 3};
      check_fill(p, 1 + n * stride, nullptr, "arange int64 -> " + std::string(dtype_name(out)));
      if (!is_floating(out)) continue;
      p = range(abi::kFill_arange, out, DType::kFloat64, n, stride);
      p.start = {-2.5, 0}, p.step = {0.125, 0};
      check_fill(p, 1 + n * stride, nullptr, "arange float -> " + std::string(dtype_name(out)));
      p = range(abi::kFill_linspace, out, DType::kFloat64, n, stride);
      p.start = {-3.0, 0}, p.end = {7.0, 0}, p.step = {10.0 / double(n - 1), 0};
      check_fill(p, 1 + n * stride, nullptr, "linspace -> " + std::string(dtype_name(out)));
    }
  }
  // int64 values above 2^53 stay exact.
  abi::FillParams p = range(abi::kFill_arange, DType::kInt64, DType::kInt64, 1000, 1);
  p.start = {0.0, (std::int64_t(1) << 60) + 1}, p.step = {0.0, 1000000007};
  check_fill(p, 1000, nullptr, "arange int64 above 2^53");
}

TEST_CASE("triu and tril match the host reference, for every dtype and diagonal") {
  const std::int64_t b = 3, r = 17, c = 23;
  for (DType t : kAllDTypes)
    for (int op : {abi::kFill_triu, abi::kFill_tril})
      for (std::int64_t diagonal : {-30, -2, 0, 5})
        for (bool transposed : {false, true}) {
          Generator g(std::uint64_t(77 + diagonal));
          std::vector<std::byte> in;
          g.fill(in, t, b * r * c, Role::kGeneral);
          abi::FillParams p{};
          p.op = op;
          p.out_dtype = p.in_dtype = std::int32_t(t);
          p.ndim = 3;
          p.numel = b * r * c;
          p.sizes[0] = b, p.sizes[1] = r, p.sizes[2] = c;
          p.out_strides[0] = r * c, p.out_strides[1] = c, p.out_strides[2] = 1;
          p.in_strides[0] = r * c;
          p.in_strides[1] = transposed ? 1 : c;
          p.in_strides[2] = transposed ? r : 1;
          p.diagonal = diagonal;
          check_fill(p, b * r * c, &in,
                     std::string(op == abi::kFill_triu ? "triu " : "tril ") +
                         std::string(dtype_name(t)) + " diagonal " + std::to_string(diagonal) +
                         (transposed ? " transposed" : ""));
        }
}

TEST_CASE("malformed fill launches are refused") {
  abi::FillParams p = range(abi::kFill_arange, DType::kFloat32, DType::kInt64, 100, 1);
  CHECK_THROWS_AS(run_fill(*devices().gpu[0].device, p, 99, nullptr), InvalidArgument);
  p.op = 17;
  CHECK_THROWS_AS(run_fill(*devices().gpu[0].device, p, 100, nullptr), InvalidArgument);
}

}  // namespace
}  // namespace nbx::gputest
