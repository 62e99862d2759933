#include <string>

#include "core/backend.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/families/kernel_family.hpp"

namespace nbx {

std::string LaunchCheck::op_name() const {
  return family_spec(family_).op_name(op_);
}

std::string LaunchCheck::device_name() const {
  return device_ ? device_->display_name() : std::string("a device");
}

void LaunchCheck::fail(const std::string& why) const {
  const std::string op = op_name();
  throw InvalidArgument(op, op + " launch on " + device_name() + ": " + why + ".");
}

void LaunchCheck::dtype(std::int32_t code, const char* label) const {
  if (code < 0 || code >= kNumDTypes)
    fail(std::string(label) + " has unknown dtype code " + std::to_string(code));
}

void LaunchCheck::floating_dtype(std::int32_t code, const char* label) const {
  dtype(code, label);
  if (!is_floating(DType(code)))
    fail(std::string(label) + " is " + std::string(dtype_name(DType(code))) +
         ", not a floating dtype");
}

void LaunchCheck::count(std::int64_t n, std::int64_t max, const char* label) const {
  if (n < 0 || n > max)
    fail(std::string(label) + " is " + std::to_string(n) + ", outside [0, " + std::to_string(max) +
         "]");
}

std::int64_t LaunchCheck::product(int n, const std::int64_t* sizes, const char* label) const {
  std::int64_t p = 1;
  bool overflow = false;
  for (int d = 0; d < n; ++d) {
    // Each size on its own: two negative sizes multiply to a plausible count.
    if (sizes[d] < 0)
      fail(std::string(label) + " has a negative size (" + std::to_string(sizes[d]) + ") in dim " +
           std::to_string(d));
    overflow |= __builtin_mul_overflow(p, sizes[d], &p);
  }
  if (overflow) fail(std::string(label) + " multiply past 2^63");
  return p;
}

void LaunchCheck::buffer_count(std::size_t bound, std::size_t expected) const {
  if (bound != expected)
    fail(std::to_string(bound) + " buffers bound; the launch takes " + std::to_string(expected));
}

LaunchCheck::View::View(const LaunchCheck& check, const char* label, std::int64_t offset)
    : check_(check), label_(label), extent_(offset) {
  if (offset < 0)
    check_.fail(std::string(label_) + " has a negative offset (" + std::to_string(offset) + ")");
}

LaunchCheck::View& LaunchCheck::View::dim(std::int64_t size, std::int64_t stride) {
  extent_.dim(size, stride);
  if (size < 0)
    check_.fail(std::string(label_) + " has a negative size (" + std::to_string(size) + ")");
  if (stride < 0)
    check_.fail(std::string(label_) + " has a negative stride (" + std::to_string(stride) + ")");
  return *this;
}

LaunchCheck::View& LaunchCheck::View::dims(int n, const std::int64_t* sizes,
                                           const std::int64_t* strides) {
  for (int d = 0; d < n; ++d) dim(sizes[d], strides[d]);
  return *this;
}

void LaunchCheck::View::inside(const KernelBuffer& buffer, std::int32_t dtype) const {
  if (extent_.empty()) return;
  check_.dtype(dtype, label_);
  if (!buffer.memory)
    check_.fail(std::string(label_) + " has elements but no buffer is bound to it");
  if (!extent_.fits(buffer.memory.bytes, dtype_size(DType(dtype))))
    check_.fail(std::string(label_) +
                (extent_.ok() ? " reaches element " + std::to_string(extent_.last())
                              : " reaches past 2^63 elements") +
                " from element " + std::to_string(extent_.offset()) + ", beyond its buffer of " +
                std::to_string(buffer.memory.bytes) + " bytes");
}

}  // namespace nbx
