// The seam for collectives: what a backend module implements so that core/collectives.cpp
// can run NCCL-style collectives on its devices' queues. Core has checked every argument
// (ranks, dtypes, sizes, devices, contiguity) before a call reaches a group; the backend
// maps dtypes and ops to its library and enqueues.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/collectives.hpp"
#include "core/dtype.hpp"

namespace nbx {

enum class CollectiveKind {
  kAllReduce,
  kBroadcast,
  kReduce,
  kAllGather,
  kReduceScatter,
  kAllToAll,
  kSend,
  kRecv
};

// One local rank's part of a call: device addresses (BackendDevice::address_of plus the
// tensor's byte offset). In-place calls pass the same address twice; send has no recv.
struct CollectiveRankBuffers {
  BackendDevice* device = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
};

struct CollectiveCall {
  CollectiveKind kind = CollectiveKind::kAllReduce;
  DType dtype = DType::kFloat32;  // pure data movement passes bytes as uint8
  // Elements: of each buffer (all_reduce, broadcast, reduce, send/recv), of each rank's input
  // (all_gather), of each rank's output (reduce_scatter), of each block (all_to_all).
  std::size_t count = 0;
  ReduceOp op = ReduceOp::kSum;
  int root_or_peer = 0;
  std::vector<CollectiveRankBuffers> ranks;  // the group's local ranks, in order
};

class CollectiveCompletion {
 public:
  virtual ~CollectiveCompletion() = default;
  virtual bool done() = 0;
  virtual void wait() = 0;  // throws what the library reported
};

// A communicator's local part. Calls come with every local device's launch mutex held.
class CollectiveGroup {
 public:
  virtual ~CollectiveGroup() = default;
  // Enqueues on each local device's queue after the work issued there so far.
  virtual std::unique_ptr<CollectiveCompletion> run(const CollectiveCall& call) = 0;
};

class CollectiveLibrary {
 public:
  virtual ~CollectiveLibrary() = default;
  virtual std::string name() const = 0;  // "NCCL 2.27.3"
  // Whether the library reduces `dtype` natively (data movement takes any dtype as bytes).
  virtual bool reduces(DType dtype) const = 0;
  virtual std::vector<std::byte> unique_id() = 0;
  virtual std::unique_ptr<CollectiveGroup> create_all(
      const std::vector<BackendDevice*>& devices) = 0;
  virtual std::unique_ptr<CollectiveGroup> create_rank(BackendDevice& device, int rank, int world,
                                                       std::span<const std::byte> id) = 0;
};

}  // namespace nbx
