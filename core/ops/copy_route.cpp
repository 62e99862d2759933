#include "core/ops/copy_route.hpp"

#include "core/backend.hpp"
#include "core/ops/plan.hpp"
#include "core/shape.hpp"

namespace nbx::ops {

CopyRoute copy_route(const Device& from, const Device& to) {
  if (from == to) return {"none", "to() with the tensor's own device returns the tensor itself."};
  if (from.is_host())
    return {"upload", to.display_name() + " copies in from host memory (" + to.str() +
                          "'s own upload path)."};
  if (to.is_host())
    return {"download", from.display_name() + " copies out into host memory (" + from.str() +
                            "'s own download path)."};
  BackendDevice& dst = to.context().backend_device();
  std::string why;
  switch (dst.peer_route(from.context().backend_device(), &why)) {
    case PeerRoute::kPeer:
      return {"peer", "the runtime copies " + from.str() + " → " + to.str() + " directly on " +
                          to.str() + "'s stream (" + why + ")."};
    case PeerRoute::kStaged:
      return {"staged", "through " + to.str() +
                            "'s pinned host buffers, out on the source's stream and in on the "
                            "target's, no host wait between chunks (" +
                            why + ")."};
    case PeerRoute::kNone:
      break;
  }
  return {"host", "through host memory: a download from " + from.str() + ", an upload to " +
                      to.str() + " (" + why + ")."};
}

OpExplanation explain_copy_route(DType dtype, const Shape& shape, const Device& from,
                                 const Device& to) {
  const CopyRoute route = copy_route(from, to);
  const std::string what = std::string(dtype_name(dtype)) + " " + to_string(shape);
  OpExplanation e;
  e.op = "to";
  e.family = "copy";
  e.device = from.display_name() + " → " + to.display_name();
  e.inputs = {what + " on " + from.str(), "target device " + to.str()};
  e.output = what + " on " + to.str();
  e.kernel = route.name == "none" ? "none (no copy)" : "device copy, route " + route.name;
  e.choices.push_back({"route", route.name, "", "", route.reason});
  return e;
}

}  // namespace nbx::ops
