// .npy files (NumPy's format, docs numpy.lib.format): a magic string, a version, a Python dict
// literal naming the dtype, the order and the shape, then the raw elements.
#include "core/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string_view>

#include "core/errors.hpp"
#include "core/file_bytes.hpp"

namespace nbx {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr std::size_t kMagicLen = 6;
constexpr std::size_t kAlign = 64;  // numpy pads the header so the data starts aligned

struct Descr {
  DType dtype;
  const char* code;  // without the byte-order character
};
constexpr Descr kDescrs[] = {
    {DType::kBool, "b1"},    {DType::kInt8, "i1"},    {DType::kUInt8, "u1"},
    {DType::kInt16, "i2"},   {DType::kInt32, "i4"},   {DType::kInt64, "i8"},
    {DType::kFloat16, "f2"}, {DType::kFloat32, "f4"}, {DType::kFloat64, "f8"},
};

std::string descr_of(DType t, const char* op) {
  for (const Descr& d : kDescrs)
    if (d.dtype == t) return std::string(dtype_size(t) == 1 ? "|" : "<") + d.code;
  throw InvalidArgument(op, std::string(op) + ": " + std::string(dtype_name(t)) +
                                " has no NumPy dtype; convert the tensor first (to float32).");
}

// The dict's pieces, read from numpy's own repr(): {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), } — either quote character, any spacing.
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& what) : text_(text), what_(what) {}

  std::string_view value_of(std::string_view key) const {
    for (const char quote : {'\'', '"'}) {
      const std::string quoted = quote + std::string(key) + quote;
      std::size_t at = text_.find(quoted);
      if (at == std::string_view::npos) continue;
      at = text_.find(':', at + quoted.size());
      if (at == std::string_view::npos) break;
      ++at;
      while (at < text_.size() && std::isspace(static_cast<unsigned char>(text_[at]))) ++at;
      std::size_t end = at;
      if (at < text_.size() && (text_[at] == '\'' || text_[at] == '"')) {
        end = text_.find(text_[at], at + 1);
        if (end == std::string_view::npos) break;
        return text_.substr(at + 1, end - at - 1);
      }
      if (at < text_.size() && text_[at] == '(') {
        end = text_.find(')', at);
        if (end == std::string_view::npos) break;
        return text_.substr(at, end - at + 1);
      }
      while (end < text_.size() && std::isalnum(static_cast<unsigned char>(text_[end]))) ++end;
      return text_.substr(at, end - at);
    }
    fail("the header has no '" + std::string(key) + "' entry");
  }

  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument("load_npy",
                          "load_npy: " + what_ + " is not a .npy file nbx reads (" + why + ").");
  }

 private:
  std::string_view text_;
  const std::string& what_;
};

Shape parse_shape(std::string_view tuple, const HeaderReader& header) {
  Shape shape;
  std::size_t at = 1;  // past '('
  while (at < tuple.size()) {
    while (at < tuple.size() && (tuple[at] == ' ' || tuple[at] == ',')) ++at;
    if (at >= tuple.size() || tuple[at] == ')') break;
    std::int64_t v = 0;
    const std::size_t start = at;
    while (at < tuple.size() && std::isdigit(static_cast<unsigned char>(tuple[at]))) {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, tuple[at] - '0', &v))
        header.fail("a size past 2^63");
      ++at;
    }
    if (at == start) header.fail("the shape " + std::string(tuple) + " is not a tuple of sizes");
    if (shape.size() == kMaxDims)
      header.fail("more than " + std::to_string(kMaxDims) + " dims, nbx's most");
    shape.push_back(v);
  }
  return shape;
}

std::string shape_tuple(const Shape& s) {
  std::string out = "(";
  for (int d = 0; d < s.size(); ++d) out += (d ? ", " : "") + std::to_string(s[d]);
  return out + (s.size() == 1 ? ",)" : ")");
}

void put_le(std::vector<std::byte>& out, std::uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xff));
}

std::uint64_t get_le(std::span<const std::byte> in, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(in[at + i]);
  return v;
}

}  // namespace

std::vector<std::byte> npy_encode(const Tensor& t) {
  if (!t.defined()) throw InvalidArgument("save_npy", "save_npy: the tensor is undefined.");
  std::string dict = "{'descr': '" + descr_of(t.dtype(), "save_npy") +
                     "', 'fortran_order': False, 'shape': " + shape_tuple(t.shape()) + ", }";
  // Version 1.0 counts the header in 2 bytes, 2.0 in 4.
  const bool v2 = dict.size() + 1 + kMagicLen + 4 > 65535;
  const std::size_t prefix = kMagicLen + 2 + (v2 ? 4 : 2);
  dict.append((kAlign - (prefix + dict.size() + 1) % kAlign) % kAlign, ' ');
  dict += '\n';
  std::vector<std::byte> out;
  const std::size_t data = std::size_t(t.numel()) * t.itemsize();
  out.reserve(prefix + dict.size() + data);
  for (std::size_t i = 0; i < kMagicLen; ++i) out.push_back(std::byte(kMagic[i]));
  out.push_back(std::byte(v2 ? 2 : 1));
  out.push_back(std::byte(0));
  put_le(out, dict.size(), v2 ? 4 : 2);
  for (char c : dict) out.push_back(std::byte(c));
  out.resize(out.size() + data);
  t.copy_to_host(out.data() + out.size() - data);
  return out;
}

Tensor npy_decode(std::span<const std::byte> bytes, const std::string& what, const Device& device) {
  const HeaderReader early({}, what);
  if (bytes.size() < kMagicLen + 4 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0)
    early.fail("no NumPy magic string");
  const int major = std::to_integer<int>(bytes[kMagicLen]);
  if (major < 1 || major > 3) early.fail("format version " + std::to_string(major));
  const int len_bytes = major == 1 ? 2 : 4;
  const std::size_t start = kMagicLen + 2 + std::size_t(len_bytes);
  if (bytes.size() < start) early.fail("a truncated header");
  const std::size_t header_len = get_le(bytes, kMagicLen + 2, len_bytes);
  if (bytes.size() < start + header_len) early.fail("a truncated header");
  const std::string_view text(reinterpret_cast<const char*>(bytes.data() + start), header_len);
  const HeaderReader header(text, what);

  const std::string_view descr = header.value_of("descr");
  const std::string_view fortran = header.value_of("fortran_order");
  const Shape shape = parse_shape(header.value_of("shape"), header);
  if (descr.size() < 2 || std::string_view("<>|=").find(descr[0]) == std::string_view::npos)
    header.fail("dtype '" + std::string(descr) + "'");
  const Descr* found = nullptr;
  for (const Descr& d : kDescrs)
    if (descr.substr(1) == d.code) found = &d;
  if (!found)
    throw InvalidArgument("load_npy", "load_npy: " + what + " holds NumPy dtype '" +
                                          std::string(descr) +
                                          "', which nbx has no counterpart of (it has bool, "
                                          "int8–64, uint8, float16/32/64).");
  if (fortran != "False" && fortran != "True") header.fail("fortran_order " + std::string(fortran));
  const DType dtype = found->dtype;
  const std::size_t item = dtype_size(dtype);
  std::int64_t count = 1;
  for (std::int64_t s : shape)
    if (__builtin_mul_overflow(count, s, &count)) header.fail("more than 2^63 elements");
  const std::size_t data_at = start + header_len;
  if ((bytes.size() - data_at) / item < std::size_t(count))
    header.fail("the data is shorter than " + std::to_string(count) + " elements");
  std::span<const std::byte> data = bytes.subspan(data_at, std::size_t(count) * item);
  std::vector<std::byte> swapped;
  if (descr[0] == '>' && item > 1) {
    swapped.assign(data.begin(), data.end());
    for (std::size_t i = 0; i < swapped.size(); i += item)
      std::reverse(swapped.begin() + std::ptrdiff_t(i), swapped.begin() + std::ptrdiff_t(i + item));
    data = swapped;
  }
  if (fortran == "False") return Tensor::from_host(data.data(), shape, dtype, device);
  // Fortran order: the reversed shape in C order, viewed with its dims reversed.
  Shape reversed;
  std::vector<std::int64_t> dims;
  for (int d = shape.size() - 1; d >= 0; --d) {
    reversed.push_back(shape[d]);
    dims.push_back(d);
  }
  return Tensor::from_host(data.data(), reversed, dtype, device).permute(dims).contiguous();
}

void save_npy(const std::string& path, const Tensor& t) {
  write_file_bytes("save_npy", path, npy_encode(t));
}

Tensor load_npy(const std::string& path, const Device& device) {
  return npy_decode(read_file_bytes("load_npy", path), "'" + path + "'", device);
}

}  // namespace nbx
