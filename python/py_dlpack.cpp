// The Python DLPack protocol (data-apis.org's array API): Tensor.__dlpack__ and
// __dlpack_device__, so that torch.from_dlpack(t) and numpy.from_dlpack(t) take an nbx tensor
// without a copy, and nbx.from_dlpack(x) / nbx.from_numpy(a) take theirs. Capsules are the
// legacy "dltensor" kind, which every consumer reads (DLPack 0.6 has no versioned struct).
#include <dlpack/dlpack.h>
#include <pybind11/numpy.h>

#include <memory>

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

Tensor from_numpy(const py::array& a) {
  const DType dtype = dtype_of_numpy(a.dtype());
  if (a.dtype().attr("byteorder").cast<std::string>() == ">")
    throw py::type_error(
        "from_numpy: a big-endian array; convert it first with "
        "a.astype(a.dtype.newbyteorder('<')).");
  if (a.ndim() > kMaxDims)
    throw InvalidArgument("from_numpy", "from_numpy: " + std::to_string(a.ndim()) +
                                            " dims; nbx tensors have at most 8.");
  Shape shape;
  Strides strides;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    if (a.strides(d) < 0)  // PyTorch's words
      throw py::value_error(
          "At least one stride in the given numpy array is negative, and tensors with negative "
          "strides are not currently supported. (You can probably work around this by making a "
          "copy of your array with array.copy().)");
    if (a.strides(d) % a.itemsize() != 0)
      throw InvalidArgument("from_numpy", "from_numpy: a stride of " +
                                              std::to_string(a.strides(d)) +
                                              " bytes is not a whole number of elements.");
    shape.push_back(a.shape(d));
    strides.push_back(a.strides(d) / a.itemsize());
  }
  // The array's reference goes with the last view, maybe on another thread: under the GIL,
  // and not at all once the interpreter is gone.
  auto* keep = new py::object(a);
  try {
    return from_blob(const_cast<void*>(a.data()), shape, strides, dtype, host_device(), [keep] {
      if (!Py_IsInitialized()) return;
      py::gil_scoped_acquire gil;
      delete keep;
    });
  } catch (...) {
    delete keep;
    throw;
  }
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
