// The text of `nbx explain`'s --dtype and --shape options, read strictly. Kept apart from
// cmd_explain.cpp so the fuzzer (tests/fuzz/) and the unit tests read them as the CLI does.
#pragma once

#include <string>
#include <vector>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace nbx::cli {

// "int32,float16" → one dtype per comma-separated name (parse_dtype's names and aliases).
// Throws InvalidArgument naming the option for an empty or unknown name.
std::vector<DType> parse_explain_dtypes(const std::string& text);

// "4096,4096;4096" → one shape per ';'-separated part; a part is "4096,4096", "4096x4096",
// "[4096, 4096]", or "", "()", "[]" for a 0-d shape. Every dimension is whole digits, none
// empty, none negative, below 2^63, at most kMaxDims of them. Throws InvalidArgument naming
// the option and the part at fault.
std::vector<Shape> parse_explain_shapes(const std::string& text);

// The --shape text that gives these shapes ("4,1000;1000", "[]" for a 0-d shape).
std::string format_explain_shapes(const std::vector<Shape>& shapes);

}  // namespace nbx::cli
