// Whole numbers on the command line (cli_numbers.hpp).
#include "cli/cli_numbers.hpp"

#include <charconv>

#include "core/errors.hpp"

namespace nbx::cli {

std::uint64_t parse_whole_number(const std::string& text, const char* command, const char* option,
                                 std::uint64_t min, std::uint64_t max) {
  const auto refuse = [&](const std::string& why) {
    throw InvalidArgument(command,
                          std::string(command) + ": " + option + " '" + text + "': " + why + ".");
  };
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    refuse("not a whole number (decimal digits only)");
  std::uint64_t v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc::result_out_of_range || (ec == std::errc() && v > max))
    refuse("larger than " + std::to_string(max));
  if (ec != std::errc() || end != text.data() + text.size())
    refuse("not a whole number (decimal digits only)");
  if (v < min) refuse("smaller than " + std::to_string(min));
  return v;
}

}  // namespace nbx::cli
