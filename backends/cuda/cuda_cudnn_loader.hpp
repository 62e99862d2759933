// cuDNN, opened at run time like cuBLASLt (cuda_library_search.hpp): the graph ("backend")
// API entry points cuda_cudnn_sdpa.cpp calls, and the version check. cudnn_graph.h gives the
// types and constants only; a build whose CUDA toolkit has no cuDNN headers reports the
// library unavailable.
#pragma once

#include <string>

#if __has_include(<cudnn_graph.h>)
#include <cudnn_graph.h>
#define NBX_HAVE_CUDNN_HEADERS 1
#else
#define NBX_HAVE_CUDNN_HEADERS 0
#endif

namespace nbx::gpu {

#if NBX_HAVE_CUDNN_HEADERS
struct CudnnApi {
  bool ok = false;
  std::string status;  // "cuDNN 91900 (path)" or why not
  std::size_t version = 0;
  decltype(&cudnnGetVersion) get_version = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnGetLastErrorString) last_error = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnSetStream) set_stream = nullptr;
  decltype(&cudnnBackendCreateDescriptor) create_descriptor = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) destroy_descriptor = nullptr;
  decltype(&cudnnBackendSetAttribute) set_attribute = nullptr;
  decltype(&cudnnBackendGetAttribute) get_attribute = nullptr;
  decltype(&cudnnBackendFinalize) finalize = nullptr;
  decltype(&cudnnBackendExecute) execute = nullptr;
};
#else
struct CudnnApi {
  bool ok = false;
  std::string status;
  std::size_t version = 0;
};
#endif

// Loaded once per process on first use (libcudnn.so.9 where open_vendor_library looks),
// never unloaded.
const CudnnApi& cudnn_api();

}  // namespace nbx::gpu
