// nbx's error hierarchy as Python exceptions: nbxtensor.Error (a RuntimeError) and its
// subclasses, each also the built-in exception a Python user would catch for it, with the
// C++ error's structured fields as attributes.
//
//   Error(RuntimeError) ─┬─ InvalidArgument(Error, ValueError)      .op
//                        ├─ Unsupported(Error, NotImplementedError) .op .device .capability
//                        ├─ Unavailable(Error)                      .backend .reason
//                        ├─ OutOfMemory(Error, MemoryError)         .device .requested …
//                        ├─ DeviceFault(Error, IndexError)          .op .device .index .bound
//                        .position ├─ DeviceLost(Error)                       .device └─
//                        Internal(Error)
#include <initializer_list>
#include <utility>

#include "core/errors.hpp"
#include "python/py_casters.hpp"

namespace nbx::python {
namespace {

struct ErrorTypes {
  py::object error, invalid_argument, unsupported, unavailable, out_of_memory, device_fault,
      device_lost, internal;
};

// Made once at import; never destroyed (no Python object may outlive the interpreter).
ErrorTypes* types = nullptr;

py::object make_type(py::module_& m, const char* name, std::initializer_list<py::handle> bases,
                     const char* doc) {
  py::tuple b(bases.size());
  std::size_t i = 0;
  for (py::handle h : bases) b[i++] = py::reinterpret_borrow<py::object>(h);
  py::dict attrs;
  attrs["__module__"] = "nbxtensor";
  attrs["__doc__"] = doc;
  py::object type =
      py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyType_Type))(name, b, attrs);
  m.attr(name) = type;
  return type;
}

void raise(const py::object& type, const Error& e,
           std::initializer_list<std::pair<const char*, py::object>> fields) {
  py::object instance = type(e.what());
  for (const auto& [name, value] : fields) instance.attr(name) = value;
  PyErr_SetObject(type.ptr(), instance.ptr());
}

}  // namespace

void bind_errors(py::module_& m) {
  types = new ErrorTypes;
  ErrorTypes& t = *types;
  t.error = make_type(m, "Error", {PyExc_RuntimeError}, "Every nbx error (nbx::Error).");
  t.invalid_argument = make_type(m, "InvalidArgument", {t.error, PyExc_ValueError},
                                 "Bad shapes, dtypes or values (nbx::InvalidArgument); .op.");
  t.unsupported = make_type(m, "Unsupported", {t.error, PyExc_NotImplementedError},
                            "The device cannot do it, permanently (nbx::Unsupported); .op, "
                            ".device, .capability.");
  t.unavailable = make_type(m, "Unavailable", {t.error},
                            "No driver, device or backend (nbx::Unavailable); .backend, .reason.");
  t.out_of_memory = make_type(m, "OutOfMemory", {t.error, PyExc_MemoryError},
                              "nbx::OutOfMemory; .device, .requested, .free_bytes, .reserved, "
                              ".allocated.");
  t.device_fault = make_type(m, "DeviceFault", {t.error, PyExc_IndexError},
                             "A kernel found bad input (nbx::DeviceFault); .op, .device, .index, "
                             ".bound, .position.");
  t.device_lost = make_type(m, "DeviceLost", {t.error}, "nbx::DeviceLost; .device.");
  t.internal = make_type(m, "Internal", {t.error}, "A broken invariant of nbx's (nbx::Internal).");

  py::register_exception_translator([](std::exception_ptr p) {
    if (!p) return;
    const ErrorTypes& t = *types;
    try {
      std::rethrow_exception(p);
    } catch (const InvalidArgument& e) {
      raise(t.invalid_argument, e, {{"op", py::str(e.op())}});
    } catch (const Unsupported& e) {
      raise(t.unsupported, e,
            {{"op", py::str(e.op())},
             {"device", py::str(e.device())},
             {"capability", py::str(e.capability())}});
    } catch (const Unavailable& e) {
      raise(t.unavailable, e, {{"backend", py::str(e.backend())}, {"reason", py::str(e.reason())}});
    } catch (const OutOfMemory& e) {
      raise(t.out_of_memory, e,
            {{"device", py::str(e.device())},
             {"requested", py::int_(e.requested())},
             {"free_bytes", py::int_(e.free_bytes())},
             {"reserved", py::int_(e.reserved())},
             {"allocated", py::int_(e.allocated())}});
    } catch (const DeviceFault& e) {
      raise(t.device_fault, e,
            {{"op", py::str(e.op())},
             {"device", py::str(e.device())},
             {"index", py::int_(e.index())},
             {"bound", py::int_(e.bound())},
             {"position", py::int_(e.position())}});
    } catch (const DeviceLost& e) {
      raise(t.device_lost, e, {{"device", py::str(e.device())}});
    } catch (const Internal& e) {
      raise(t.internal, e, {});
    } catch (const Error& e) {
      raise(t.error, e, {});
    }
  });
}

}  // namespace nbx::python
