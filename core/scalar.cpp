#include "core/scalar.hpp"

#include <cstdio>

namespace nbx {

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::kBool:
      return i_ ? "true" : "false";
    case Kind::kInt:
      return std::to_string(i_);
    case Kind::kFloat: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", f_);
      return buf;
    }
  }
  return "?";
}

}  // namespace nbx
