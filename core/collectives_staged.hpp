// Collectives where a backend has no collective library (host, Vulkan): every rank is a
// device of this process, so a call copies the ranks' tensors to the host, combines them
// there with nbx's own host ops, and copies the results back — correct and ordered with
// each device's queue, but bounded by host copies; Communicator::library() says so.
#pragma once

#include <memory>
#include <vector>

#include "core/collective_seam.hpp"
#include "core/device.hpp"
#include "core/tensor.hpp"

namespace nbx {

// Runs `call` (its kind, op and root; core has checked the arguments) over the local ranks'
// tensors: sends[i] and recvs[i] are rank i's (one of them undefined where the call has no
// such tensor; the same tensor for in-place calls).
void run_staged(const CollectiveCall& call, const std::vector<Tensor>& sends,
                const std::vector<Tensor>& recvs);

// The staged calls' completion: the copies back are queued on each device; waiting for the
// work is waiting for those devices.
class StagedCompletion final : public CollectiveCompletion {
 public:
  explicit StagedCompletion(std::vector<Device> devices) : devices_(std::move(devices)) {}
  bool done() override { return false; }  // wait() below decides; it returns at once if idle
  void wait() override {
    for (const Device& d : devices_) d.synchronize();
  }

 private:
  std::vector<Device> devices_;
};

}  // namespace nbx
