// `nbx explain`'s --dtype and --shape text (see explain_args.hpp).
#include "cli/explain_args.hpp"

#include <charconv>
#include <sstream>

#include "core/errors.hpp"

namespace nbx::cli {
namespace {

// Every part between separators, empty ones included ("a,,b" → a, "", b; "a," → a, "").
std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t from = 0;
  for (std::size_t at; (at = s.find(sep, from)) != std::string::npos; from = at + 1)
    out.push_back(s.substr(from, at - from));
  out.push_back(s.substr(from));
  return out;
}

// "4096,4096" or "4096x4096"; "()" or "[]" or "" is a 0-d shape. Read strictly: every
// dimension whole digits ("3abc" was read as 3), none empty ("4,x" was read as [4]), none
// negative ("-4,3" was explained).
Shape parse_shape(std::string text) {
  const std::string given = text;
  const auto refuse = [&](const std::string& why) {
    throw InvalidArgument("explain", "explain: --shape '" + given + "': " + why + ".");
  };
  for (char& c : text)
    if (c == 'x' || c == 'X' || c == '[' || c == ']' || c == '(' || c == ')')
      c = c == 'x' || c == 'X' ? ',' : ' ';
  if (text.find_first_not_of(' ') == std::string::npos) return {};
  if (text.find_last_not_of(' ') == text.rfind(',')) refuse("a separator (',' or 'x') ends it");
  Shape s;
  for (std::string part : split(text, ',')) {
    part.erase(0, part.find_first_not_of(' '));
    part.erase(part.find_last_not_of(' ') + 1);
    if (part.empty()) refuse("a dimension is empty (',' and 'x' both separate dimensions)");
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (ec == std::errc::result_out_of_range) refuse("'" + part + "' is larger than 2^63");
    if (ec != std::errc() || end != part.data() + part.size())
      refuse("'" + part + "' is not a dimension size");
    if (v < 0) refuse("sizes must be non-negative, got " + part);
    if (s.size() == kMaxDims) refuse("more than " + std::to_string(kMaxDims) + " dimensions");
    s.push_back(v);
  }
  return s;
}

}  // namespace

std::vector<DType> parse_explain_dtypes(const std::string& text) {
  const auto refuse = [&](const std::string& why) {
    throw InvalidArgument("explain", "explain: --dtype '" + text + "': " + why);
  };
  std::vector<DType> dtypes;
  for (const std::string& name : split(text, ',')) {
    if (name.empty()) refuse("a dtype name is empty (write int32,float16).");
    try {
      dtypes.push_back(parse_dtype(name));
    } catch (const InvalidArgument& e) {
      refuse(e.what());
    }
  }
  return dtypes;
}

std::vector<Shape> parse_explain_shapes(const std::string& text) {
  if (text.empty()) return {};  // no --shape: explain takes 0-d operands
  // "4,3;" dropped its empty last part before; "[]" is how a 0-d last operand is written.
  if (text.back() == ';')
    throw InvalidArgument(
        "explain", "explain: --shape '" + text + "': a ';' ends it (write [] for a 0-d operand).");
  std::vector<Shape> shapes;
  for (const std::string& part : split(text, ';')) shapes.push_back(parse_shape(part));
  return shapes;
}

std::string format_explain_shapes(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& s : shapes) {
    if (!text.empty()) text += ";";
    std::string dims;
    for (std::int64_t d : s) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    text += dims.empty() ? "[]" : dims;
  }
  return text;
}

}  // namespace nbx::cli
