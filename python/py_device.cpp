// Devices, capabilities, explain and timing: nbx.device (nbx.open), nbx.caps, nbx.explain,
// nbx.Event, nbx.synchronize, the determinism switch.
#include <optional>
#include <string>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/event.hpp"
#include "core/ops/explain.hpp"
#include "core/ops/index_write.hpp"
#include "core/registry.hpp"
#include "python/py_casters.hpp"

namespace nbx::python {
namespace {

py::object json_loads(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

// explain's operands: one dtype or a list; one shape (a sequence of ints) or a list of them.
std::vector<DType> dtype_list(const py::object& o) {
  if (py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o))
    return o.cast<std::vector<DType>>();
  return {o.cast<DType>()};
}

std::vector<Shape> shape_list(const py::object& o) {
  if ((py::isinstance<py::list>(o) || py::isinstance<py::tuple>(o)) && py::len(o) > 0 &&
      !PyLong_Check(py::sequence(o)[0].ptr()))
    return o.cast<std::vector<Shape>>();
  return {o.cast<Shape>()};
}

py::dict memory_stats(const Device& d) {
  const AllocatorStats s = d.memory_stats();
  py::dict out;
  out["allocated"] = s.allocated;
  out["reserved"] = s.reserved;
  out["peak_allocated"] = s.peak_allocated;
  out["peak_reserved"] = s.peak_reserved;
  out["allocations"] = s.allocations;
  out["cache_hits"] = s.cache_hits;
  out["oom_retries"] = s.oom_retries;
  return out;
}

}  // namespace

void bind_device(py::module_& m) {
  py::class_<Device>(m, "device", "A device handle: nbx.device('cuda:0') is nbx.open('cuda:0').")
      .def(py::init([](const std::string& name) { return open(name); }), py::arg("name"))
      .def_property_readonly("type", [](const Device& d) { return d.id().backend; })
      .def_property_readonly("index", [](const Device& d) { return d.id().index; })
      .def_property_readonly("name", &Device::display_name)
      .def("synchronize", &Device::synchronize,
           "Waits for the work issued on the device; raises a fault a kernel recorded.")
      .def("memory_stats", &memory_stats)
      .def("empty_cache", &Device::empty_cache)
      .def("__str__", &Device::str)
      .def("__repr__", [](const Device& d) { return "nbx.device('" + d.str() + "')"; })
      .def(
          "__eq__", [](const Device& a, const Device& b) { return a == b; }, py::is_operator())
      .def("__hash__", [](const Device& d) { return py::hash(py::str(d.str())); });
  py::implicitly_convertible<py::str, Device>();

  m.def(
      "open", [](const std::string& name) { return open(name); }, py::arg("name"),
      "Opens (once per process) 'host', 'cuda:0', 'vulkan:1' …; raises Unavailable when the "
      "backend or device is absent.");
  m.def("default_device", &default_device, "$NBX_DEVICE, else the first GPU, else the host.");
  m.def("host", &host_device, "The host device.");
  m.def(
      "devices",
      [] {
        std::vector<std::string> names;
        for (const BackendStatus& s : backend_statuses()) {
          if (!s.backend) continue;
          const DeviceListing listing = s.backend->list_devices();
          for (std::size_t i = 0; i < listing.devices.size(); ++i)
            names.push_back(s.name == "host" ? "host" : s.name + ":" + std::to_string(i));
        }
        return names;
      },
      "The names of the devices present, in `nbx devices` order.");
  m.def(
      "synchronize", [](const Device& d) { d.synchronize(); }, py::arg("device"));

  m.def(
      "caps",
      [](std::optional<Device> device, std::optional<std::string> arch) {
        if (device && arch)
          throw InvalidArgument("caps", "caps: give a device or an arch, not both.");
        const Capabilities caps = arch ? capabilities_for_arch(*arch)
                                       : (device ? *device : default_device()).capabilities();
        return json_loads(capabilities_to_json(caps));
      },
      py::arg("device") = py::none(), py::arg("arch") = py::none(),
      "The device's capabilities as `nbx caps --json` describes one device: device, "
      "device_file, match, overlay, capabilities ({key: {value, source}}), conflicts. arch= "
      "('nvidia/sm_70', a .yml path) gives an absent architecture's declared ones.");

  m.def(
      "explain",
      [](const std::string& op, const py::object& dtypes, const py::object& shapes,
         std::optional<Device> device, std::optional<std::string> arch, std::int64_t groups,
         bool causal) {
        if (device && arch)
          throw InvalidArgument("explain", "explain: give a device or an arch, not both.");
        std::optional<Device> present;
        Capabilities caps;
        std::string id, name;
        if (arch) {
          caps = capabilities_for_arch(*arch);
          id = *arch;
          name = "arch " + *arch;
        } else {
          present = device ? *device : default_device();
          caps = present->capabilities();
          id = present->str();
          name = present->display_name();
        }
        const ops::PlanTarget target{caps, id, name,
                                     present ? &present->context().backend_device() : nullptr};
        const ops::OpExplanation e =
            ops::explain(op, dtype_list(dtypes), shape_list(shapes), target, {groups, causal});
        return json_loads(ops::explanation_to_json(e));
      },
      py::arg("op"), py::arg("dtypes"), py::arg("shapes"), py::arg("device") = py::none(),
      py::arg("arch") = py::none(), py::arg("groups") = 1, py::arg("causal") = false,
      "The plan an op's wrapper makes, as `nbx explain --json` prints it (schema "
      "nbx.explain/1), without running: dtypes and shapes one per operand (one shape may "
      "serve all). A refusal is reported (refused, refusal, capability), not raised.");
  m.def("op_names", &ops::explainable_ops, "Every public op's name (the catalog, sorted).");

  m.def("set_deterministic_algorithms", &set_deterministic_algorithms, py::arg("on"));
  m.def("deterministic_algorithms", &deterministic_algorithms);

  py::class_<Event>(m, "Event",
                    "Times work on a device as CUDA events do: start.record(); …; end.record(); "
                    "start.elapsed_ms(end).")
      .def(py::init<Device>(), py::arg("device"))
      .def("record", &Event::record,
           "Records after the work issued so far; raises Unsupported on a device without a "
           "timer on its queue.")
      .def("synchronize", &Event::synchronize)
      .def("elapsed_ms", &Event::elapsed_ms, py::arg("end"),
           "Milliseconds from this event to `end`; waits for `end`.")
      .def_property_readonly("recorded", &Event::recorded)
      .def_property_readonly("device", &Event::device);
}

}  // namespace nbx::python
