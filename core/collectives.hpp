// Collectives over several devices: nbx::Communicator, on the library the field trusts for
// them — NCCL on CUDA devices (RCCL on HIP where built), loaded with dlopen like cuBLASLt.
//
// Two ways to make one, as NCCL's own examples and PyTorch's process groups do:
//   - one process driving several devices: Communicator::create({cuda0, cuda1, …}), rank i
//     being devices[i]; every call then takes one tensor a device, in that order;
//   - one process a device: rank 0 calls Communicator::unique_id(device) and hands the id to
//     the other processes (a file, a socket, MPI: the caller's choice); each then calls
//     Communicator::create(device, rank, world_size, id); every call takes one tensor.
// A call is enqueued on each device's queue after the work issued there so far and returns
// a Work at once; later work on those devices runs after it, and Work::wait() blocks the
// calling thread until it has finished. Tensors must be contiguous, of one dtype and size.
//
// Host and Vulkan devices have no such library: a communicator over them (in one process;
// the host and Vulkan devices may be mixed) stages every call through host memory, correct
// and ordered with each device's queue but bounded by the copies, and library() says
// "host staging". They have no unique_id: staging joins no other process. A CUDA (HIP) build
// or machine without libnccl.so.2 (RCCL) throws Unsupported ("collectives") naming what is
// missing: staging there would hide the missing library behind a far slower path.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/device.hpp"
#include "core/tensor.hpp"

namespace nbx {

// torch.distributed.ReduceOp's SUM, PRODUCT, MIN, MAX and AVG (floating dtypes only).
enum class ReduceOp : int { kSum = 0, kProd = 1, kMin = 2, kMax = 3, kAvg = 4 };

// The id that ties the processes of one communicator together (NCCL's ncclUniqueId): made
// once, by the rank that calls unique_id, and passed to every rank by the caller.
struct CommUniqueId {
  std::string backend;           // "cuda"
  std::vector<std::byte> bytes;  // opaque, 128 bytes for NCCL
};

// A collective in flight: done() asks without blocking, wait() blocks until the work has
// finished on every device it runs on and rethrows a failure the library reported.
class Work {
 public:
  class State;
  Work() = default;
  explicit Work(std::shared_ptr<State> state) : state_(std::move(state)) {}
  void wait() const;
  bool done() const;

 private:
  std::shared_ptr<State> state_;
};

class Communicator {
 public:
  class State;
  // Every rank in this process: rank i is devices[i] (distinct devices of one backend, or
  // any that stage through the host).
  static Communicator create(const std::vector<Device>& devices);
  // One rank of `world_size`, one process (or thread) a rank; `id` from unique_id.
  static Communicator create(const Device& device, int rank, int world_size,
                             const CommUniqueId& id);
  static CommUniqueId unique_id(const Device& device);

  int world_size() const;
  // This process's ranks and their devices, in the order calls take tensors.
  const std::vector<int>& ranks() const;
  const std::vector<Device>& devices() const;
  // "NCCL 2.27.3": what runs the collectives.
  const std::string& library() const;

  // Each takes one tensor a local device, in devices() order (a vector of one for a single
  // rank). In place: all_reduce and broadcast (the root's tensor to all), reduce (into the
  // root's). all_gather: each output holds world_size inputs one after another (PyTorch's
  // all_gather_into_tensor); reduce_scatter: each input holds world_size blocks, rank r's
  // output gets block r reduced over ranks (reduce_scatter_tensor); all_to_all: block p of
  // rank r's input becomes block r of rank p's output (all_to_all_single, equal splits).
  Work all_reduce(const std::vector<Tensor>& tensors, ReduceOp op = ReduceOp::kSum) const;
  Work broadcast(const std::vector<Tensor>& tensors, int root) const;
  Work reduce(const std::vector<Tensor>& tensors, int root, ReduceOp op = ReduceOp::kSum) const;
  Work all_gather(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs) const;
  Work reduce_scatter(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                      ReduceOp op = ReduceOp::kSum) const;
  Work all_to_all(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs) const;
  // Point to point, for a communicator with one local rank: the peer posts the matching
  // recv/send with a tensor of the same dtype and size.
  Work send(const Tensor& tensor, int peer) const;
  Work recv(const Tensor& tensor, int peer) const;

 private:
  explicit Communicator(std::shared_ptr<State> state) : state_(std::move(state)) {}
  std::shared_ptr<State> state_;
};

const char* reduce_op_name(ReduceOp op);  // "sum", "prod", "min", "max", "avg"

}  // namespace nbx
