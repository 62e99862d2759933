// Tensors from Python data (nbx.tensor, the factories), .npy/.npz files and the value printer.
#include <pybind11/numpy.h>

#include "core/format.hpp"
#include "core/npy.hpp"
#include "core/ops/creation.hpp"
#include "python/py_casters.hpp"

namespace nbx::python {
namespace {

// torch.tensor's rule: a NumPy array keeps its dtype; Python floats become the default float
// (float32), Python ints int64, bools bool.
Tensor tensor_from_data(const py::object& data, std::optional<DType> dtype,
                        std::optional<Device> device) {
  Tensor t;
  if (py::isinstance<Tensor>(data)) {
    t = data.cast<Tensor>().clone();
  } else {
    const py::module_ np = py::module_::import("numpy");
    const bool is_array = py::isinstance(data, np.attr("ndarray"));
    const py::array a = np.attr("asarray")(data);
    // ascontiguousarray makes a 0-d array 1-d (NumPy < 2): the shape comes from `a`.
    const py::array c = np.attr("ascontiguousarray")(a);
    const DType held = dtype_of_numpy(a.dtype());
    const std::vector<std::int64_t> shape(a.shape(), a.shape() + a.ndim());
    t = Tensor::from_host(c.data(), Shape(std::span<const std::int64_t>(shape)), held,
                          host_device());
    if (!is_array && is_floating(held) && !dtype) t = t.to(kDefaultFloat);
  }
  if (dtype) t = t.to(*dtype);
  return device ? t.to(*device) : t;
}

Shape size_args(const py::args& args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return args[0].cast<Shape>();
  Shape s;
  for (py::handle a : args) s.push_back(a.cast<std::int64_t>());
  return s;
}

// torch.full's and torch.arange's dtype from their numbers: bool, int64 or float32.
DType dtype_of_scalars(std::initializer_list<Scalar> values) {
  DType t = DType::kBool;
  for (const Scalar& v : values)
    if (v.kind() == Scalar::Kind::kFloat)
      t = kDefaultFloat;
    else if (v.kind() == Scalar::Kind::kInt && t == DType::kBool)
      t = DType::kInt64;
  return t;
}

NamedTensors named_tensors(const py::dict& tensors) {
  NamedTensors out;
  for (const auto& [name, t] : tensors)
    out.emplace_back(name.cast<std::string>(), t.cast<Tensor>());
  return out;
}

}  // namespace

void bind_data(py::module_& m) {
  m.def("tensor", &tensor_from_data, py::arg("data"), py::arg("dtype") = py::none(),
        py::arg("device") = py::none(),
        "A new tensor copied from data (nested lists, numbers, a NumPy array, a Tensor), as "
        "torch.tensor: Python floats become float32, ints int64; an array keeps its dtype.");
  const auto factory = [&m](const char* name, Tensor (*make)(const Shape&, DType, const Device&)) {
    m.def(
        name,
        [make](const py::args& size, DType dtype, std::optional<Device> device) {
          return make(size_args(size), dtype, device ? *device : host_device());
        },
        // After *size, keyword-only.
        py::arg("dtype") = DType::kFloat32, py::arg("device") = py::none());
  };
  factory("empty", [](const Shape& s, DType t, const Device& d) { return Tensor::empty(s, t, d); });
  factory("zeros", [](const Shape& s, DType t, const Device& d) { return Tensor::zeros(s, t, d); });
  factory("ones", [](const Shape& s, DType t, const Device& d) { return Tensor::ones(s, t, d); });
  m.def(
      "full",
      [](const Shape& size, Scalar value, std::optional<DType> dtype,
         std::optional<Device> device) {
        return Tensor::full(size, value, dtype.value_or(dtype_of_scalars({value})),
                            device ? *device : host_device());
      },
      py::arg("size"), py::arg("fill_value"), py::kw_only(), py::arg("dtype") = py::none(),
      py::arg("device") = py::none());
  m.def(
      "arange",
      [](Scalar start, std::optional<Scalar> end, Scalar step, std::optional<DType> dtype,
         std::optional<Device> device) {
        if (!end) {  // arange(end)
          end = start;
          start = Scalar(0);
        }
        return ops::arange(start, *end, step, dtype.value_or(dtype_of_scalars({start, *end, step})),
                           device ? *device : host_device());
      },
      py::arg("start"), py::arg("end") = py::none(), py::arg("step") = 1, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("device") = py::none());

  m.def("format", &format, py::arg("tensor"), "The values as PyTorch's repr prints them.");
  m.def("save_npy", &save_npy, py::arg("path"), py::arg("tensor"));
  m.def(
      "load_npy",
      [](const std::string& path, std::optional<Device> device) {
        return load_npy(path, device ? *device : host_device());
      },
      py::arg("path"), py::arg("device") = py::none(),
      "A .npy file as a tensor (on the host unless device= names another).");
  m.def(
      "save_npz",
      [](const std::string& path, const py::kwargs& tensors) {
        save_npz(path, named_tensors(tensors));
      },
      py::arg("path"), "save_npz(path, a=t, b=u): what numpy.savez writes.");
  m.def(
      "load_npz",
      [](const std::string& path, std::optional<Device> device) {
        py::dict out;
        for (const auto& [name, t] : load_npz(path, device ? *device : host_device()))
          out[py::str(name)] = t;
        return out;
      },
      py::arg("path"), py::arg("device") = py::none(),
      "Every member of a .npz file (savez or savez_compressed), as a dict name → tensor.");
}

}  // namespace nbx::python
