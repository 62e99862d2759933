// What each fuzz target checks of one input, shared by the libFuzzer targets (fuzz_*.cpp,
// built with clang) and the regression test (test_fuzz_regressions.cpp, any compiler).
//
// An input passes when the parser accepts it and everything downstream of an accepted file
// works, or when the parser refuses it with nbx::InvalidArgument (an overlay's claim beyond
// the device: nbx::Unsupported) whose message names the file and a line of it. Anything
// else (another exception type, a message without file:line, a crash) is a finding: the
// check throws BrokenContract, which a fuzz target lets escape so libFuzzer stops on it.
#pragma once

#include <stdexcept>
#include <string_view>

namespace nbx::fuzz {

struct BrokenContract : std::logic_error {
  using std::logic_error::logic_error;
};

// What became of an input that broke no contract.
enum class Outcome { kAccepted, kRefused };

// The input as a device file named "fuzz/vendor/arch.yml": parsed, then (when accepted) its
// capabilities built for every backend, written as JSON, and its known devices matched.
Outcome check_device_file(std::string_view text);
// The input as an overlay named "fuzz/overlay.yml": parsed, then (when accepted) applied to
// the shipped host, llvmpipe, sm_90 (CUDA and Vulkan) and gfx90a capabilities; kRefused when
// the parser or every one of those devices refused it.
Outcome check_overlay(std::string_view text);
// The input as `nbx explain`'s options: the first line is --dtype, the rest --shape;
// kRefused when either is.
Outcome check_explain_args(std::string_view text);

}  // namespace nbx::fuzz
