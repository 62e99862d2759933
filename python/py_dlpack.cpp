// The Python DLPack protocol (data-apis.org's array API): Tensor.__dlpack__ and
// __dlpack_device__, so that torch.from_dlpack(t) and numpy.from_dlpack(t) take an nbx tensor
// without a copy, and nbx.from_dlpack(x) / nbx.from_numpy(a) take theirs. Capsules are the
// legacy "dltensor" kind, which every consumer reads (DLPack 0.6 has no versioned struct).
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include "core/dlpack.hpp"
#include "python/py_casters.hpp"

namespace nbx::python {
namespace {

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";

// A capsule nobody consumed frees its tensor; a consumed one was renamed and owns nothing.
void capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kCapsule)) return;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);  // the deleter must not see a pending exception
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
  if (managed && managed->deleter) managed->deleter(managed);
  PyErr_Restore(type, value, traceback);
}

py::object to_capsule(const Tensor& t) {
  DLManagedTensor* managed = t.to_dlpack();
  PyObject* capsule = PyCapsule_New(managed, kCapsule, capsule_destructor);
  if (!capsule) {
    managed->deleter(managed);
    throw py::error_already_set();
  }
  return py::reinterpret_steal<py::object>(capsule);
}

Tensor from_capsule(py::handle capsule) {
  if (!PyCapsule_IsValid(capsule.ptr(), kCapsule)) {
    if (PyCapsule_IsValid(capsule.ptr(), kUsedCapsule))
      throw InvalidArgument("from_dlpack",
                            "from_dlpack: this DLPack capsule was consumed already "
                            "(a capsule is read once).");
    throw InvalidArgument("from_dlpack",
                          "from_dlpack: expected an object with __dlpack__ or a legacy "
                          "'dltensor' DLPack capsule.");
  }
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), kCapsule));
  Tensor t = from_dlpack(managed);  // when this throws, the capsule still owns `managed`
  PyCapsule_SetName(capsule.ptr(), kUsedCapsule);
  return t;
}

py::object dlpack(const Tensor& self, const py::object& stream, const py::object& max_version,
                  const py::object& dl_device, const py::object& copy) {
  (void)max_version;  // a legacy capsule answers any max_version (the consumer reads both)
  if (!stream.is_none() && !PyLong_Check(stream.ptr()))
    throw py::type_error("stream must be an int or None");
  const auto here = dlpack_device(self.device());
  if (!dl_device.is_none() && dl_device.cast<std::pair<int, int>>() != std::pair<int, int>(here))
    throw py::buffer_error("__dlpack__: the tensor lives on " + self.device().str() +
                           "; nbx exports where a tensor lives (move it with .to() first).");
  // Any stream the consumer names sees the data: to_dlpack synchronises the device.
  return to_capsule(!copy.is_none() && copy.cast<bool>() ? self.clone() : self);
}

// What NumPy's memory becomes for nbx: a DLPack view holding a reference to the array.
struct NumpyView {
  DLManagedTensor managed{};
  py::object array;
  std::int64_t shape[kMaxDims] = {};
  std::int64_t strides[kMaxDims] = {};
};

DLDataType numpy_dlpack_dtype(const py::dtype& d) {
  const char kind = d.kind();
  const auto bits = static_cast<std::uint8_t>(d.itemsize() * 8);
  const auto code = [&](std::uint8_t c) { return DLDataType{c, bits, 1}; };
  if (kind == 'b' && bits == 8) return code(6);  // kDLBool (DLPack 0.8)
  if (kind == 'i') return code(kDLInt);
  if (kind == 'u') return code(kDLUInt);
  if (kind == 'f') return code(kDLFloat);
  throw py::type_error("can't convert np.ndarray of type " +
                       py::str(py::handle(d)).cast<std::string>() +
                       "; nbx takes bool, integer and floating arrays.");
}

Tensor from_numpy(const py::array& a) {
  const py::dtype dtype = a.dtype();
  if (dtype.attr("byteorder").cast<std::string>() == ">")
    throw py::type_error(
        "from_numpy: a big-endian array; convert it with a.astype(a.dtype.newbyteorder('<')).");
  if (a.ndim() > kMaxDims)
    throw InvalidArgument("from_numpy", "from_numpy: " + std::to_string(a.ndim()) +
                                            " dims; nbx tensors have at most 8.");
  auto view = std::make_unique<NumpyView>();
  view->array = a;
  DLTensor& t = view->managed.dl_tensor;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    if (a.strides(d) % a.itemsize() != 0)
      throw InvalidArgument("from_numpy", "from_numpy: a stride of " +
                                              std::to_string(a.strides(d)) +
                                              " bytes is not a whole number of elements.");
    view->shape[d] = a.shape(d);
    view->strides[d] = a.strides(d) / a.itemsize();
  }
  t.data = const_cast<void*>(a.data());
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<std::int32_t>(a.ndim());
  t.dtype = numpy_dlpack_dtype(dtype);
  t.shape = view->shape;
  t.strides = view->strides;
  view->managed.manager_ctx = view.get();
  // The last view may go on any thread: the array's reference is dropped under the GIL, and
  // not at all once the interpreter is gone.
  view->managed.deleter = [](DLManagedTensor* m) {
    auto* v = static_cast<NumpyView*>(m->manager_ctx);
    if (!Py_IsInitialized()) {
      v->array.release();
      delete v;
      return;
    }
    py::gil_scoped_acquire gil;
    delete v;
  };
  Tensor out = from_dlpack(&view->managed);
  view.release();  // the tensor owns it now
  return out;
}

}  // namespace

void bind_dlpack(py::module_& m) {
  py::class_<Tensor> cls = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  cls.def("__dlpack__", &dlpack, py::kw_only(), py::arg("stream") = py::none(),
          py::arg("max_version") = py::none(), py::arg("dl_device") = py::none(),
          py::arg("copy") = py::none(),
          "A DLPack capsule of this tensor's memory, without a copy (copy=True: of a clone). "
          "Host, CUDA and HIP tensors; Vulkan ones raise Unsupported. Synchronises the device.")
      .def("__dlpack_device__", [](const Tensor& t) { return dlpack_device(t.device()); });
  m.def("to_dlpack", &to_capsule, py::arg("tensor"),
        "A legacy DLPack capsule of the tensor (torch.utils.dlpack.to_dlpack's counterpart).");
  m.def(
      "from_dlpack",
      [](const py::object& x) {
        if (!py::hasattr(x, "__dlpack__")) return from_capsule(x);
        const auto [type, index] = x.attr("__dlpack_device__")().cast<std::pair<int, int>>();
        (void)index;
        // nbx's CUDA and HIP streams are blocking streams: they wait for the default
        // stream's work, so the producer orders its writes before that stream (CUDA names
        // its legacy default stream 1, ROCm its default stream 0).
        if (type == kDLCUDA) return from_capsule(x.attr("__dlpack__")(py::arg("stream") = 1));
        if (type == kDLROCM) return from_capsule(x.attr("__dlpack__")(py::arg("stream") = 0));
        return from_capsule(x.attr("__dlpack__")());
      },
      py::arg("x"),
      "A tensor sharing the memory of `x` (an object with __dlpack__, or a capsule): host "
      "(CPU), CUDA and HIP memory, no copy.");
  m.def("from_numpy", &from_numpy, py::arg("array"),
        "A host tensor sharing the NumPy array's memory, as torch.from_numpy (bool, int8–64, "
        "uint8, float16/32/64; no negative strides).");
}

}  // namespace nbx::python
