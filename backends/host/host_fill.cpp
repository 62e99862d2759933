// The reference semantics of the "fill" family: arange and linspace (values computed from
// the element's index, in float64 or int64) and triu/tril (a masked copy over the last two
// dims of any batch); eye (1 on the diagonal of a matrix, 0 elsewhere).
#include <cstdint>
#include <string>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

// arange: start + i * step. `in_dtype` is the dtype the values are computed in (int64 when
// start and step are integers, so values above 2^53 stay exact).
Value arange_value(const abi::FillParams& p, std::int64_t i) {
  if (!is_floating(static_cast<DType>(p.in_dtype)))
    return from_int(static_cast<std::int64_t>(static_cast<std::uint64_t>(p.start.i) +
                                              static_cast<std::uint64_t>(i) *
                                                  static_cast<std::uint64_t>(p.step.i)));
  return from_double(p.start.f + static_cast<double>(i) * p.step.f);
}

// linspace, PyTorch's symmetric formula: the first half counts up from start, the second
// half down from end, so both ends are exact.
Value linspace_value(const abi::FillParams& p, std::int64_t i) {
  const std::int64_t n = p.numel;
  if (i < n / 2) return from_double(p.start.f + static_cast<double>(i) * p.step.f);
  return from_double(p.end.f - static_cast<double>(n - 1 - i) * p.step.f);
}

void fill_range(const abi::FillParams& p, std::byte* out) {
  const auto out_dtype = static_cast<DType>(p.out_dtype);
  const std::int64_t stride = p.ndim == 1 ? p.out_strides[0] : 1;
  for (std::int64_t i = 0; i < p.numel; ++i)
    store(out, out_dtype, p.out_offset + i * stride,
          p.op == abi::kFill_arange ? arange_value(p, i) : linspace_value(p, i));
}

void fill_triangle(const abi::FillParams& p, std::byte* out, const std::byte* in) {
  const auto out_dtype = static_cast<DType>(p.out_dtype);
  const auto in_dtype = static_cast<DType>(p.in_dtype);
  std::int64_t idx[abi::kMaxDims] = {};
  std::int64_t o = p.out_offset, s = p.in_offset;
  const int row_dim = p.ndim - 2, col_dim = p.ndim - 1;
  for (std::int64_t e = 0; e < p.numel; ++e) {
    const std::int64_t d = idx[col_dim] - idx[row_dim];
    const bool keep = p.op == abi::kFill_triu ? d >= p.diagonal : d <= p.diagonal;
    // Zero of the output's own kind, so a bool or integer output gets false / 0.
    store(out, out_dtype, o, keep ? load(in, in_dtype, s) : from_int(0));
    for (int k = p.ndim - 1; k >= 0; --k) {
      o += p.out_strides[k];
      s += p.in_strides[k];
      if (++idx[k] < p.sizes[k]) break;
      o -= p.out_strides[k] * p.sizes[k];
      s -= p.in_strides[k] * p.sizes[k];
      idx[k] = 0;
    }
  }
}

void fill_eye(const abi::FillParams& p, std::byte* out) {
  const auto out_dtype = static_cast<DType>(p.out_dtype);
  for (std::int64_t r = 0; r < p.sizes[0]; ++r)
    for (std::int64_t c = 0; c < p.sizes[1]; ++c)
      store(out, out_dtype, p.out_offset + r * p.out_strides[0] + c * p.out_strides[1],
            from_int(r == c ? 1 : 0));  // of the output's own kind: true/false, 1/0, 1.0/0.0
}

}  // namespace

void run_family(const abi::FillParams& p, std::span<const KernelBuffer> buffers) {
  const bool triangle = p.op == abi::kFill_triu || p.op == abi::kFill_tril;
  const bool range = p.op == abi::kFill_arange || p.op == abi::kFill_linspace;
  const bool eye = p.op == abi::kFill_eye;
  const std::size_t want = triangle ? 2 : 1;
  if ((!triangle && !range && !eye) || buffers.size() != want || p.ndim < 0 ||
      p.ndim > abi::kMaxDims || (triangle && p.ndim < 2) || (range && p.ndim != 1) ||
      (eye && p.ndim != 2))
    throw InvalidArgument("fill", "fill: malformed launch (op " + std::to_string(p.op) + ", " +
                                      std::to_string(buffers.size()) + " buffers, " +
                                      std::to_string(p.ndim) + " dims).");
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  if (range) return fill_range(p, out);
  if (eye) return fill_eye(p, out);
  fill_triangle(p, out, static_cast<const std::byte*>(buffers[1].memory.handle));
}

}  // namespace nbx::host
