// How the in-place and out= forms of the elementwise ops (inplace.hpp) reach the one launch
// of the op they wrap without a second signature per op: the form installs its destination
// for the current thread, calls the ordinary op (which validates its arguments as always),
// and the op's run() claims the destination for its launch. Internal to core/ops.
#pragma once

#include <string>
#include <string_view>

#include "core/ops/elementwise_launch.hpp"

namespace nbx::ops::detail {

// Installed for the duration of one in-place or out= call on this thread; restores the
// previous one (if any) when it goes.
class ScopedDestination {
 public:
  // `op`: the name run() knows the op by ("add", "masked_fill"); `form`: the public form,
  // for messages ("add_", "add_out").
  ScopedDestination(const Tensor& out, std::string_view op, std::string form, bool in_place);
  ~ScopedDestination();
  ScopedDestination(const ScopedDestination&) = delete;
  ScopedDestination& operator=(const ScopedDestination&) = delete;

  // What the form returns given the op's `result`: the destination itself when the op's
  // launch wrote it; otherwise (an op made of several launches, which ran out of place)
  // `result` checked and copied into it.
  Tensor finish(const Tensor& result) const;

 private:
  friend const OutputView* claim_destination(std::string_view op);
  std::string form_;
  std::string_view op_;
  OutputView out_;
  bool run_seen_ = false;  // a launch already ran in this scope
  bool claimed_ = false;
  ScopedDestination* previous_;
};

// For the elementwise run(): the destination installed for op `op`, or nullptr. Only the
// first launch of the scope may claim it, and only when it is the op's own (a composite op
// whose first launch computes an intermediate must not write that into self).
const OutputView* claim_destination(std::string_view op);

}  // namespace nbx::ops::detail
