// NCCL behind core's collective seam. Every call is one NCCL group (ncclGroupStart/End) over
// the local ranks' communicators, each enqueued on its device's stream after the work nbx
// issued there (BackendDevice::native_queue), so later work on the stream runs after it.
// Completion is an event recorded on each stream; waiting polls NCCL's asynchronous error
// as NCCL's documentation asks, so a failed peer surfaces as an error instead of a hang.
#include "backends/cuda/cuda_collectives.hpp"

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstring>
#include <span>
#include <thread>
#include <vector>

#include "backends/cuda/cuda_errors.hpp"
#include "backends/cuda/cuda_library_search.hpp"
#include "backends/cuda/cuda_nccl_loader.hpp"
#include "core/errors.hpp"

namespace nbx::cuda {

#if NBX_HAVE_NCCL_HEADERS
namespace {

using gpu::nccl_api;
using gpu::NcclApi;

// NCCL's failures as nbx errors: a CUDA or system failure underneath is the device's (lost),
// a remote or internal one the library's; arguments were checked in core.
[[noreturn]] void throw_nccl(ncclResult_t r, const std::string& call, const std::string& device,
                             ncclComm_t comm = nullptr) {
  const char* detail = comm ? nccl_api().last_error(comm) : nullptr;
  std::string message = call + " on " + device + ": " + nccl_api().error_string(r);
  if (detail && *detail) message += " (" + std::string(detail) + ")";
  if (r == ncclUnhandledCudaError || r == ncclSystemError || r == ncclRemoteError)
    throw DeviceLost(device, message);
  throw Internal(message);
}

void check_nccl(ncclResult_t r, const std::string& call, const std::string& device,
                ncclComm_t comm = nullptr) {
  if (r != ncclSuccess) throw_nccl(r, call, device, comm);
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::kInt8:
      return ncclInt8;
    case DType::kUInt8:
      return ncclUint8;
    case DType::kInt32:
      return ncclInt32;
    case DType::kInt64:
      return ncclInt64;
    case DType::kFloat16:
      return ncclFloat16;
    case DType::kBFloat16:
      return ncclBfloat16;
    case DType::kFloat32:
      return ncclFloat32;
    case DType::kFloat64:
      return ncclFloat64;
    default:
      throw Internal("nccl_type: no NCCL type for " + std::string(dtype_name(t)));
  }
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kProd:
      return ncclProd;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kAvg:
      return ncclAvg;
  }
  return ncclSum;
}

std::string device_name(BackendDevice& d) {
  return d.id().str();
}

class NcclCompletion final : public CollectiveCompletion {
 public:
  struct Part {
    int device_index;
    std::string device;
    cudaEvent_t event;
    ncclComm_t comm;
  };
  explicit NcclCompletion(std::vector<Part> parts) : parts_(std::move(parts)) {}
  ~NcclCompletion() override {
    for (Part& p : parts_) (void)cudaEventDestroy(p.event);
  }

  bool done() override {
    for (Part& p : parts_) {
      const cudaError_t e = cudaEventQuery(p.event);
      if (e == cudaErrorNotReady) return false;
      if (e != cudaSuccess) return true;  // wait() reports it
    }
    return true;
  }

  void wait() override {
    for (;;) {
      bool all = true;
      for (Part& p : parts_) {
        const cudaError_t e = cudaEventQuery(p.event);
        if (e == cudaErrorNotReady) {
          all = false;
          ncclResult_t async = ncclSuccess;
          check_nccl(nccl_api().comm_async_error(p.comm, &async), "ncclCommGetAsyncError",
                     p.device);
          if (async != ncclSuccess && async != ncclInProgress)
            throw_nccl(async, "a collective (asynchronous error)", p.device, p.comm);
        } else if (e != cudaSuccess) {
          throw_error(e, "cudaEventQuery (after a collective)", p.device);
        }
      }
      if (all) return;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

 private:
  std::vector<Part> parts_;
};

class NcclGroup final : public CollectiveGroup {
 public:
  NcclGroup(std::vector<ncclComm_t> comms, std::vector<BackendDevice*> devices, int world)
      : comms_(std::move(comms)), devices_(std::move(devices)), world_(world) {}

  ~NcclGroup() override {
    // At process exit NCCL's own teardown may have run; the driver reclaims the rest.
    if (gpu::vendor_process_exiting()) return;
    for (ncclComm_t c : comms_) (void)nccl_api().comm_destroy(c);
  }

  std::unique_ptr<CollectiveCompletion> run(const CollectiveCall& call) override {
    const NcclApi& api = nccl_api();
    std::vector<cudaStream_t> streams;
    for (const CollectiveRankBuffers& r : call.ranks)
      streams.push_back(static_cast<cudaStream_t>(r.device->native_queue()));
    const ncclDataType_t type = nccl_type(call.dtype);
    const std::string where = device_name(*call.ranks[0].device);
    check_nccl(api.group_start(), "ncclGroupStart", where);
    ncclResult_t first = ncclSuccess;
    std::size_t failed = 0;
    for (std::size_t i = 0; i < call.ranks.size() && first == ncclSuccess; ++i) {
      const CollectiveRankBuffers& b = call.ranks[i];
      first = enqueue(call, type, b, comms_[i], streams[i]);
      failed = i;
    }
    const ncclResult_t end = api.group_end();
    if (first != ncclSuccess)
      throw_nccl(first, call_name(call.kind), device_name(*call.ranks[failed].device),
                 comms_[failed]);
    check_nccl(end, "ncclGroupEnd", where, comms_[0]);

    std::vector<NcclCompletion::Part> parts;
    for (std::size_t i = 0; i < call.ranks.size(); ++i) {
      BackendDevice& d = *call.ranks[i].device;
      NcclCompletion::Part p{d.id().index, device_name(d), nullptr, comms_[i]};
      check(cudaSetDevice(p.device_index), "cudaSetDevice", p.device);
      check(cudaEventCreateWithFlags(&p.event, cudaEventDisableTiming), "cudaEventCreate",
            p.device);
      const cudaError_t e = cudaEventRecord(p.event, streams[i]);
      if (e != cudaSuccess) {
        (void)cudaEventDestroy(p.event);
        throw_error(e, "cudaEventRecord (after a collective)", p.device);
      }
      parts.push_back(p);
    }
    return std::make_unique<NcclCompletion>(std::move(parts));
  }

 private:
  static const char* call_name(CollectiveKind kind) {
    switch (kind) {
      case CollectiveKind::kAllReduce:
        return "ncclAllReduce";
      case CollectiveKind::kBroadcast:
        return "ncclBroadcast";
      case CollectiveKind::kReduce:
        return "ncclReduce";
      case CollectiveKind::kAllGather:
        return "ncclAllGather";
      case CollectiveKind::kReduceScatter:
        return "ncclReduceScatter";
      case CollectiveKind::kAllToAll:
        return "ncclSend/ncclRecv (all_to_all)";
      case CollectiveKind::kSend:
        return "ncclSend";
      case CollectiveKind::kRecv:
        return "ncclRecv";
    }
    return "nccl";
  }

  ncclResult_t enqueue(const CollectiveCall& call, ncclDataType_t type,
                       const CollectiveRankBuffers& b, ncclComm_t comm, cudaStream_t stream) {
    const NcclApi& api = nccl_api();
    const ncclRedOp_t op = nccl_op(call.op);
    const std::size_t n = call.count;
    switch (call.kind) {
      case CollectiveKind::kAllReduce:
        return api.all_reduce(b.send, b.recv, n, type, op, comm, stream);
      case CollectiveKind::kBroadcast:
        return api.broadcast(b.send, b.recv, n, type, call.root_or_peer, comm, stream);
      case CollectiveKind::kReduce:
        return api.reduce(b.send, b.recv, n, type, op, call.root_or_peer, comm, stream);
      case CollectiveKind::kAllGather:
        return api.all_gather(b.send, b.recv, n, type, comm, stream);
      case CollectiveKind::kReduceScatter:
        return api.reduce_scatter(b.send, b.recv, n, type, op, comm, stream);
      case CollectiveKind::kAllToAll: {
        // Data movement arrives as bytes (uint8): block p starts p·n bytes in.
        const auto* send = static_cast<const std::byte*>(b.send);
        auto* recv = static_cast<std::byte*>(b.recv);
        for (int p = 0; p < world_; ++p) {
          if (ncclResult_t r = api.send(send + std::size_t(p) * n, n, type, p, comm, stream))
            return r;
          if (ncclResult_t r = api.recv(recv + std::size_t(p) * n, n, type, p, comm, stream))
            return r;
        }
        return ncclSuccess;
      }
      case CollectiveKind::kSend:
        return api.send(b.send, n, type, call.root_or_peer, comm, stream);
      case CollectiveKind::kRecv:
        return api.recv(b.recv, n, type, call.root_or_peer, comm, stream);
    }
    return ncclInvalidUsage;
  }

  std::vector<ncclComm_t> comms_;
  std::vector<BackendDevice*> devices_;
  int world_;
};

class NcclLibrary final : public CollectiveLibrary {
 public:
  std::string name() const override {
    const std::string& s = nccl_api().status;
    return s.substr(0, s.find(" ("));  // "NCCL 2.28.9"
  }

  bool reduces(DType dtype) const override {
    return dtype != DType::kBool && dtype != DType::kInt16;
  }

  std::vector<std::byte> unique_id() override {
    ncclUniqueId id{};
    check_nccl(nccl_api().get_unique_id(&id), "ncclGetUniqueId", "cuda");
    const auto* p = reinterpret_cast<const std::byte*>(&id);
    return std::vector<std::byte>(p, p + sizeof id);
  }

  std::unique_ptr<CollectiveGroup> create_all(const std::vector<BackendDevice*>& devices) override {
    std::vector<int> indices;
    for (BackendDevice* d : devices) {
      (void)d->native_queue();  // the queued batch first: NCCL's setup synchronizes
      indices.push_back(d->id().index);
    }
    std::vector<ncclComm_t> comms(devices.size(), nullptr);
    check_nccl(nccl_api().comm_init_all(comms.data(), int(devices.size()), indices.data()),
               "ncclCommInitAll", device_name(*devices[0]));
    return std::make_unique<NcclGroup>(std::move(comms), devices, int(devices.size()));
  }

  std::unique_ptr<CollectiveGroup> create_rank(BackendDevice& device, int rank, int world,
                                               std::span<const std::byte> id) override {
    ncclUniqueId uid{};
    if (id.size() != sizeof uid)
      throw InvalidArgument("Communicator::create",
                            "Communicator::create: the id has " + std::to_string(id.size()) +
                                " bytes, not NCCL's " + std::to_string(sizeof uid) + ".");
    std::memcpy(&uid, id.data(), sizeof uid);
    (void)device.native_queue();  // makes the device current, as ncclCommInitRank needs
    ncclComm_t comm = nullptr;
    check_nccl(nccl_api().comm_init_rank(&comm, world, uid, rank), "ncclCommInitRank",
               device_name(device));
    return std::make_unique<NcclGroup>(std::vector<ncclComm_t>{comm},
                                       std::vector<BackendDevice*>{&device}, world);
  }
};

}  // namespace

CollectiveLibrary* nccl_library(std::string& why_not) {
  if (!gpu::nccl_api().ok) {
    why_not = "NCCL is " + gpu::nccl_api().status;
    return nullptr;
  }
  static NcclLibrary* library = new NcclLibrary();  // lives as long as the process's NCCL
  return library;
}

#else

CollectiveLibrary* nccl_library(std::string& why_not) {
  why_not = "NCCL is " + gpu::nccl_api().status;
  return nullptr;
}

#endif

}  // namespace nbx::cuda
