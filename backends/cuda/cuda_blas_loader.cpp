// Opening cuBLASLt at run time (cuda_blas_loader.hpp): libcublasLt.so.13 or libcublasLt.so
// where open_vendor_library looks; only a library of the major version this build's headers
// describe is taken.
#include "backends/cuda/cuda_blas_loader.hpp"

#include <string>

#include "backends/cuda/cuda_library_search.hpp"

namespace nbx::gpu {
namespace {

LtApi load() {
  LtApi a;
  const OpenedLibrary opened = open_vendor_library({"libcublasLt.so.13", "libcublasLt.so"});
  void* lib = opened.handle;
  std::string path = opened.path;
  if (!lib) {
    a.status = "unavailable: cuBLASLt not found (tried " + opened.tried + ")";
    return a;
  }
  std::string missing;
  bind_symbol(lib, "cublasLtCreate", a.create, missing);
  bind_symbol(lib, "cublasLtDestroy", a.destroy, missing);
  bind_symbol(lib, "cublasLtGetVersion", a.version, missing);
  bind_symbol(lib, "cublasLtGetStatusName", a.status_name, missing);
  bind_symbol(lib, "cublasLtMatmulDescCreate", a.desc_create, missing);
  bind_symbol(lib, "cublasLtMatmulDescDestroy", a.desc_destroy, missing);
  bind_symbol(lib, "cublasLtMatmulDescSetAttribute", a.desc_set, missing);
  bind_symbol(lib, "cublasLtMatrixLayoutCreate", a.layout_create, missing);
  bind_symbol(lib, "cublasLtMatrixLayoutDestroy", a.layout_destroy, missing);
  bind_symbol(lib, "cublasLtMatrixLayoutSetAttribute", a.layout_set, missing);
  bind_symbol(lib, "cublasLtMatmulPreferenceCreate", a.pref_create, missing);
  bind_symbol(lib, "cublasLtMatmulPreferenceDestroy", a.pref_destroy, missing);
  bind_symbol(lib, "cublasLtMatmulPreferenceSetAttribute", a.pref_set, missing);
  bind_symbol(lib, "cublasLtMatmulAlgoGetHeuristic", a.heuristic, missing);
  bind_symbol(lib, "cublasLtMatmulAlgoConfigGetAttribute", a.algo_config_get, missing);
  bind_symbol(lib, "cublasLtMatmul", a.matmul, missing);
  if (!missing.empty()) {
    a.status = "unavailable: " + path + " lacks " + missing;
    return a;  // the library stays loaded: unloading is not worth the risk at start-up
  }
  const std::size_t v = a.version();
  path = library_file_of(reinterpret_cast<void*>(a.matmul), path);
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

}  // namespace nbx::gpu
