// DLPack export (Tensor::to_dlpack) and import (from_dlpack): dlpack.hpp states the contract.
#include "core/dlpack.hpp"

#include <dlpack/dlpack.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/errors.hpp"
#include "core/shape.hpp"

namespace nbx {
namespace {

// DLPack 0.8 gave bool a code of its own; Debian 12's header (0.6) predates it.
constexpr std::uint8_t kDLBoolCode = 6;

struct DTypeCode {
  DType dtype;
  std::uint8_t code;
  std::uint8_t bits;
};
constexpr DTypeCode kDTypeCodes[] = {
    {DType::kBool, kDLBoolCode, 8},  {DType::kInt8, kDLInt, 8},
    {DType::kUInt8, kDLUInt, 8},     {DType::kInt16, kDLInt, 16},
    {DType::kInt32, kDLInt, 32},     {DType::kInt64, kDLInt, 64},
    {DType::kFloat16, kDLFloat, 16}, {DType::kBFloat16, kDLBfloat, 16},
    {DType::kFloat32, kDLFloat, 32}, {DType::kFloat64, kDLFloat, 64},
};

DLDataType dl_dtype(DType t) {
  for (const DTypeCode& c : kDTypeCodes)
    if (c.dtype == t) return {c.code, c.bits, 1};
  throw Internal("to_dlpack: dtype " + std::string(dtype_name(t)) + " has no DLPack code.");
}

DType nbx_dtype(DLDataType t) {
  if (t.lanes == 1)
    for (const DTypeCode& c : kDTypeCodes)
      if (c.code == t.code && c.bits == t.bits) return c.dtype;
  throw InvalidArgument("from_dlpack", "from_dlpack: DLPack dtype (code " + std::to_string(t.code) +
                                           ", " + std::to_string(t.bits) + " bits, " +
                                           std::to_string(t.lanes) +
                                           " lanes) has no nbx dtype (nbx has bool, int8–64, "
                                           "uint8, float16/32/64 and bfloat16).");
}

// The nbx device of DLPack memory. Pinned host memory (kDLCUDAHost, kDLROCMHost) is host
// memory the CPU addresses directly.
Device device_of(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
    case kDLROCMHost:
      return host_device();
    case kDLCUDA:
      return open(DeviceId{"cuda", d.device_id});
    case kDLROCM:
      return open(DeviceId{"hip", d.device_id});
    case kDLVulkan: {
      const std::string id = "vulkan:" + std::to_string(d.device_id);
      throw Unsupported("from_dlpack", id, "dlpack",
                        "from_dlpack on " + id +
                            ": DLPack's Vulkan memory is not an address nbx's Vulkan backend "
                            "can bind; refused.");
    }
    default:
      throw InvalidArgument("from_dlpack",
                            "from_dlpack: DLPack device type " + std::to_string(d.device_type) +
                                " has no nbx backend (nbx takes kDLCPU, kDLCUDAHost, "
                                "kDLROCMHost, kDLCUDA and kDLROCM memory).");
  }
}

// What an exported DLManagedTensor owns: the tensor (its storage stays alive) and the
// shape and strides the struct points at.
struct Export {
  DLManagedTensor managed{};
  Tensor tensor;
  std::int64_t shape[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};
};

}  // namespace

std::pair<std::int32_t, std::int32_t> dlpack_device(const Device& device) {
  const DeviceId& id = device.id();
  if (id.is_host()) return {kDLCPU, 0};
  if (id.backend == "cuda") return {kDLCUDA, id.index};
  if (id.backend == "hip") return {kDLROCM, id.index};
  if (id.backend == "vulkan") return {kDLVulkan, id.index};
  throw Internal("dlpack_device: backend " + id.backend + " has no DLPack device type.");
}

DLManagedTensor* Tensor::to_dlpack() const {
  require_defined("to_dlpack");
  const Device& dev = device();
  const auto [type, index] = dlpack_device(dev);
  // Refuses Vulkan memory (not an address) before anything else happens.
  auto* base =
      static_cast<std::byte*>(dev.context().backend_device().address_of(storage_->memory()));
  dev.synchronize();
  auto e = std::make_unique<Export>();
  e->tensor = *this;
  for (int d = 0; d < dim(); ++d) {
    e->shape[d] = shape_[d];
    e->strides[d] = strides_[d];
  }
  DLTensor& t = e->managed.dl_tensor;
  // The first element's address with byte_offset 0, as PyTorch exports: some consumers
  // (PyTorch 1.13's from_dlpack among them) ignore byte_offset.
  t.data = base ? base + offset_ * std::int64_t(itemsize()) : nullptr;
  t.device = {static_cast<DLDeviceType>(type), index};
  t.ndim = dim();
  t.dtype = dl_dtype(dtype_);
  t.shape = e->shape;
  t.strides = e->strides;
  t.byte_offset = 0;
  e->managed.manager_ctx = e.get();
  e->managed.deleter = [](DLManagedTensor* m) { delete static_cast<Export*>(m->manager_ctx); };
  return &e.release()->managed;
}

namespace {

Tensor borrow_tensor(const char* op, void* data, const Shape& shape, const Strides& strides,
                     DType dtype, const Device& device, std::function<void()> release) {
  const auto refuse = [op](const std::string& why) {
    throw InvalidArgument(op, std::string(op) + ": " + why + ".");
  };
  if (shape.size() != strides.size())
    refuse("sizes " + to_string(shape) + " and strides " + to_string(strides) + " differ in rank");
  // The same extent the Tensor constructor checks, from the producer's first element.
  const ViewExtent extent(0, shape, strides);
  if (extent.fault() == ViewExtent::Fault::kNegativeSize) refuse(extent.fault_text());
  if (extent.fault() == ViewExtent::Fault::kNegativeStride)
    refuse(extent.fault_text() +
           "; nbx views have none (make the producer's tensor contiguous first)");
  const std::size_t item = dtype_size(dtype);
  if (reinterpret_cast<std::uintptr_t>(data) % item != 0)
    refuse("the data address is not aligned to its " + std::string(dtype_name(dtype)) +
           " elements (" + std::to_string(item) + " bytes)");
  const std::optional<std::int64_t> end = extent.end_bytes(item);
  if (!end)
    refuse("a view of " + to_string(shape) + " with strides " + to_string(strides) +
           " reaches past 2^63 bytes");
  const auto bytes = static_cast<std::size_t>(*end);  // the bytes the producer's view spans
  BackendDevice& backend = device.context().backend_device();
  const BorrowedMemory lent = backend.borrow(data, bytes);
  // `release` runs only once the tensor stands: until then the caller keeps the memory.
  auto armed = std::make_shared<bool>(false);
  std::shared_ptr<Storage> storage;
  try {
    storage = std::make_shared<Storage>(device, lent.memory, lent.memory.bytes,
                                        [release = std::move(release), armed] {
                                          if (*armed && release) release();
                                        });
  } catch (...) {
    backend.end_borrow(lent.memory);
    throw;
  }
  Tensor out(std::move(storage), std::int64_t(lent.head_bytes / item), shape, strides, dtype);
  *armed = true;
  return out;
}

}  // namespace

Tensor from_blob(void* data, const Shape& shape, const Strides& strides, DType dtype,
                 const Device& device, std::function<void()> release) {
  return borrow_tensor("from_blob", data, shape, strides, dtype, device, std::move(release));
}

Tensor from_dlpack(DLManagedTensor* managed) {
  if (!managed) throw InvalidArgument("from_dlpack", "from_dlpack: a null DLManagedTensor.");
  const DLTensor& t = managed->dl_tensor;
  const DType dtype = nbx_dtype(t.dtype);
  if (t.ndim < 0 || t.ndim > kMaxDims)
    throw InvalidArgument("from_dlpack", "from_dlpack: " + std::to_string(t.ndim) +
                                             " dims; nbx tensors have at most " +
                                             std::to_string(kMaxDims) + ".");
  Shape shape;
  Strides strides;
  for (int d = 0; d < t.ndim; ++d) {
    shape.push_back(t.shape[d]);
    if (t.strides) strides.push_back(t.strides[d]);
  }
  if (!t.strides) strides = contiguous_strides(shape);
  const Device device = device_of(t.device);
  return borrow_tensor("from_dlpack", static_cast<std::byte*>(t.data) + t.byte_offset, shape,
                       strides, dtype, device, [managed] {
                         if (managed->deleter) managed->deleter(managed);
                       });
}

}  // namespace nbx
