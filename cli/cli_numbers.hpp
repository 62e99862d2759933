// Whole numbers on the command line, read strictly. CLI11 reads an integer option with
// strtoull/strtoll in base 0, so "010" was 8, "0x10" 16 and "-1" a seed of 2^64 - 1; these
// take decimal digits only and name the option and the text they refuse.
#pragma once

#include <cstdint>
#include <string>

namespace nbx::cli {

// `text` as a decimal number in [min, max]: digits only, no sign, no space, no base prefix.
// Throws InvalidArgument (op `command`) naming `option` and `text` otherwise, e.g.
// "conformance: --seed '-1': not a whole number (decimal digits only)."
std::uint64_t parse_whole_number(const std::string& text, const char* command, const char* option,
                                 std::uint64_t min, std::uint64_t max);

}  // namespace nbx::cli
