// The libFuzzer entry point of every target: meson compiles this file once per target with
// NBX_FUZZ_CHECK naming the check (check_device_file, check_overlay, check_explain_args).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/fuzz_inputs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  (void)nbx::fuzz::NBX_FUZZ_CHECK({reinterpret_cast<const char*>(data), size});
  return 0;
}
