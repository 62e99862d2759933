// The "norm" family on the GPU against the host reference, through raw launches:
// layer_norm, rms_norm, group_norm and batch_norm (inference) in every float dtype, with and
// without weight and bias (in float32 or the input's dtype), rows from 1 to 128256
// elements and lane groups of 1 to 256.
#include <doctest/doctest.h>

#include <random>
#include <span>

#include "core/errors.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

std::vector<std::byte> random_values(DType t, std::int64_t n, double lo, double hi,
                                     std::mt19937_64& rng) {
  std::vector<std::byte> v(std::size_t(n) * dtype_size(t));
  std::uniform_real_distribution<double> u(lo, hi);
  for (std::int64_t i = 0; i < n; ++i) put_element(v, t, i, u(rng), 0);
  return v;
}

// Buffers: out, in, weight, bias, running mean, running var (empty where absent).
std::vector<std::byte> run_norm(BackendDevice& d, const abi::NormParams& p,
                                const std::vector<std::vector<std::byte>>& inputs,
                                std::size_t out_bytes) {
  std::vector<KernelBuffer> buffers;
  std::vector<std::byte> out(out_bytes, std::byte{0x5a});
  auto upload = [&](const std::vector<std::byte>& bytes, bool written) {
    if (bytes.empty()) {
      buffers.push_back({DeviceMemory{}, false});
      return;
    }
    DeviceMemory m = d.allocate(bytes.size());
    d.copy_from_host(m, 0, bytes.data(), bytes.size());
    buffers.push_back({m, written});
  };
  upload(out, true);
  for (const auto& b : inputs) upload(b, false);
  d.launch(
      {nbx::KernelFamily::kNorm, buffers, std::as_bytes(std::span<const abi::NormParams>(&p, 1))});
  d.synchronize();
  d.copy_to_host(out.data(), buffers[0].memory, 0, out_bytes);
  for (KernelBuffer& b : buffers)
    if (b.memory.handle) d.free(b.memory);
  return out;
}

struct NormCase {
  abi::NormOp op;
  DType t;
  std::int64_t n, channels, inner, groups;  // input [n, channels, inner]
  bool weight, bias;
  DType param;
  int row_tile;
  std::uint64_t seed;
};

void check_norm(const NormCase& nc) {
  abi::NormParams p{};
  p.op = nc.op;
  p.in_dtype = p.out_dtype = std::int32_t(nc.t);
  p.accumulate_dtype = std::int32_t(nc.t == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32);
  p.param_dtype = std::int32_t(nc.param);
  p.has_weight = nc.weight;
  p.has_bias = nc.bias;
  p.row_tile = nc.row_tile;
  p.eps = 1e-5;
  p.channels = nc.channels;
  p.inner = nc.inner;
  p.groups = nc.groups;
  const std::int64_t numel = nc.n * nc.channels * nc.inner;
  std::int64_t params = nc.channels * nc.inner;  // layer/rms: one per row element
  switch (nc.op) {
    case abi::kNorm_group_norm:
      p.rows = nc.n * nc.groups;
      p.row_len = numel / p.rows;
      params = nc.channels;
      break;
    case abi::kNorm_batch_norm:
      p.rows = nc.n;
      p.row_len = nc.channels * nc.inner;
      params = nc.channels;
      break;
    default:
      p.rows = nc.n;
      p.row_len = nc.channels * nc.inner;
  }
  std::mt19937_64 rng(nc.seed);
  // Inputs with an offset mean, so layer/group norm must subtract it.
  std::vector<std::vector<std::byte>> inputs(nc.op == abi::kNorm_batch_norm ? 5 : 3);
  inputs[0] = random_values(nc.t, numel, -1.5, 2.5, rng);
  if (nc.weight) inputs[1] = random_values(nc.param, params, 0.5, 2.0, rng);
  if (nc.bias) inputs[2] = random_values(nc.param, params, -1.0, 1.0, rng);
  if (nc.op == abi::kNorm_batch_norm) {
    inputs[3] = random_values(nc.param, params, -0.5, 0.5, rng);
    inputs[4] = random_values(nc.param, params, 0.5, 3.0, rng);
  }
  const std::size_t out_bytes = std::size_t(numel) * dtype_size(nc.t);
  const auto expected = run_norm(*devices().host, p, inputs, out_bytes);
  const auto got = run_norm(*devices().gpu[0].device, p, inputs, out_bytes);
  Case c;
  c.out.dtype = nc.t;
  INFO("norm op " << int(nc.op) << " " << dtype_name(nc.t) << " [" << nc.n << ", " << nc.channels
                  << ", " << nc.inner << "] groups " << nc.groups << " weight " << nc.weight
                  << " bias " << nc.bias << " param " << dtype_name(nc.param) << " row_tile "
                  << nc.row_tile << " seed " << nc.seed);
  const std::string problem = compare_outputs(c, expected, got);
  CHECK_MESSAGE(problem.empty(), problem);
}

constexpr DType kFloatTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                 DType::kFloat64};

TEST_CASE("layer_norm and rms_norm match the host, with and without weight and bias") {
  std::uint64_t seed = 11000;
  for (abi::NormOp op : {abi::kNorm_layer_norm, abi::kNorm_rms_norm})
    for (DType t : kFloatTypes)
      for (int affine = 0; affine < 4; ++affine) {
        const bool w = affine & 1, b = (affine & 2) && op == abi::kNorm_layer_norm;
        for (std::int64_t len : {1, 7, 1000, 5000})
          for (int tile : {1, 64, 256})
            check_norm(
                {op, t, 5, len, 1, 1, w, b, affine == 3 ? DType::kFloat32 : t, tile, seed++});
        check_norm({op, t, 2, 128256, 1, 1, w, b, t, 256, seed++});
      }
}

TEST_CASE("group_norm and batch_norm match the host, with and without weight and bias") {
  std::uint64_t seed = 12000;
  for (DType t : kFloatTypes)
    for (int affine = 0; affine < 4; ++affine) {
      const bool w = affine & 1, b = affine & 2;
      const DType param = affine == 3 ? DType::kFloat32 : t;
      for (int tile : {1, 32, 128}) {
        check_norm({abi::kNorm_group_norm, t, 3, 12, 49, 4, w, b, param, tile, seed++});
        check_norm({abi::kNorm_group_norm, t, 2, 6, 7, 6, w, b, param, tile, seed++});
        check_norm({abi::kNorm_batch_norm, t, 4, 12, 49, 1, w, b, param, tile, seed++});
        check_norm({abi::kNorm_batch_norm, t, 3, 5, 1, 1, w, b, param, tile, seed++});
      }
    }
}

TEST_CASE("a malformed norm launch is refused by name") {
  abi::NormParams p{};
  p.op = abi::kNorm_batch_norm;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = p.param_dtype = std::int32_t(DType::kFloat32);
  p.rows = 2, p.row_len = 4, p.channels = 4, p.inner = 1, p.groups = 1;
  // batch_norm without its running statistics bound
  std::mt19937_64 rng(1);
  CHECK_THROWS_AS(
      run_norm(*devices().gpu[0].device, p, {random_values(DType::kFloat32, 8, 1, 2, rng)}, 32),
      InvalidArgument);
}

}  // namespace
}  // namespace nbx::gputest
