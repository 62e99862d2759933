// The one error hierarchy of nbxtensor. Every failure a user can cause or meet is one of
// these types; each carries structured fields as well as a full-sentence message.
//
//   Error ─┬─ InvalidArgument  bad shapes, dtypes, values, malformed device files
//          ├─ Unsupported      the device cannot do it (permanent; names the capability)
//          ├─ Unavailable      no driver, no device, backend not compiled in
//          ├─ OutOfMemory      requested / free / reserved / allocated bytes
//          ├─ DeviceFault      a kernel found bad input (index out of range, int div by 0)
//          ├─ DeviceLost       the device stopped answering
//          └─ Internal         a broken invariant of ours
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nbx {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

class InvalidArgument : public Error {
 public:
  // `op` names the operation or API that rejected the input ("add", "reshape", "device file").
  InvalidArgument(std::string op, const std::string& message)
      : Error(message), op_(std::move(op)) {}
  const std::string& op() const { return op_; }

 private:
  std::string op_;
};

// The device has no honest path for the request. Permanent for this device: retrying
// will not help. `capability` is the capability key that is missing ("fp64", "bf16").
class Unsupported : public Error {
 public:
  Unsupported(std::string op, std::string device, std::string capability,
              const std::string& message)
      : Error(message),
        op_(std::move(op)),
        device_(std::move(device)),
        capability_(std::move(capability)) {}
  const std::string& op() const { return op_; }
  const std::string& device() const { return device_; }
  const std::string& capability() const { return capability_; }

 private:
  std::string op_, device_, capability_;
};

// A backend or device cannot be reached: not compiled in, runtime library absent, no device.
class Unavailable : public Error {
 public:
  Unavailable(std::string backend, std::string reason, const std::string& message)
      : Error(message), backend_(std::move(backend)), reason_(std::move(reason)) {}
  const std::string& backend() const { return backend_; }
  const std::string& reason() const { return reason_; }

 private:
  std::string backend_, reason_;
};

class OutOfMemory : public Error {
 public:
  OutOfMemory(std::string device, std::uint64_t requested, std::uint64_t free_bytes,
              std::uint64_t reserved, std::uint64_t allocated, const std::string& message)
      : Error(message),
        device_(std::move(device)),
        requested_(requested),
        free_(free_bytes),
        reserved_(reserved),
        allocated_(allocated) {}
  const std::string& device() const { return device_; }
  std::uint64_t requested() const { return requested_; }
  std::uint64_t free_bytes() const { return free_; }
  std::uint64_t reserved() const { return reserved_; }
  std::uint64_t allocated() const { return allocated_; }

 private:
  std::string device_;
  std::uint64_t requested_, free_, reserved_, allocated_;
};

// A kernel found bad input. `index` is the offending value, `bound` the limit it broke,
// `position` the flat element position where it was found (-1 when not known).
class DeviceFault : public Error {
 public:
  DeviceFault(std::string op, std::string device, std::int64_t index, std::int64_t bound,
              std::int64_t position, const std::string& message)
      : Error(message),
        op_(std::move(op)),
        device_(std::move(device)),
        index_(index),
        bound_(bound),
        position_(position) {}
  const std::string& op() const { return op_; }
  const std::string& device() const { return device_; }
  std::int64_t index() const { return index_; }
  std::int64_t bound() const { return bound_; }
  std::int64_t position() const { return position_; }

 private:
  std::string op_, device_;
  std::int64_t index_, bound_, position_;
};

class DeviceLost : public Error {
 public:
  DeviceLost(std::string device, const std::string& message)
      : Error(message), device_(std::move(device)) {}
  const std::string& device() const { return device_; }

 private:
  std::string device_;
};

class Internal : public Error {
 public:
  explicit Internal(const std::string& message) : Error(message) {}
};

}  // namespace nbx
