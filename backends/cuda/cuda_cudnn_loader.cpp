// Opening cuDNN at run time (cuda_cudnn_loader.hpp): libcudnn.so.9 (the library that loads
// its engine sub-libraries from its own folder) where open_vendor_library looks; only the
// major version this build's headers describe is taken, since the graph API's enums and
// attribute types come from them.
#include "backends/cuda/cuda_cudnn_loader.hpp"

#include "backends/cuda/cuda_library_search.hpp"

namespace nbx::gpu {
namespace {

CudnnApi load() {
  CudnnApi a;
#if !NBX_HAVE_CUDNN_HEADERS
  a.status = "unavailable: this build's CUDA toolkit has no cuDNN headers (cudnn_graph.h)";
  return a;
#else
  const OpenedLibrary opened = open_vendor_library({"libcudnn.so.9", "libcudnn.so"});
  if (!opened.handle) {
    a.status = "unavailable: cuDNN not found (tried " + opened.tried + ")";
    return a;
  }
  void* lib = opened.handle;
  std::string missing;
  bind_symbol(lib, "cudnnGetVersion", a.get_version, missing);
  bind_symbol(lib, "cudnnGetErrorString", a.error_string, missing);
  bind_symbol(lib, "cudnnGetLastErrorString", a.last_error, missing);
  bind_symbol(lib, "cudnnCreate", a.create, missing);
  bind_symbol(lib, "cudnnDestroy", a.destroy, missing);
  bind_symbol(lib, "cudnnSetStream", a.set_stream, missing);
  bind_symbol(lib, "cudnnBackendCreateDescriptor", a.create_descriptor, missing);
  bind_symbol(lib, "cudnnBackendDestroyDescriptor", a.destroy_descriptor, missing);
  bind_symbol(lib, "cudnnBackendSetAttribute", a.set_attribute, missing);
  bind_symbol(lib, "cudnnBackendGetAttribute", a.get_attribute, missing);
  bind_symbol(lib, "cudnnBackendFinalize", a.finalize, missing);
  bind_symbol(lib, "cudnnBackendExecute", a.execute, missing);
  if (!missing.empty()) {
    a.status = "unavailable: " + opened.path + " lacks " + missing;
    return a;
  }
  a.version = a.get_version();
  const std::string path = library_file_of(reinterpret_cast<void*>(a.execute), opened.path);
  if (a.version / 10000 != CUDNN_MAJOR) {
    a.status = "unavailable: " + path + " is cuDNN " + std::to_string(a.version) +
               "; this build needs major version " + std::to_string(CUDNN_MAJOR);
    return a;
  }
  a.ok = true;
  a.status = "cuDNN " + std::to_string(a.version) + " (" + path + ")";
  return a;
#endif
}

}  // namespace

const CudnnApi& cudnn_api() {
  static const CudnnApi* a = new CudnnApi(load());  // never destroyed: see cuda_blas_loader
  return *a;
}

}  // namespace nbx::gpu
