// How Tensor::to moves bytes between two devices, as ops::to_device takes it and
// `nbx explain to --device A --to B` shows it.
#pragma once

#include <string>

#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/ops/explain.hpp"
#include "core/shape.hpp"

namespace nbx::ops {

struct CopyRoute {
  std::string name;    // "none", "upload", "download", "peer", "staged", "host"
  std::string reason;  // one sentence: what decided it
};

// The route from `from` to `to`, asking the backend where both are its devices (the
// runtime's peer query). Nothing is copied.
CopyRoute copy_route(const Device& from, const Device& to);

// The route as an explanation: `dtype` `shape` on `from`, copied to `to`.
OpExplanation explain_copy_route(DType dtype, const Shape& shape, const Device& from,
                                 const Device& to);

}  // namespace nbx::ops
