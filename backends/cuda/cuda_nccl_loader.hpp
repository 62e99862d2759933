// NCCL, opened at run time like cuBLASLt and cuDNN (cuda_library_search.hpp): the entry points
// cuda_collectives.cpp calls. nccl.h gives the types and constants only; a build whose CUDA
// toolkit has no nccl.h reports the library unavailable, as does a machine without
// libnccl.so.2.
#pragma once

#include <string>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define NBX_HAVE_NCCL_HEADERS 1
#else
#define NBX_HAVE_NCCL_HEADERS 0
#endif

namespace nbx::gpu {

#if NBX_HAVE_NCCL_HEADERS
struct NcclApi {
  bool ok = false;
  std::string status;  // "NCCL 2.28.9 (path)" or why not
  int version = 0;
  decltype(&ncclGetVersion) get_version = nullptr;
  decltype(&ncclGetErrorString) error_string = nullptr;
  decltype(&ncclGetLastError) last_error = nullptr;
  decltype(&ncclGetUniqueId) get_unique_id = nullptr;
  decltype(&ncclCommInitAll) comm_init_all = nullptr;
  decltype(&ncclCommInitRank) comm_init_rank = nullptr;
  decltype(&ncclCommDestroy) comm_destroy = nullptr;
  decltype(&ncclCommAbort) comm_abort = nullptr;
  decltype(&ncclCommGetAsyncError) comm_async_error = nullptr;
  decltype(&ncclGroupStart) group_start = nullptr;
  decltype(&ncclGroupEnd) group_end = nullptr;
  decltype(&ncclAllReduce) all_reduce = nullptr;
  decltype(&ncclBroadcast) broadcast = nullptr;
  decltype(&ncclReduce) reduce = nullptr;
  decltype(&ncclAllGather) all_gather = nullptr;
  decltype(&ncclReduceScatter) reduce_scatter = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
};
#else
struct NcclApi {
  bool ok = false;
  std::string status;
  int version = 0;
};
#endif

// Loaded once per process on first use, never unloaded. Sets NCCL_NVLS_ENABLE=0 before the
// library reads its environment unless the caller set it: NVLink multicast can take a shared
// machine's GPUs out of service.
const NcclApi& nccl_api();

}  // namespace nbx::gpu
