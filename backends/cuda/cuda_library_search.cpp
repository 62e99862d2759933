// open_vendor_library (cuda_library_search.hpp): the search order vendor libraries share.
#include "backends/cuda/cuda_library_search.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace nbx::gpu {
namespace {

// The folder of the CUDA libraries already in the process (the driver's libcuda, or a shared
// cudart), with its trailing slash; empty when none is loaded.
std::vector<std::string> loaded_cuda_folders() {
  std::vector<std::string> folders;
  for (const char* lib : {"libcudart.so.13", "libcudart.so", "libcuda.so.1"}) {
    void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    Dl_info info{};
    void* sym = dlsym(h, lib[5] == 'r' ? "cudaGetDeviceCount" : "cuInit");
    if (sym && dladdr(sym, &info) && info.dli_fname) {
      std::string dir = info.dli_fname;
      dir = dir.substr(0, dir.find_last_of('/') + 1);
      if (!dir.empty()) folders.push_back(dir);
    }
    dlclose(h);
  }
  return folders;
}

std::atomic<bool> g_exiting{false};

}  // namespace

OpenedLibrary open_vendor_library(const std::vector<std::string>& names) {
  static std::once_flag exit_hook;
  std::call_once(exit_hook, [] { std::atexit([] { g_exiting = true; }); });
  std::vector<std::string> candidates = names;
  std::vector<std::string> folders = loaded_cuda_folders();
  if (const char* home = std::getenv("CUDA_HOME")) folders.push_back(std::string(home) + "/lib64/");
  folders.push_back("/usr/local/cuda/lib64/");
  for (const std::string& folder : folders)
    for (const std::string& name : names) candidates.push_back(folder + name);
  OpenedLibrary out;
  // A test hook: NBX_TEST_HIDE_LIBRARY=libcublasLt makes every library whose file name starts
  // so absent, as on a machine without it (what the backend then says and refuses is tested).
  if (const char* hide = std::getenv("NBX_TEST_HIDE_LIBRARY"); hide && *hide) {
    for (const std::string& name : names)
      if (name.rfind(hide, 0) == 0) {
        out.tried = name + " (hidden by NBX_TEST_HIDE_LIBRARY)";
        return out;
      }
  }
  for (const std::string& name : candidates) {
    out.handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (out.handle) {
      out.path = name;
      out.tried.clear();
      return out;
    }
    out.tried += (out.tried.empty() ? "" : "; ") + name;
  }
  return out;
}

bool vendor_process_exiting() {
  return g_exiting;
}

std::string library_file_of(void* symbol, const std::string& fallback) {
  Dl_info info{};
  if (symbol && dladdr(symbol, &info) && info.dli_fname) return info.dli_fname;
  return fallback;
}

}  // namespace nbx::gpu
