#include "core/format.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/ops/shape.hpp"

namespace nbx {
namespace {

// PyTorch's print options, at their defaults.
constexpr std::int64_t kThreshold = 1000, kEdgeItems = 3;
constexpr int kLineWidth = 80, kPrecision = 4;

// The elements to show, copied to the host: those of each dim longer than 2 × kEdgeItems
// are its first and last kEdgeItems (get_summarized_data). Dims are cut on the device, so
// a large tensor never crosses to the host whole.
Tensor shown_on_host(const Tensor& t, int dim, bool summarize) {
  if (dim == t.dim() || !summarize) return t.to(host_device());
  const std::int64_t n = t.size(dim);
  if (n <= 2 * kEdgeItems) return shown_on_host(t, dim + 1, summarize);
  return ops::cat({shown_on_host(t.narrow(dim, 0, kEdgeItems), dim + 1, summarize),
                   shown_on_host(t.narrow(dim, n - kEdgeItems, kEdgeItems), dim + 1, summarize)},
                  dim);
}

// "%.*f" or "%.*e" of `v`, as Python's "{:.4f}" and "{:.4e}" print finite values.
std::string printf_double(char style, int precision, double v) {
  char buf[512];  // %f of 1e308 has 309 digits before the point
  std::snprintf(buf, sizeof buf, style == 'e' ? "%.*e" : "%.*f", precision, v);
  return buf;
}

// Python's float formatting, which prints every NaN as "nan" (C's printf may say "-nan").
std::string python_float(double v, char style) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return printf_double(style, kPrecision, v);
}

std::string pad_to(std::size_t width, const std::string& s) {
  return std::string(width > s.size() ? width - s.size() : 0, ' ') + s;
}

// The elements shown, in row-major order: floating values as doubles (every float16,
// bfloat16 and float32 value is one exactly), the others as Python prints them (int64
// exactly, bool as True/False).
struct Shown {
  bool floating = false;
  std::vector<double> values;
  std::vector<std::string> words;
};

// torch's _Formatter: one width and one style for every element shown.
class Formatter {
 public:
  explicit Formatter(const Shown& shown) {
    if (!shown.floating) {
      for (const std::string& w : shown.words) width_ = std::max(width_, w.size());
      return;
    }
    floating_ = true;
    std::vector<double> finite;  // nonzero and finite
    for (double v : shown.values)
      if (std::isfinite(v) && v != 0) finite.push_back(v);
    if (finite.empty()) return;
    double lo = INFINITY, hi = 0;
    for (double v : finite) {
      lo = std::min(lo, std::fabs(v));
      hi = std::max(hi, std::fabs(v));
      int_mode_ = int_mode_ && v == std::ceil(v);
    }
    sci_ = hi / lo > 1000.0 || hi > 1.0e8 || (!int_mode_ && lo < 1.0e-4);
    for (double v : finite) width_ = std::max(width_, format_unpadded(v).size());
  }

  std::size_t width() const { return width_; }
  std::string format(const Shown& shown, std::size_t at) const {
    return pad_to(width_, floating_ ? format_unpadded(shown.values[at]) : shown.words[at]);
  }

 private:
  // In int mode a finite value gets a "." (the tensor is floating); its width counts it.
  std::string format_unpadded(double v) const {
    if (sci_) return python_float(v, 'e');
    if (int_mode_ && std::isfinite(v)) return printf_double('f', 0, v) + ".";
    return python_float(v, 'f');
  }

  bool floating_ = false;
  bool int_mode_ = true, sci_ = false;
  std::size_t width_ = 1;
};

struct Printer {
  const Shape& shape;     // of the elements shown
  std::vector<bool> cut;  // dims shown as first and last kEdgeItems around "..."
  const Shown& shown;
  const Formatter& formatter;

  std::string vector(std::int64_t first, int dim, int indent) const {
    const std::size_t element_length = formatter.width() + 2;
    const std::size_t per_line =
        std::max<std::size_t>(1, std::size_t(kLineWidth - indent) / element_length);
    std::vector<std::string> data;
    for (std::int64_t i = 0; i < shape[dim]; ++i) {
      if (cut[std::size_t(dim)] && i == kEdgeItems) data.push_back(" ...");
      data.push_back(formatter.format(shown, std::size_t(first + i)));
    }
    std::string out = "[";
    for (std::size_t i = 0; i < data.size(); ++i) {
      if (i) out += i % per_line ? ", " : ",\n" + std::string(std::size_t(indent) + 1, ' ');
      out += data[i];
    }
    return out + "]";
  }

  std::string tensor(std::int64_t first, int dim, int indent) const {
    if (dim == shape.size() - 1) return vector(first, dim, indent);
    std::int64_t inner = 1;
    for (int d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
    const std::string separator = "," + std::string(std::size_t(shape.size() - dim - 1), '\n') +
                                  std::string(std::size_t(indent) + 1, ' ');
    std::string out = "[";
    for (std::int64_t i = 0; i < shape[dim]; ++i) {
      if (i) out += separator;
      if (cut[std::size_t(dim)] && i == kEdgeItems) out += "..." + separator;
      out += tensor(first + i * inner, dim + 1, indent + 1);
    }
    return out + "]";
  }
};

Shown shown_values(const Tensor& host) {
  Shown s;
  s.floating = is_floating(host.dtype());
  if (s.floating) {
    s.values = host.to(DType::kFloat64).to_host<double>();
  } else if (host.dtype() == DType::kBool) {
    for (bool b : host.to_host<bool>()) s.words.push_back(b ? "True" : "False");
  } else {
    for (std::int64_t v : host.to(DType::kInt64).to_host<std::int64_t>())
      s.words.push_back(std::to_string(v));
  }
  return s;
}

std::string size_tuple(const Shape& s) {
  std::string out = "(";
  for (int d = 0; d < s.size(); ++d) out += (d ? ", " : "") + std::to_string(s[d]);
  return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace

std::string format(const Tensor& t) {
  if (!t.defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  const int indent = int(prefix.size());
  std::vector<std::string> suffixes;
  if (!t.device().is_host()) suffixes.push_back("device='" + t.device().str() + "'");
  const DType dtype = t.dtype();
  const std::string dtype_suffix = "dtype=nbx." + std::string(dtype_name(dtype));
  std::string body;
  if (t.numel() == 0) {
    if (t.dim() != 1) suffixes.push_back("size=" + size_tuple(t.shape()));
    if (dtype != DType::kFloat32) suffixes.push_back(dtype_suffix);
    body = "[]";
  } else {
    if (dtype != DType::kFloat32 && dtype != DType::kInt64 && dtype != DType::kBool)
      suffixes.push_back(dtype_suffix);
    const bool summarize = t.numel() > kThreshold;
    const Tensor host = shown_on_host(t, 0, summarize);
    const Shown shown = shown_values(host);
    const Formatter formatter(shown);
    if (t.dim() == 0) {
      body = formatter.format(shown, 0);
    } else {
      std::vector<bool> cut;
      for (int d = 0; d < t.dim(); ++d) cut.push_back(summarize && t.size(d) > 2 * kEdgeItems);
      body = Printer{host.shape(), cut, shown, formatter}.tensor(0, 0, indent);
    }
  }
  // _add_suffixes: on the last line while it stays within the width, else on a new line.
  std::string out = prefix + body;
  const std::size_t newline = out.rfind('\n');
  std::size_t last_line = newline == std::string::npos ? out.size() + 2 : out.size() - newline + 1;
  for (const std::string& s : suffixes) {
    if (last_line + s.size() + 2 > std::size_t(kLineWidth)) {
      out += ",\n" + std::string(std::size_t(indent), ' ') + s;
      last_line = std::size_t(indent) + s.size();
    } else {
      out += ", " + s;
      last_line += s.size() + 2;
    }
  }
  return out + ")";
}

}  // namespace nbx
