// The "softmax" family on the GPU against the host reference, through raw launches so that
// both variants are forced on every row length: softmax / log_softmax in every float dtype,
// rows of 1 to 128256 elements, lane groups of 1 to 256, scale, row-broadcast and full
// masks (with fully masked rows), the softmax dim strided (dim 0 of a 2-d tensor), and
// PyTorch's special rows (+inf, only -inf, NaN, -inf next to finite values).
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <span>

#include "core/errors.hpp"
#include "tests/common/softmax_raw_case.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

std::vector<std::byte> run_softmax(BackendDevice& d, const abi::SoftmaxParams& p,
                                   const std::vector<std::byte>& in, std::size_t out_bytes,
                                   const std::vector<std::byte>* mask) {
  std::vector<KernelBuffer> buffers;
  std::vector<std::byte> out(out_bytes, std::byte{0x5a});
  auto upload = [&](const std::vector<std::byte>& bytes, bool written) {
    DeviceMemory m = d.allocate(bytes.size());
    d.copy_from_host(m, 0, bytes.data(), bytes.size());
    buffers.push_back({m, written});
  };
  upload(out, true);
  upload(in, false);
  if (mask) upload(*mask, false);
  d.launch({nbx::KernelFamily::kSoftmax, buffers,
            std::as_bytes(std::span<const abi::SoftmaxParams>(&p, 1))});
  d.synchronize();
  d.copy_to_host(out.data(), buffers[0].memory, 0, out_bytes);
  for (KernelBuffer& b : buffers) d.free(b.memory);
  return out;
}

using testing::MaskKind;
using testing::SoftmaxCase;

void check_softmax(const SoftmaxCase& sc, bool specials = false) {
  testing::SoftmaxLaunch l = testing::make_softmax_launch(sc, specials);
  abi::SoftmaxParams& p = l.params;
  const auto* m = p.has_mask ? &l.mask : nullptr;
  const auto expected = run_softmax(*devices().host, p, l.in, l.out_bytes, m);
  Case c;
  c.out.dtype = sc.t;
  // Both strided variants, one-pass only where its row cache fits (make_softmax_launch).
  const bool one_pass_fits = p.variant == abi::kSoftmaxOnePass;
  for (int variant : {abi::kSoftmaxOnePass, abi::kSoftmaxLooped}) {
    if (variant == abi::kSoftmaxOnePass && !one_pass_fits) continue;
    p.variant = variant;
    const auto got = run_softmax(*devices().gpu[0].device, p, l.in, l.out_bytes, m);
    INFO((sc.log ? "log_softmax " : "softmax ")
         << dtype_name(sc.t) << " rows " << sc.rows << " len " << sc.len << " transposed "
         << sc.transposed << " mask " << int(sc.mask) << " scale " << sc.scale << " row_tile "
         << sc.row_tile << " variant " << variant << " specials " << specials << " seed "
         << sc.seed);
    const std::string problem = compare_outputs(c, expected, got);
    CHECK_MESSAGE(problem.empty(), problem);
  }
}

constexpr DType kFloatTypes[] = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                 DType::kFloat64};

TEST_CASE("softmax and log_softmax match the host on rows of 1 to 128256 elements") {
  std::uint64_t seed = 7000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true}) {
      for (std::int64_t len : {1, 7, 1000, 5000})
        for (int tile : {1, 32, 64, 256})
          check_softmax({t, log, 9, len, false, MaskKind::kNone, 1.0, tile, seed++});
      check_softmax({t, log, 3, 128256, false, MaskKind::kNone, 1.0, 256, seed++});
    }
}

TEST_CASE("scaled and masked softmax, and a strided softmax dim, match the host") {
  std::uint64_t seed = 8000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true}) {
      for (MaskKind mk : {MaskKind::kRowBroadcast, MaskKind::kFull})
        for (std::int64_t len : {7, 1000, 5000})
          check_softmax({t, log, 6, len, false, mk, 0.375, 64, seed++});
      for (std::int64_t len : {1, 7, 1000})
        check_softmax({t, log, 33, len, true, MaskKind::kNone, 1.0, 32, seed++});
      check_softmax({t, log, 5, 1000, true, MaskKind::kFull, 2.0, 128, seed++});
    }
}

TEST_CASE("softmax special rows follow PyTorch (+inf, only -inf, NaN give NaN)") {
  std::uint64_t seed = 9000;
  for (DType t : kFloatTypes)
    for (bool log : {false, true})
      for (std::int64_t len : {1, 7, 1000})
        for (int tile : {1, 64})
          check_softmax({t, log, 6, len, false, MaskKind::kNone, 1.0, tile, seed++}, true);
}

}  // namespace
}  // namespace nbx::gputest
