// Opening cuBLASLt at run time (cuda_blas_loader.hpp): libcublasLt.so.13, libcublasLt.so,
// then the folder of the CUDA libraries already loaded and $CUDA_HOME|/usr/local/cuda/lib64;
// only a library of the major version this build's headers describe is taken.
#include "backends/cuda/cuda_blas_loader.hpp"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

namespace nbx::gpu {
namespace {

std::vector<std::string> candidates() {
  std::vector<std::string> names = {"libcublasLt.so.13", "libcublasLt.so"};
  // The folder of the CUDA libraries already in the process (the driver's libcuda, or a
  // shared cudart), where a toolkit keeps cuBLASLt too.
  for (const char* lib : {"libcudart.so.13", "libcudart.so", "libcuda.so.1"}) {
    void* h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
    if (!h) continue;
    Dl_info info{};
    void* sym = dlsym(h, lib[5] == 'r' ? "cudaGetDeviceCount" : "cuInit");
    if (sym && dladdr(sym, &info) && info.dli_fname) {
      std::string dir = info.dli_fname;
      dir = dir.substr(0, dir.find_last_of('/') + 1);
      if (!dir.empty()) names.push_back(dir + "libcublasLt.so.13");
    }
    dlclose(h);
  }
  if (const char* home = std::getenv("CUDA_HOME"))
    names.push_back(std::string(home) + "/lib64/libcublasLt.so.13");
  names.push_back("/usr/local/cuda/lib64/libcublasLt.so.13");
  return names;
}

template <class F>
bool bind(void* lib, const char* name, F& fn, std::string& missing) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  if (!fn) missing += (missing.empty() ? "" : ", ") + std::string(name);
  return fn != nullptr;
}

std::atomic<bool> g_exiting{false};  // see lt_process_exiting()

LtApi load() {
  std::atexit([] { g_exiting = true; });
  LtApi a;
  std::string tried;
  void* lib = nullptr;
  std::string path;
  for (const std::string& name : candidates()) {
    lib = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      path = name;
      break;
    }
    tried += (tried.empty() ? "" : "; ") + name;
  }
  if (!lib) {
    a.status = "unavailable: cuBLASLt not found (tried " + tried + ")";
    return a;
  }
  std::string missing;
  bind(lib, "cublasLtCreate", a.create, missing);
  bind(lib, "cublasLtDestroy", a.destroy, missing);
  bind(lib, "cublasLtGetVersion", a.version, missing);
  bind(lib, "cublasLtGetStatusName", a.status_name, missing);
  bind(lib, "cublasLtMatmulDescCreate", a.desc_create, missing);
  bind(lib, "cublasLtMatmulDescDestroy", a.desc_destroy, missing);
  bind(lib, "cublasLtMatmulDescSetAttribute", a.desc_set, missing);
  bind(lib, "cublasLtMatrixLayoutCreate", a.layout_create, missing);
  bind(lib, "cublasLtMatrixLayoutDestroy", a.layout_destroy, missing);
  bind(lib, "cublasLtMatrixLayoutSetAttribute", a.layout_set, missing);
  bind(lib, "cublasLtMatmulPreferenceCreate", a.pref_create, missing);
  bind(lib, "cublasLtMatmulPreferenceDestroy", a.pref_destroy, missing);
  bind(lib, "cublasLtMatmulPreferenceSetAttribute", a.pref_set, missing);
  bind(lib, "cublasLtMatmulAlgoGetHeuristic", a.heuristic, missing);
  bind(lib, "cublasLtMatmulAlgoConfigGetAttribute", a.algo_config_get, missing);
  bind(lib, "cublasLtMatmul", a.matmul, missing);
  if (!missing.empty()) {
    a.status = "unavailable: " + path + " lacks " + missing;
    return a;  // the library stays loaded: unloading is not worth the risk at start-up
  }
  const std::size_t v = a.version();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(a.matmul), &info) && info.dli_fname) path = info.dli_fname;
  // Enum values and struct sizes come from this build's headers: only the same major fits.
  if (v / 10000 != CUBLAS_VER_MAJOR) {
    a.status = "unavailable: " + path + " is cuBLASLt " + std::to_string(v) +
               "; this build needs major version " + std::to_string(CUBLAS_VER_MAJOR);
    return a;
  }
  a.ok = true;
  a.status = "cuBLASLt " + std::to_string(v) + " (" + path + ")";
  return a;
}

}  // namespace

const LtApi& lt_api() {
  // Thread-safe, once per process, and never destroyed: devices closing during static
  // destruction (the registry's) still release their handles through it.
  static const LtApi* a = new LtApi(load());
  return *a;
}

bool lt_process_exiting() {
  return g_exiting;
}

}  // namespace nbx::gpu
