// PyTorch's rules for writing into an existing tensor (see the header), and the two writes
// every in-place form ends in: the cast-and-broadcast copy and the fill.
#include "core/ops/inplace_write.hpp"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/ops/elementwise_launch.hpp"
#include "core/ops/plan.hpp"
#include "core/shape.hpp"

namespace nbx::ops::detail {
namespace {

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

// PyTorch's is_non_overlapping_and_dense: the elements fill numel() consecutive slots in some
// order of the dims (size-1 dims may carry any stride).
bool is_dense(const Tensor& t) {
  std::vector<std::pair<std::int64_t, std::int64_t>> dims;  // (stride, size)
  for (int d = 0; d < t.dim(); ++d)
    if (t.shape()[d] != 1) dims.emplace_back(t.strides()[d], t.shape()[d]);
  std::sort(dims.begin(), dims.end());
  std::int64_t expect = 1;
  for (auto [stride, size] : dims) {
    if (stride != expect) return false;
    expect *= size;
  }
  return true;
}

// The bytes [begin, end) a view may touch; strides are never negative, so the first
// element is the lowest.
// (The Tensor constructor checked this extent against the storage's bytes: nothing wraps.)
std::pair<std::int64_t, std::int64_t> byte_span(const Tensor& t) {
  const ViewExtent extent(t.offset(), t.shape(), t.strides());
  const auto size = static_cast<std::int64_t>(t.itemsize());
  return {t.offset() * size, extent.empty() ? t.offset() * size : (extent.last() + 1) * size};
}

// Whether `from` broadcasts to `to` without growing it.
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (int i = 1; i <= from.size(); ++i) {
    const std::int64_t s = from[from.size() - i];
    if (s != 1 && s != to[to.size() - i]) return false;
  }
  return true;
}

const char* const kCloneAdvice = " Please clone() the tensor before performing the operation.";

}  // namespace

bool can_cast(DType from, DType to) {
  if (is_floating(from) && !is_floating(to)) return false;
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

Overlap overlap_of(const Tensor& destination, const Tensor& input) {
  if (destination.storage() != input.storage() || destination.numel() == 0 || input.numel() == 0)
    return Overlap::kNone;
  // Element for element the same address (in bytes, so the comparison holds for any two
  // dtypes): each element is read and written by the same kernel thread, as x.add_(x) needs.
  if (broadcasts_to(input.shape(), destination.shape())) {
    const Strides read = broadcast_strides(input.shape(), input.strides(), destination.shape());
    const auto in_size = static_cast<std::int64_t>(input.itemsize());
    const auto out_size = static_cast<std::int64_t>(destination.itemsize());
    bool same = input.offset() * in_size == destination.offset() * out_size;
    for (int d = 0; same && d < destination.dim(); ++d)
      same =
          destination.shape()[d] == 1 || read[d] * in_size == destination.strides()[d] * out_size;
    if (same) return Overlap::kSame;
  }
  const auto [out_begin, out_end] = byte_span(destination);
  const auto [in_begin, in_end] = byte_span(input);
  if (out_end <= in_begin || in_end <= out_begin) return Overlap::kNone;
  return is_dense(destination) && is_dense(input) ? Overlap::kPartial : Overlap::kMayOverlap;
}

void require_no_internal_overlap(std::string_view form, const Tensor& destination) {
  for (int d = 0; d < destination.dim(); ++d)
    if (destination.strides()[d] == 0 && destination.shape()[d] > 1) {
      const std::string name(form);
      throw InvalidArgument(name, name +
                                      ": unsupported operation: more than one element of the "
                                      "written-to tensor refers to a single memory location "
                                      "(a view of shape " +
                                      to_string(destination.shape()) + " with strides " +
                                      to_string(destination.strides()) + ")." + kCloneAdvice);
    }
}

void require_no_partial_overlap(std::string_view form, const Tensor& destination,
                                const Tensor& input) {
  if (overlap_of(destination, input) != Overlap::kPartial) return;
  const std::string name(form);
  throw InvalidArgument(name, name +
                                  ": unsupported operation: some elements of the input tensor "
                                  "and the written-to tensor refer to a single memory location "
                                  "in memory." +
                                  kCloneAdvice);
}

void check_destination(std::string_view form, const Tensor& destination, const Shape& result_shape,
                       DType result_dtype, const Device& device, bool exact_dtype, bool in_place) {
  const std::string name(form);
  if (!destination.defined())
    throw InvalidArgument(name, name + ": the tensor written to is undefined.");
  if (!(destination.device() == device))
    throw InvalidArgument(name, name + ": the tensor written to lives on " +
                                    destination.device().str() + " but the op runs on " +
                                    device.str() + "; move it with .to(device) first.");
  if (!(destination.shape() == result_shape)) {
    if (in_place)
      throw InvalidArgument(name, name + ": output with shape " + to_string(destination.shape()) +
                                      " doesn't match the broadcast shape " +
                                      to_string(result_shape) + " (an in-place op never grows " +
                                      "its tensor).");
    throw InvalidArgument(name, name + ": out has shape " + to_string(destination.shape()) +
                                    " but the result has shape " + to_string(result_shape) +
                                    "; nbx never resizes an out= tensor (PyTorch resizes one, "
                                    "with a warning unless it is empty), so pass one of the "
                                    "result's shape.");
  }
  const DType to = destination.dtype();
  if (exact_dtype && to != result_dtype)
    throw InvalidArgument(name, name + ": out has dtype " + dtype_str(to) + " but the result is " +
                                    dtype_str(result_dtype) +
                                    "; this op writes only its result dtype.");
  if (!can_cast(result_dtype, to))
    throw InvalidArgument(name, name + ": result type " + dtype_str(result_dtype) +
                                    " can't be cast to the desired output type " + dtype_str(to) +
                                    ".");
}

void copy_into(std::string_view form, const Tensor& destination, const Tensor& src) {
  const std::string name(form);
  if (!destination.defined() || !src.defined())
    throw InvalidArgument(
        name,
        name + ": " + (destination.defined() ? "the source" : "the tensor") + " is undefined.");
  require_no_internal_overlap(form, destination);
  const Shape& shape = destination.shape();
  if (!broadcasts_to(src.shape(), shape))
    throw InvalidArgument(name, name + ": the source of shape " + to_string(src.shape()) +
                                    " does not broadcast to the written-to tensor's shape " +
                                    to_string(shape) + ".");
  const Device& device = destination.device();
  Tensor from = src;
  if (!(src.device() == device)) {
    // Cast where the host can do it (it holds every dtype), otherwise on the source device,
    // then move: to_device stages a copy between two non-host devices through the host.
    from = device.is_host() ? src.to(device).to(destination.dtype())
                            : src.to(destination.dtype()).to(device);
  }
  switch (overlap_of(destination, from)) {
    case Overlap::kSame:
      if (from.dtype() == destination.dtype()) return;  // already there (x.copy_(x))
      break;
    case Overlap::kPartial:
      require_no_partial_overlap(form, destination, from);
      break;
    case Overlap::kMayOverlap:
      from = from.clone();  // a strided source that may share elements: read a snapshot
      break;
    case Overlap::kNone:
      break;
  }
  const ElementPlan plan = plan_cast(form, from.dtype(), destination.dtype(), shape,
                                     {device.capabilities(), device.str(), device.display_name()});
  ElementwiseLaunch launch;
  launch.op_name = form;
  launch.op = abi::kOp_copy;
  launch.out_dtype = plan.out_dtype;
  launch.compute_dtype = plan.compute_dtype;
  launch.inputs.push_back({from, {}});
  launch_elementwise_into(device, launch, destination);
}

void fill_into(std::string_view form, const Tensor& destination, const Scalar& value) {
  const std::string name(form);
  if (!destination.defined()) throw InvalidArgument(name, name + ": the tensor is undefined.");
  const Device& device = destination.device();
  require_dtype_support(form, destination.dtype(), device);
  require_fits(form, value, destination.dtype());
  // An expanded view is allowed, as in PyTorch: every write to a shared element stores the
  // same value.
  ElementwiseLaunch launch;
  launch.op_name = form;
  launch.op = abi::kOp_copy;
  launch.out_dtype = launch.compute_dtype = destination.dtype();
  launch.inputs.push_back({Tensor(), scalar_value(value)});
  launch_elementwise_into(device, launch, destination);
}

Tensor write_result(std::string_view form, const Tensor& out, const Tensor& result,
                    bool exact_dtype) {
  check_destination(form, out, result.shape(), result.dtype(), result.device(), exact_dtype);
  copy_into(form, out, result);
  return out;
}

}  // namespace nbx::ops::detail
