// The reference semantics of the "matmul" family: out[b] = alpha * A[b] @ B[b] + beta *
// addend[b], a plain triple loop per batch entry. Floats accumulate in float64 (whatever
// the GPU's accumulate dtype), integers in wrapping 64-bit arithmetic, and the result is
// rounded once to the output dtype. The tile fields of the parameter block are ignored.
#include <cmath>
#include <cstdint>
#include <string>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

// The base offset of batch entry `b` (row-major over the batch dims) of one operand.
std::int64_t batch_offset(const abi::MatmulParams& p, std::int64_t b, std::int64_t base,
                          const std::int64_t* strides) {
  std::int64_t off = base;
  for (int d = p.batch_ndim - 1; d >= 0; --d) {
    const std::int64_t size = p.batch_sizes[d];
    off += (b % size) * strides[d];
    b /= size;
  }
  return off;
}

void check_launch(const abi::MatmulParams& p, std::size_t n_buffers) {
  const std::size_t want = p.has_addend ? 4 : 3;
  if (n_buffers != want || p.batch_ndim < 0 || p.batch_ndim > abi::kMaxDims || p.m < 0 || p.n < 0 ||
      p.k < 0 || p.batch < 0)
    throw InvalidArgument("matmul", "matmul: malformed launch (" + std::to_string(n_buffers) +
                                        " buffers, " + std::to_string(p.batch_ndim) +
                                        " batch dims, m " + std::to_string(p.m) + ", n " +
                                        std::to_string(p.n) + ", k " + std::to_string(p.k) + ").");
}

}  // namespace

void run_family(const abi::MatmulParams& p, std::span<const KernelBuffer> buffers) {
  check_launch(p, buffers.size());
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* a = static_cast<const std::byte*>(buffers[1].memory.handle);
  const auto* b = static_cast<const std::byte*>(buffers[2].memory.handle);
  const auto* c = p.has_addend ? static_cast<const std::byte*>(buffers[3].memory.handle) : nullptr;
  const auto in_dtype = static_cast<DType>(p.a_dtype);
  const auto out_dtype = static_cast<DType>(p.out_dtype);
  const auto addend_dtype = static_cast<DType>(p.addend_dtype);
  const bool fl = is_floating(static_cast<DType>(p.accumulate_dtype));
  // PyTorch ignores the addend when beta is 0: NaN or inf there does not propagate.
  const bool use_addend = c != nullptr && p.beta != 0;
  const auto alpha_i = static_cast<std::uint64_t>(static_cast<std::int64_t>(p.alpha));
  const auto beta_i = static_cast<std::uint64_t>(static_cast<std::int64_t>(p.beta));

  for (std::int64_t e = 0; e < p.batch; ++e) {
    const std::int64_t a0 = batch_offset(p, e, p.a_offset, p.a_batch_strides);
    const std::int64_t b0 = batch_offset(p, e, p.b_offset, p.b_batch_strides);
    const std::int64_t o0 = batch_offset(p, e, p.out_offset, p.out_batch_strides);
    const std::int64_t c0 =
        use_addend ? batch_offset(p, e, p.addend_offset, p.addend_batch_strides) : 0;
    for (std::int64_t i = 0; i < p.m; ++i) {
      for (std::int64_t j = 0; j < p.n; ++j) {
        double f = 0;
        std::uint64_t n = 0;  // wraps like the integer dtype's two's complement
        for (std::int64_t q = 0; q < p.k; ++q) {
          const Value x = load(a, in_dtype, a0 + i * p.a_row_stride + q * p.a_col_stride);
          const Value y = load(b, in_dtype, b0 + q * p.b_row_stride + j * p.b_col_stride);
          if (fl)
            f += as_f(x) * as_f(y);
          else
            n += static_cast<std::uint64_t>(as_i(x)) * static_cast<std::uint64_t>(as_i(y));
        }
        Value r = fl ? from_double(p.alpha * f) : from_int(static_cast<std::int64_t>(alpha_i * n));
        if (use_addend) {
          const Value z =
              load(c, addend_dtype, c0 + i * p.addend_row_stride + j * p.addend_col_stride);
          r = fl ? from_double(r.f + p.beta * as_f(z))
                 : from_int(
                       static_cast<std::int64_t>(static_cast<std::uint64_t>(r.i) +
                                                 beta_i * static_cast<std::uint64_t>(as_i(z))));
        }
        store(out, out_dtype, o0 + i * p.out_row_stride + j * p.out_col_stride, r);
      }
    }
  }
}

}  // namespace nbx::host
