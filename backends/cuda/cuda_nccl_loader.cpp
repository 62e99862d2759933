// Opening NCCL at run time (cuda_nccl_loader.hpp): libnccl.so.2 where open_vendor_library
// looks (the toolkit's lib64 here, PyTorch's nvidia/nccl wheel on the H200); only the major
// version this build's nccl.h describes is taken, since the enums come from it.
#include "backends/cuda/cuda_nccl_loader.hpp"

#include <cstdlib>

#include "backends/cuda/cuda_library_search.hpp"

namespace nbx::gpu {
namespace {

NcclApi load() {
  NcclApi a;
#if !NBX_HAVE_NCCL_HEADERS
  a.status = "unavailable: this build's CUDA toolkit has no NCCL header (nccl.h)";
  return a;
#else
  // NCCL reads its environment when a communicator is first made; 0 = do not overwrite.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  const OpenedLibrary opened = open_vendor_library({"libnccl.so.2", "libnccl.so"});
  if (!opened.handle) {
    a.status = "unavailable: NCCL not found (tried " + opened.tried + ")";
    return a;
  }
  void* lib = opened.handle;
  std::string missing;
  bind_symbol(lib, "ncclGetVersion", a.get_version, missing);
  bind_symbol(lib, "ncclGetErrorString", a.error_string, missing);
  bind_symbol(lib, "ncclGetLastError", a.last_error, missing);
  bind_symbol(lib, "ncclGetUniqueId", a.get_unique_id, missing);
  bind_symbol(lib, "ncclCommInitAll", a.comm_init_all, missing);
  bind_symbol(lib, "ncclCommInitRank", a.comm_init_rank, missing);
  bind_symbol(lib, "ncclCommDestroy", a.comm_destroy, missing);
  bind_symbol(lib, "ncclCommAbort", a.comm_abort, missing);
  bind_symbol(lib, "ncclCommGetAsyncError", a.comm_async_error, missing);
  bind_symbol(lib, "ncclGroupStart", a.group_start, missing);
  bind_symbol(lib, "ncclGroupEnd", a.group_end, missing);
  bind_symbol(lib, "ncclAllReduce", a.all_reduce, missing);
  bind_symbol(lib, "ncclBroadcast", a.broadcast, missing);
  bind_symbol(lib, "ncclReduce", a.reduce, missing);
  bind_symbol(lib, "ncclAllGather", a.all_gather, missing);
  bind_symbol(lib, "ncclReduceScatter", a.reduce_scatter, missing);
  bind_symbol(lib, "ncclSend", a.send, missing);
  bind_symbol(lib, "ncclRecv", a.recv, missing);
  if (!missing.empty()) {
    a.status = "unavailable: " + opened.path + " lacks " + missing;
    return a;
  }
  if (a.get_version(&a.version) != ncclSuccess) {
    a.status = "unavailable: ncclGetVersion failed in " + opened.path;
    return a;
  }
  const std::string path = library_file_of(reinterpret_cast<void*>(a.all_reduce), opened.path);
  // NCCL_VERSION_CODE is major*10000 + minor*100 + patch since 2.9.
  const int major = a.version / 10000, minor = a.version / 100 % 100, patch = a.version % 100;
  const std::string name =
      "NCCL " + std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  if (major != NCCL_MAJOR) {
    a.status = "unavailable: " + path + " is " + name + "; this build needs major version " +
               std::to_string(NCCL_MAJOR);
    return a;
  }
  a.ok = true;
  a.status = name + " (" + path + ")";
  return a;
#endif
}

}  // namespace

const NcclApi& nccl_api() {
  static const NcclApi* a = new NcclApi(load());  // never destroyed: see cuda_blas_loader
  return *a;
}

}  // namespace nbx::gpu
