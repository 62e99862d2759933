// The fault tests' common step (test_index_faults, test_index_write_faults): run an op that
// reads one bad index, note where its nbx::DeviceFault surfaced, and check the fault names
// the op, device, index, bound and position exactly — raised by the op itself on the host
// (it checks while it runs), at the next synchronize or read back on a GPU, and once only.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nbx/nbx.hpp"

namespace nbx::testing {

// Where a fault surfaced: "op" (the call itself), "synchronize", "read back", or "" (none);
// `other` holds any other error's message.
struct FaultOutcome {
  std::string stage;
  std::optional<DeviceFault> fault;
  std::string other;
};

inline FaultOutcome run_expecting_fault(const Device& d, const std::function<Tensor()>& op) {
  FaultOutcome o;
  Tensor r;
  try {
    o.stage = "op";
    r = op();
    o.stage = "synchronize";
    d.synchronize();
    o.stage = "read back";
    std::vector<std::byte> bytes(std::size_t(r.numel()) * r.itemsize());
    if (!bytes.empty()) r.contiguous().copy_to_host(bytes.data());
    o.stage = "";
  } catch (const DeviceFault& f) {
    o.fault = f;
  } catch (const Error& e) {
    o.other = e.what();
  }
  return o;
}

// What the fault must say; `low` is the range's lower end as the message prints it ("0", or
// -bound for ops that wrap negative indices).
struct ExpectedFault {
  std::string op;
  std::int64_t index, bound, position;
  std::string low;
};

// Runs `op` and checks its fault against `want`; false (after a failed check) when none came.
inline bool expect_fault(const Device& d, const ExpectedFault& want,
                         const std::function<Tensor()>& op) {
  const FaultOutcome o = run_expecting_fault(d, op);
  if (!o.fault) {
    FAIL_CHECK("no DeviceFault: " << (o.other.empty() ? "no error at all" : o.other));
    return false;
  }
  const DeviceFault& f = *o.fault;
  CHECK(f.op() == want.op);
  CHECK(f.device() == d.str());
  CHECK(f.index() == want.index);
  CHECK(f.bound() == want.bound);
  CHECK(f.position() == want.position);
  if (d.is_host())
    CHECK(o.stage == "op");
  else
    CHECK(o.stage != "op");
  const std::string words = "index " + std::to_string(want.index) + " is out of range [" +
                            want.low + ", " + std::to_string(want.bound) + ") at position " +
                            std::to_string(want.position);
  CHECK_MESSAGE(std::string(f.what()).find(words) != std::string::npos, f.what());
  CHECK_NOTHROW(d.synchronize());  // nothing pending afterwards: raised once
  return true;
}

}  // namespace nbx::testing
