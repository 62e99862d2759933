// The reference semantics of every reduction (PyTorch's), computed in float64 / int64.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "backends/host/host_backend.hpp"
#include "backends/host/host_scratch.hpp"
#include "backends/host/host_values.hpp"
#include "core/errors.hpp"

namespace nbx::host {
namespace {

// Visits positions of an n-d index space in row-major order, carrying one strided offset.
class Odometer {
 public:
  Odometer(int ndim, const std::int64_t* sizes, const std::int64_t* strides, std::int64_t base)
      : ndim_(ndim), sizes_(sizes), strides_(strides), offset_(base) {}
  std::int64_t offset() const { return offset_; }
  void next() {
    for (int d = ndim_ - 1; d >= 0; --d) {
      offset_ += strides_[d];
      if (++idx_[d] < sizes_[d]) return;
      offset_ -= strides_[d] * sizes_[d];
      idx_[d] = 0;
    }
  }

 private:
  int ndim_;
  const std::int64_t* sizes_;
  const std::int64_t* strides_;
  std::int64_t offset_;
  std::int64_t idx_[abi::kMaxDims] = {};
};

// The row's elements in reduced-dims row-major order, in launch scratch (host_scratch.hpp:
// within the host memory cap, OutOfMemory where the host cannot hold the row).
struct Row {
  explicit Row(std::int64_t row_len) : values(row_len) {}
  Scratch<Value> values;
};

bool is_nan(const Value& v) {
  return v.is_float && std::isnan(v.f);
}

// Index of the winning element: the first NaN if any, else the first extreme.
std::int64_t arg_extreme(const Row& row, bool want_max) {
  std::int64_t best = 0;
  for (std::int64_t i = 0; i < static_cast<std::int64_t>(row.values.size()); ++i) {
    const Value& v = row.values[static_cast<std::size_t>(i)];
    const Value& b = row.values[static_cast<std::size_t>(best)];
    if (is_nan(b)) break;
    if (is_nan(v)) return i;
    const bool better =
        v.is_float ? (want_max ? v.f > b.f : v.f < b.f) : (want_max ? v.i > b.i : v.i < b.i);
    if (better) best = i;
  }
  return best;
}

double float_norm(const Row& row, double p) {
  double acc = 0;
  if (std::isinf(p)) {
    acc = p > 0 ? 0.0 : INFINITY;
    for (const Value& v : row.values) {
      const double a = std::fabs(as_f(v));
      if (std::isnan(a)) return NAN;
      acc = p > 0 ? std::max(acc, a) : std::min(acc, a);
    }
    return acc;
  }
  for (const Value& v : row.values) {
    const double a = std::fabs(as_f(v));
    if (p == 0)
      acc += a != 0;
    else if (p == 1)
      acc += a;
    else if (p == 2)
      acc += a * a;
    else
      acc += std::pow(a, p);
  }
  if (p == 0 || p == 1) return acc;
  if (p == 2) return std::sqrt(acc);
  return std::pow(acc, 1.0 / p);
}

double row_mean(const Row& row) {
  double sum = 0;
  for (const Value& v : row.values) sum += as_f(v);
  return sum / static_cast<double>(row.values.size());
}

double variance(const Row& row, double correction) {
  const double n = static_cast<double>(row.values.size());
  const double mean = row_mean(row);
  double m2 = 0;
  for (const Value& v : row.values) m2 += (as_f(v) - mean) * (as_f(v) - mean);
  return m2 / std::max(0.0, n - correction);
}

double log_sum_exp(const Row& row) {
  double m = -INFINITY;
  for (const Value& v : row.values) {
    if (std::isnan(as_f(v))) return NAN;
    m = std::max(m, as_f(v));
  }
  // PyTorch shifts by the maximum unless it is infinite.
  const double shift = std::isinf(m) ? 0.0 : m;
  double s = 0;
  for (const Value& v : row.values) s += std::exp(as_f(v) - shift);
  return std::log(s) + shift;
}

// The extremes of a row, NaN propagating to both (torch.aminmax).
void min_and_max(const Row& row, Value& lo, Value& hi) {
  lo = row.values[static_cast<std::size_t>(arg_extreme(row, false))];
  hi = row.values[static_cast<std::size_t>(arg_extreme(row, true))];
}

// The reduced value of one row. `index` receives the winner's position for arg/with_index
// ops; `second` the second output of aminmax (the maximum) and var_mean/std_mean (the mean).
Value reduce_row(const abi::ReduceParams& p, const Row& row, std::int64_t& index, Value& second) {
  const bool fl = is_floating(static_cast<DType>(p.accumulate_dtype));
  const auto n = static_cast<std::int64_t>(row.values.size());
  switch (p.op) {
    case abi::kReduce_sum:
    case abi::kReduce_mean: {
      double f = 0;
      std::uint64_t i = 0;  // wraps like int64 two's complement
      for (const Value& v : row.values)
        fl ? void(f += as_f(v)) : void(i += static_cast<std::uint64_t>(as_i(v)));
      if (p.op == abi::kReduce_mean) return from_double(f / static_cast<double>(n));
      return fl ? from_double(f) : from_int(static_cast<std::int64_t>(i));
    }
    case abi::kReduce_prod: {
      double f = 1;
      std::uint64_t i = 1;
      for (const Value& v : row.values)
        fl ? void(f *= as_f(v)) : void(i *= static_cast<std::uint64_t>(as_i(v)));
      return fl ? from_double(f) : from_int(static_cast<std::int64_t>(i));
    }
    case abi::kReduce_amax:
    case abi::kReduce_max_with_index:
    case abi::kReduce_argmax:
      index = arg_extreme(row, true);
      return p.op == abi::kReduce_argmax ? from_int(index)
                                         : row.values[static_cast<std::size_t>(index)];
    case abi::kReduce_amin:
    case abi::kReduce_min_with_index:
    case abi::kReduce_argmin:
      index = arg_extreme(row, false);
      return p.op == abi::kReduce_argmin ? from_int(index)
                                         : row.values[static_cast<std::size_t>(index)];
    case abi::kReduce_var:
      return from_double(variance(row, p.attr));
    case abi::kReduce_std:
      return from_double(std::sqrt(variance(row, p.attr)));
    case abi::kReduce_norm:
      return from_double(float_norm(row, p.attr));
    case abi::kReduce_logsumexp:
      return from_double(log_sum_exp(row));
    case abi::kReduce_any: {
      bool r = false;
      for (const Value& v : row.values) r = r || truthy(v);
      return from_int(r);
    }
    case abi::kReduce_all: {
      bool r = true;
      for (const Value& v : row.values) r = r && truthy(v);
      return from_int(r);
    }
    case abi::kReduce_count_nonzero: {
      std::int64_t c = 0;
      for (const Value& v : row.values) c += truthy(v);
      return from_int(c);
    }
    case abi::kReduce_aminmax: {
      Value lo;
      min_and_max(row, lo, second);
      return lo;
    }
    case abi::kReduce_nansum:
    case abi::kReduce_nanmean: {
      double f = 0;
      std::uint64_t i = 0;  // integers have no NaN: sum's wrapping int64
      std::int64_t counted = 0;
      for (const Value& v : row.values) {
        if (is_nan(v)) continue;
        fl ? void(f += as_f(v)) : void(i += static_cast<std::uint64_t>(as_i(v)));
        ++counted;
      }
      if (p.op == abi::kReduce_nanmean) return from_double(f / static_cast<double>(counted));
      return fl ? from_double(f) : from_int(static_cast<std::int64_t>(i));
    }
    case abi::kReduce_var_mean:
    case abi::kReduce_std_mean: {
      second = from_double(row_mean(row));
      const double v = variance(row, p.attr);
      return from_double(p.op == abi::kReduce_std_mean ? std::sqrt(v) : v);
    }
    default:
      break;
  }
  throw Internal("reduce: the host has no implementation of reduce op " + std::to_string(p.op) +
                 ".");
}

bool writes_index_buffer(std::int32_t op) {
  return op == abi::kReduce_max_with_index || op == abi::kReduce_min_with_index;
}
bool writes_second_value(std::int32_t op) {
  return op == abi::kReduce_aminmax || op == abi::kReduce_var_mean || op == abi::kReduce_std_mean;
}

}  // namespace

void run_family(const abi::ReduceParams& p, std::span<const KernelBuffer> buffers) {
  const std::size_t want = writes_index_buffer(p.op) || writes_second_value(p.op) ? 3 : 2;
  if (buffers.size() != want || p.out_ndim < 0 || p.out_ndim > abi::kMaxDims || p.red_ndim < 0 ||
      p.red_ndim > abi::kMaxDims)
    throw InvalidArgument("reduce", "reduce: malformed launch (" + std::to_string(buffers.size()) +
                                        " buffers, " + std::to_string(p.out_ndim) + " kept and " +
                                        std::to_string(p.red_ndim) + " reduced dims).");
  auto* out = static_cast<std::byte*>(buffers[0].memory.handle);
  const auto* in = static_cast<const std::byte*>(buffers[1].memory.handle);
  auto* idx = want == 3 ? static_cast<std::byte*>(buffers[2].memory.handle) : nullptr;
  const auto in_dtype = static_cast<DType>(p.in_dtype);
  const auto out_dtype = static_cast<DType>(p.out_dtype);

  Odometer out_pos(p.out_ndim, p.out_sizes, p.out_strides, p.out_offset);
  Odometer in_row(p.out_ndim, p.out_sizes, p.in_kept_strides, p.in_offset);
  Odometer idx_pos(p.out_ndim, p.out_sizes, p.index_strides, p.index_offset);
  Row row(p.row_len);
  for (std::int64_t r = 0; r < p.rows; ++r) {
    Odometer elem(p.red_ndim, p.red_sizes, p.in_red_strides, in_row.offset());
    for (std::int64_t k = 0; k < p.row_len; ++k, elem.next())
      row.values[static_cast<std::size_t>(k)] = load(in, in_dtype, elem.offset());
    std::int64_t index = 0;
    Value second{};
    store(out, out_dtype, out_pos.offset(), reduce_row(p, row, index, second));
    if (idx && writes_second_value(p.op)) store(idx, out_dtype, idx_pos.offset(), second);
    if (idx && writes_index_buffer(p.op))
      store(idx, DType::kInt64, idx_pos.offset(), from_int(index));
    out_pos.next();
    in_row.next();
    idx_pos.next();
  }
}

}  // namespace nbx::host
