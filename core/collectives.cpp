// nbx::Communicator: every argument checked here, the call then handed to the backend's
// collective library (core/collective_seam.hpp) with each local device's launch mutex held.
#include "core/collectives.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include "core/collective_seam.hpp"
#include "core/collectives_staged.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nbx {

class Work::State {
 public:
  explicit State(std::unique_ptr<CollectiveCompletion> c, std::vector<Tensor> keep)
      : completion(std::move(c)), tensors(std::move(keep)) {}
  std::unique_ptr<CollectiveCompletion> completion;
  std::vector<Tensor> tensors;  // alive until the work has finished
  std::mutex mutex;
  bool finished = false;
};

void Work::wait() const {
  if (!state_) return;
  std::lock_guard lock(state_->mutex);
  if (state_->finished) return;
  state_->completion->wait();
  state_->finished = true;
  state_->tensors.clear();
}

bool Work::done() const {
  if (!state_) return true;
  std::lock_guard lock(state_->mutex);
  return state_->finished || state_->completion->done();
}

class Communicator::State {
 public:
  std::unique_ptr<CollectiveGroup> group;
  CollectiveLibrary* library = nullptr;  // null: staged through host memory
  std::string library_name;
  int world = 0;
  std::vector<int> ranks;
  std::vector<Device> devices;
};

const char* reduce_op_name(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kAvg:
      return "avg";
  }
  return "?";
}

namespace {

// The backend's collective library for `device`; nullptr where the backend stages
// collectives through host memory; Unsupported naming why where it has neither.
CollectiveLibrary* library_for(const char* op, const Device& device) {
  Backend& backend = backend_by_name(device.id().backend);
  std::string why;
  if (CollectiveLibrary* lib = backend.collectives(why)) return lib;
  if (backend.stages_collectives_through_host()) return nullptr;
  throw Unsupported(op, device.str(), "collectives",
                    std::string(op) + " on " + device.display_name() + ": " + why + ".");
}

const char* const kStagedName = "host staging (each call copies through host memory)";

void require_world(const char* op, int rank, int world) {
  if (world < 1)
    throw InvalidArgument(op, std::string(op) + ": world_size must be at least 1, not " +
                                  std::to_string(world) + ".");
  if (rank < 0 || rank >= world)
    throw InvalidArgument(op, std::string(op) + ": rank " + std::to_string(rank) +
                                  " is outside [0, " + std::to_string(world) + ").");
}

}  // namespace

Communicator Communicator::create(const std::vector<Device>& devices) {
  const char* op = "Communicator::create";
  if (devices.empty()) throw InvalidArgument(op, std::string(op) + ": no devices given.");
  std::set<const DeviceContext*> seen;
  for (const Device& d : devices)
    if (!seen.insert(&d.context()).second)
      throw InvalidArgument(op, std::string(op) + ": " + d.str() +
                                    " is given twice; each rank needs its own device.");
  auto state = std::make_shared<State>();
  state->library = library_for(op, devices[0]);
  // A library spans its own backend's devices; staging through the host spans any devices
  // that stage (the host and Vulkan devices together, say).
  for (const Device& d : devices)
    if (state->library ? d.id().backend != devices[0].id().backend : library_for(op, d) != nullptr)
      throw InvalidArgument(op, std::string(op) + ": " + d.str() + " and " + devices[0].str() +
                                    " run collectives differently (" +
                                    (state->library ? state->library->name() : kStagedName) +
                                    " on " + devices[0].str() + "); one communicator spans one.");
  if (state->library) {
    std::vector<BackendDevice*> backend_devices;
    for (const Device& d : devices) backend_devices.push_back(&d.context().backend_device());
    state->group = state->library->create_all(backend_devices);
    state->library_name = state->library->name();
  } else {
    state->library_name = kStagedName;
  }
  state->world = static_cast<int>(devices.size());
  for (int r = 0; r < state->world; ++r) state->ranks.push_back(r);
  state->devices = devices;
  return Communicator(std::move(state));
}

CommUniqueId Communicator::unique_id(const Device& device) {
  const char* op = "Communicator::unique_id";
  CollectiveLibrary* lib = library_for(op, device);
  if (!lib)
    throw Unsupported(op, device.str(), "collectives.multi_process",
                      std::string(op) + " on " + device.display_name() +
                          ": collectives stage through host memory there, within one "
                          "process; there is no library to join ranks of other processes.");
  return {device.id().backend, lib->unique_id()};
}

Communicator Communicator::create(const Device& device, int rank, int world_size,
                                  const CommUniqueId& id) {
  const char* op = "Communicator::create";
  require_world(op, rank, world_size);
  if (id.backend != device.id().backend)
    throw InvalidArgument(op, std::string(op) + ": the id was made for backend '" + id.backend +
                                  "', not " + device.str() + "'s.");
  auto state = std::make_shared<State>();
  state->library = library_for(op, device);
  if (!state->library) (void)unique_id(device);  // throws: staging joins no other process
  state->group =
      state->library->create_rank(device.context().backend_device(), rank, world_size, id.bytes);
  state->library_name = state->library->name();
  state->world = world_size;
  state->ranks = {rank};
  state->devices = {device};
  return Communicator(std::move(state));
}

int Communicator::world_size() const {
  return state_->world;
}
const std::vector<int>& Communicator::ranks() const {
  return state_->ranks;
}
const std::vector<Device>& Communicator::devices() const {
  return state_->devices;
}
const std::string& Communicator::library() const {
  return state_->library_name;
}

namespace {

// The checks every call shares, and the launch.
struct CallBuilder {
  const Communicator::State& comm;
  const char* op;
  CollectiveCall call;
  std::vector<Tensor> keep;
  std::vector<Tensor> sends, recvs;  // per local rank; undefined where the call has none

  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument(op, std::string(op) + ": " + what);
  }

  void require_count(const std::vector<Tensor>& tensors, const std::string& role) const {
    const std::string what = role.empty() ? "tensor" : role + " tensor";
    if (tensors.size() != comm.devices.size())
      fail("takes one " + what + " a local device (" + std::to_string(comm.devices.size()) +
           "), not " + std::to_string(tensors.size()) + ".");
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (!tensors[i].defined()) fail(what + " " + std::to_string(i) + " is undefined.");
  }

  // Tensor i must be defined, contiguous, on local device i, of one dtype and `numel`.
  void require_tensor(const Tensor& t, std::size_t i, const char* role, DType dtype,
                      std::int64_t numel) const {
    const std::string which = std::string(role) + " " + std::to_string(i);
    if (!t.defined()) fail(which + " is undefined.");
    if (!(t.device() == comm.devices[i]))
      fail(which + " is on " + t.device().str() + ", not on rank " + std::to_string(comm.ranks[i]) +
           "'s device " + comm.devices[i].str() + ".");
    if (!t.is_contiguous()) fail(which + " is not contiguous; pass t.contiguous().");
    if (t.dtype() != dtype)
      fail(which + " is " + std::string(dtype_name(t.dtype())) + ", not " +
           std::string(dtype_name(dtype)) + " as the others.");
    if (t.numel() != numel)
      fail(which + " has " + std::to_string(t.numel()) + " elements, not " + std::to_string(numel) +
           ".");
  }

  // A reduction of `count` elements. bool reduces as PyTorch's process groups do: as uint8,
  // sum as max (logical or), prod as min (logical and). Otherwise the library must reduce
  // the dtype, and avg needs a floating one.
  void set_reduction(CollectiveKind kind, DType dtype, std::int64_t count, ReduceOp rop, int root) {
    const Device& d = comm.devices[0];
    if (rop == ReduceOp::kAvg && !is_floating(dtype))
      throw Unsupported(op, d.str(), "collectives.avg",
                        std::string(op) + ": avg needs a floating dtype, not " +
                            std::string(dtype_name(dtype)) + " (use sum, then divide).");
    if (dtype == DType::kBool) {
      dtype = DType::kUInt8;
      if (rop == ReduceOp::kSum) rop = ReduceOp::kMax;
      if (rop == ReduceOp::kProd) rop = ReduceOp::kMin;
    }
    if (comm.library && !comm.library->reduces(dtype))
      throw Unsupported(op, d.str(), std::string("collectives.") + std::string(dtype_name(dtype)),
                        std::string(op) + " on " + d.display_name() + ": " + comm.library_name +
                            " does not reduce " + std::string(dtype_name(dtype)) + ".");
    call = {kind, dtype, std::size_t(count), rop, root, {}};
  }

  void require_rank(int r, const char* role) const {
    if (r < 0 || r >= comm.world)
      fail(std::string(role) + " " + std::to_string(r) + " is outside [0, " +
           std::to_string(comm.world) + ").");
  }

  void add(std::size_t i, const Tensor* send, const Tensor* recv) {
    CollectiveRankBuffers b;
    b.device = &comm.devices[i].context().backend_device();
    auto address = [&](const Tensor& t) {
      auto* base = static_cast<std::byte*>(b.device->address_of(t.storage()->memory()));
      return base + t.offset() * static_cast<std::int64_t>(t.itemsize());
    };
    sends.push_back(send ? *send : Tensor());
    recvs.push_back(recv ? *recv : Tensor());
    if (!comm.library) return;  // staged: no addresses
    if (send) b.send = address(*send), keep.push_back(*send);
    if (recv) b.recv = address(*recv), keep.push_back(*recv);
    call.ranks.push_back(b);
  }

  // Data movement moves bytes: any dtype goes as uint8.
  void as_bytes(DType dtype, std::size_t count) {
    call.dtype = DType::kUInt8;
    call.count = count * dtype_size(dtype);
  }

  Work run() {
    if (!comm.library) {
      run_staged(call, sends, recvs);
      return Work(std::make_shared<Work::State>(std::make_unique<StagedCompletion>(comm.devices),
                                                std::vector<Tensor>{}));
    }
    // Every local device's launch mutex, in one global order (their contexts' addresses).
    std::vector<LaunchMutex*> mutexes;
    for (const Device& d : comm.devices) mutexes.push_back(&d.context().launch_mutex());
    std::sort(mutexes.begin(), mutexes.end());
    std::vector<std::unique_lock<LaunchMutex>> locks;
    for (LaunchMutex* m : mutexes) locks.emplace_back(*m);
    auto completion = comm.group->run(call);
    return Work(std::make_shared<Work::State>(std::move(completion), std::move(keep)));
  }
};

}  // namespace

Work Communicator::all_reduce(const std::vector<Tensor>& tensors, ReduceOp op) const {
  CallBuilder b{*state_, "all_reduce", {}, {}};
  b.require_count(tensors, "");
  const Tensor& t0 = tensors[0];
  for (std::size_t i = 0; i < tensors.size(); ++i)
    b.require_tensor(tensors[i], i, "tensor", t0.dtype(), t0.numel());
  b.set_reduction(CollectiveKind::kAllReduce, t0.dtype(), t0.numel(), op, 0);
  for (std::size_t i = 0; i < tensors.size(); ++i) b.add(i, &tensors[i], &tensors[i]);
  return b.run();
}

Work Communicator::broadcast(const std::vector<Tensor>& tensors, int root) const {
  CallBuilder b{*state_, "broadcast", {}, {}};
  b.require_count(tensors, "");
  b.require_rank(root, "root");
  const Tensor& t0 = tensors[0];
  for (std::size_t i = 0; i < tensors.size(); ++i)
    b.require_tensor(tensors[i], i, "tensor", t0.dtype(), t0.numel());
  b.call.kind = CollectiveKind::kBroadcast;
  b.call.root_or_peer = root;
  b.as_bytes(t0.dtype(), std::size_t(t0.numel()));
  for (std::size_t i = 0; i < tensors.size(); ++i) b.add(i, &tensors[i], &tensors[i]);
  return b.run();
}

Work Communicator::reduce(const std::vector<Tensor>& tensors, int root, ReduceOp op) const {
  CallBuilder b{*state_, "reduce", {}, {}};
  b.require_count(tensors, "");
  b.require_rank(root, "root");
  const Tensor& t0 = tensors[0];
  for (std::size_t i = 0; i < tensors.size(); ++i)
    b.require_tensor(tensors[i], i, "tensor", t0.dtype(), t0.numel());
  b.set_reduction(CollectiveKind::kReduce, t0.dtype(), t0.numel(), op, root);
  for (std::size_t i = 0; i < tensors.size(); ++i) b.add(i, &tensors[i], &tensors[i]);
  return b.run();
}

Work Communicator::all_gather(const std::vector<Tensor>& outputs,
                              const std::vector<Tensor>& inputs) const {
  CallBuilder b{*state_, "all_gather", {}, {}};
  b.require_count(inputs, "input");
  b.require_count(outputs, "output");
  const Tensor& t0 = inputs[0];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    b.require_tensor(inputs[i], i, "input", t0.dtype(), t0.numel());
    b.require_tensor(outputs[i], i, "output", t0.dtype(), t0.numel() * state_->world);
  }
  b.call.kind = CollectiveKind::kAllGather;
  b.as_bytes(t0.dtype(), std::size_t(t0.numel()));
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add(i, &inputs[i], &outputs[i]);
  return b.run();
}

Work Communicator::reduce_scatter(const std::vector<Tensor>& outputs,
                                  const std::vector<Tensor>& inputs, ReduceOp op) const {
  CallBuilder b{*state_, "reduce_scatter", {}, {}};
  b.require_count(inputs, "input");
  b.require_count(outputs, "output");
  const Tensor& o0 = outputs[0];
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    b.require_tensor(outputs[i], i, "output", o0.dtype(), o0.numel());
    b.require_tensor(inputs[i], i, "input", o0.dtype(), o0.numel() * state_->world);
  }
  b.set_reduction(CollectiveKind::kReduceScatter, o0.dtype(), o0.numel(), op, 0);
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add(i, &inputs[i], &outputs[i]);
  return b.run();
}

Work Communicator::all_to_all(const std::vector<Tensor>& outputs,
                              const std::vector<Tensor>& inputs) const {
  CallBuilder b{*state_, "all_to_all", {}, {}};
  b.require_count(inputs, "input");
  b.require_count(outputs, "output");
  const Tensor& t0 = inputs[0];
  if (t0.defined() && t0.numel() % state_->world != 0)
    b.fail("input 0 has " + std::to_string(t0.numel()) + " elements, not a multiple of " +
           std::to_string(state_->world) + " ranks.");
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    b.require_tensor(inputs[i], i, "input", t0.dtype(), t0.numel());
    b.require_tensor(outputs[i], i, "output", t0.dtype(), t0.numel());
  }
  b.call.kind = CollectiveKind::kAllToAll;
  b.as_bytes(t0.dtype(), std::size_t(t0.numel() / state_->world));
  for (std::size_t i = 0; i < inputs.size(); ++i) b.add(i, &inputs[i], &outputs[i]);
  return b.run();
}

namespace {

Work point_to_point(const Communicator::State& comm, const char* op, CollectiveKind kind,
                    const Tensor& tensor, int peer) {
  CallBuilder b{comm, op, {}, {}};
  if (comm.devices.size() != 1)
    b.fail("takes a communicator with one local rank (this one has " +
           std::to_string(comm.devices.size()) + "); with several, use all_to_all.");
  b.require_rank(peer, "peer");
  if (peer == comm.ranks[0]) b.fail("peer " + std::to_string(peer) + " is this rank itself.");
  b.require_count({tensor}, "");
  b.require_tensor(tensor, 0, "tensor", tensor.dtype(), tensor.numel());
  b.call.kind = kind;
  b.call.root_or_peer = peer;
  b.as_bytes(tensor.dtype(), std::size_t(tensor.numel()));
  if (kind == CollectiveKind::kSend)
    b.add(0, &tensor, nullptr);
  else
    b.add(0, nullptr, &tensor);
  return b.run();
}

}  // namespace

Work Communicator::send(const Tensor& tensor, int peer) const {
  return point_to_point(*state_, "send", CollectiveKind::kSend, tensor, peer);
}

Work Communicator::recv(const Tensor& tensor, int peer) const {
  return point_to_point(*state_, "recv", CollectiveKind::kRecv, tensor, peer);
}

}  // namespace nbx
