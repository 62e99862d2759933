// Opening a vendor library at run time (cuBLASLt, cuDNN): the module never links them, so it
// stays small enough to carry and a machine without one only loses that variant.
#pragma once

#include <dlfcn.h>

#include <string>
#include <vector>

namespace nbx::gpu {

struct OpenedLibrary {
  void* handle = nullptr;  // null when no candidate opened
  std::string path;        // the candidate that opened
  std::string tried;       // "a; b; c" when none did
};

// Tries each of `names` (sonames: the loader's path, then LD_LIBRARY_PATH), then each name in
// the folder of the CUDA libraries already in the process (a toolkit keeps its libraries
// together), in $CUDA_HOME/lib64 and in /usr/local/cuda/lib64; the first that opens wins.
// NBX_TEST_HIDE_LIBRARY=PREFIX: none opens for names starting with PREFIX (a test hook).
OpenedLibrary open_vendor_library(const std::vector<std::string>& names);

// Binds `fn` to `name` in `lib`; appends the name to `missing` when it is absent.
template <class F>
bool bind_symbol(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

// True once the process has begun exiting (an atexit hook set by the first
// open_vendor_library): devices closed by static destructors then leave the libraries'
// handles to the driver, since the libraries' own teardown may already have run.
bool vendor_process_exiting();

// The file `symbol` was loaded from (dladdr), or `fallback`.
std::string library_file_of(void* symbol, const std::string& fallback);

}  // namespace nbx::gpu
