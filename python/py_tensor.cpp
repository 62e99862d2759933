// nbx.dtype and nbx.Tensor: properties, views, conversions, Python's operators and indexing
// (basic: ints, slices with a positive step, None, Ellipsis; a bool mask or an integer index
// tensor on dim 0), each the C++ API's call.
#include <pybind11/numpy.h>

#include <string>
#include <vector>

#include "core/dlpack.hpp"
#include "core/format.hpp"
#include "core/ops/index.hpp"
#include "core/ops/index_write.hpp"
#include "core/ops/inplace.hpp"
#include "core/ops/linalg.hpp"
#include "python/py_casters.hpp"

namespace nbx::python {
namespace {

using ops::TensorOrScalar;

// torch.view(2, 3) and torch.view((2, 3)) alike.
Shape sizes_of(const py::args& args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return args[0].cast<Shape>();
  Shape s;
  for (py::handle a : args) s.push_back(a.cast<std::int64_t>());
  return s;
}

std::vector<std::int64_t> dims_of(const py::args& args) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr()))
    return args[0].cast<std::vector<std::int64_t>>();
  std::vector<std::int64_t> d;
  for (py::handle a : args) d.push_back(a.cast<std::int64_t>());
  return d;
}

// The NumPy dtype of an nbx dtype; bfloat16 has none.
py::dtype numpy_dtype(DType t) {
  if (t == DType::kBFloat16)
    throw py::type_error("NumPy has no bfloat16: convert first, t.to(nbx.float32).numpy().");
  return py::dtype(t == DType::kBool ? std::string("bool") : std::string(dtype_name(t)));
}

// A host tensor's memory as a NumPy array that keeps the tensor alive (as torch's .numpy()).
py::array numpy_view(const Tensor& t) {
  const py::dtype dtype = numpy_dtype(t.dtype());
  std::vector<py::ssize_t> shape, strides;
  for (int d = 0; d < t.dim(); ++d) {
    shape.push_back(t.shape()[d]);
    strides.push_back(t.strides()[d] * py::ssize_t(t.itemsize()));
  }
  auto* keep = new Tensor(t);
  py::capsule owner(keep, [](void* p) { delete static_cast<Tensor*>(p); });
  auto* base = static_cast<std::byte*>(
      t.device().context().backend_device().address_of(t.storage()->memory()));
  return py::array(dtype, shape, strides,
                   base ? base + t.offset() * std::int64_t(t.itemsize()) : nullptr, owner);
}

py::array to_numpy(const Tensor& t, bool force) {
  if (!t.device().is_host() && !force)
    throw py::type_error("can't convert " + t.device().str() +
                         " device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                         "host memory first (or numpy(force=True)).");
  return numpy_view(t.to(host_device()));
}

// Basic indexing as PyTorch's: the view `key` selects.
Tensor index_view(const Tensor& t, const py::object& key) {
  const py::tuple items = py::isinstance<py::tuple>(key) ? py::tuple(key) : py::make_tuple(key);
  int consumed = 0;
  for (py::handle item : items)
    if (!item.is_none() && item.ptr() != Py_Ellipsis) ++consumed;
  if (consumed > t.dim())
    throw py::index_error("too many indices for tensor of dimension " + std::to_string(t.dim()));
  Tensor out = t;
  int d = 0;
  for (py::handle item : items) {
    if (item.is_none()) {
      out = out.unsqueeze(d++);
    } else if (item.ptr() == Py_Ellipsis) {
      d += t.dim() - consumed;
    } else if (PySlice_Check(item.ptr())) {
      Py_ssize_t start = 0, stop = 0, step = 0;
      if (PySlice_Unpack(item.ptr(), &start, &stop, &step) < 0) throw py::error_already_set();
      if (step <= 0) throw py::value_error("step must be greater than zero");
      PySlice_AdjustIndices(out.size(d), &start, &stop, step);
      out = out.slice(d++, start, std::max(start, stop), step);
    } else if (PyIndex_Check(item.ptr()) && !py::isinstance<Tensor>(item)) {
      const std::int64_t size = out.size(d);
      std::int64_t i =
          py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr())).cast<std::int64_t>();
      if (i < -size || i >= size)
        throw py::index_error("index " + std::to_string(i) + " is out of bounds for dimension " +
                              std::to_string(d) + " with size " + std::to_string(size));
      out = out.narrow(d, i < 0 ? i + size : i, 1).squeeze(d);
    } else {
      throw py::type_error(
          "only integers, slices (`:`), ellipsis (`...`), None and a single bool "
          "or integer tensor are valid indices");
    }
  }
  return out;
}

Tensor get_item(const Tensor& t, const py::object& key) {
  if (py::isinstance<Tensor>(key)) {
    const Tensor index = key.cast<Tensor>();
    if (index.dtype() == DType::kBool) return ops::masked_select(t, index);
    Shape shape = index.shape();
    for (int d = 1; d < t.dim(); ++d) shape.push_back(t.size(d));
    return ops::index_select(t, 0, index.reshape({-1})).reshape(shape);
  }
  return index_view(t, key);
}

void set_item(const Tensor& t, const py::object& key, const py::object& value) {
  if (py::isinstance<Tensor>(key)) {
    const Tensor v = py::isinstance<Tensor>(value)
                         ? value.cast<Tensor>()
                         : Tensor::full({}, value.cast<Scalar>(), t.dtype(), t.device());
    ops::index_put_(t, {key.cast<Tensor>()}, v);
    return;
  }
  const Tensor view = index_view(t, key);
  if (py::isinstance<Tensor>(value))
    view.copy_(value.cast<Tensor>());
  else
    view.fill_(value.cast<Scalar>());
}

// "float32", "bf16", also "torch.float32" (str of a torch dtype).
DType dtype_named(const std::string& name) {
  return parse_dtype(name.rfind("torch.", 0) == 0 ? name.substr(6) : name);
}

Scalar only_item(const Tensor& t, const char* what) {
  if (t.numel() != 1)
    throw InvalidArgument(what, std::string(what) + " of a tensor with " +
                                    std::to_string(t.numel()) +
                                    " elements is ambiguous; it needs exactly one.");
  return t.item();
}

}  // namespace

void bind_tensor(py::module_& m) {
  py::enum_<DType> dtype(m, "dtype", "An element type: nbx.float32, nbx.bfloat16, nbx.bool …");
  for (DType t : kAllDTypes) dtype.value(std::string(dtype_name(t)).c_str(), t);
  dtype.export_values();
  // Printed as PyTorch prints its dtypes; set, not def'd: pybind11's enum methods would come
  // first in an overload chain.
  for (const char* method : {"__repr__", "__str__"})
    dtype.attr(method) = py::cpp_function(
        [](DType t) { return "nbx." + std::string(dtype_name(t)); }, py::is_method(dtype));
  dtype.def(py::init(&dtype_named), py::arg("name"))
      .def_property_readonly("itemsize", [](DType t) { return dtype_size(t); })
      .def_property_readonly("is_floating_point", [](DType t) { return is_floating(t); });
  py::implicitly_convertible<py::str, DType>();
  // PyTorch's aliases.
  m.attr("half") = DType::kFloat16;
  m.attr("float") = DType::kFloat32;
  m.attr("double") = DType::kFloat64;
  m.attr("short") = DType::kInt16;
  m.attr("int") = DType::kInt32;
  m.attr("long") = DType::kInt64;

  py::class_<Tensor> cls(m, "Tensor",
                         "A view of device memory: storage, element offset, shape, strides, dtype. "
                         "Make one with nbx.tensor, nbx.from_numpy, nbx.from_dlpack or the ops.");
  cls.def_property_readonly("shape", &Tensor::shape)
      .def("size", [](const Tensor& t) { return t.shape(); })
      .def("size", &Tensor::size, py::arg("dim"))
      .def_property_readonly("dtype", &Tensor::dtype)
      .def_property_readonly("device", &Tensor::device)
      .def_property_readonly("ndim", &Tensor::dim)
      .def("dim", &Tensor::dim)
      .def("numel", &Tensor::numel)
      .def("stride", [](const Tensor& t) { return t.strides(); })
      .def(
          "stride",
          [](const Tensor& t, std::int64_t d) {
            return t.strides()[wrap_dim(d, t.dim(), "stride")];
          },
          py::arg("dim"))
      .def("storage_offset", &Tensor::offset)
      .def("element_size", &Tensor::itemsize)
      .def_property_readonly("itemsize", &Tensor::itemsize)
      .def("is_contiguous", &Tensor::is_contiguous)
      .def(
          "data_ptr",
          [](const Tensor& t) {
            auto* base = static_cast<std::byte*>(
                t.device().context().backend_device().address_of(t.storage()->memory()));
            return reinterpret_cast<std::uintptr_t>(base) +
                   std::uintptr_t(t.offset()) * t.itemsize();
          },
          "The first element's address (host or device pointer); Unsupported on Vulkan.")
      .def(
          "to",
          [](const Tensor& t, const py::object& target) {
            if (py::isinstance<DType>(target)) return t.to(target.cast<DType>());
            if (py::isinstance<Device>(target)) return t.to(target.cast<Device>());
            const std::string name = target.cast<std::string>();
            try {
              return t.to(dtype_named(name));
            } catch (const InvalidArgument&) {
              return t.to(open(name));  // not a dtype's name: a device's
            }
          },
          py::arg("dtype_or_device"), "t.to(nbx.float16), t.to('cuda:0'), t.to(device).")
      .def("cpu", [](const Tensor& t) { return t.to(host_device()); })
      .def("contiguous", &Tensor::contiguous)
      .def("clone", &Tensor::clone)
      .def("view", [](const Tensor& t, const py::args& a) { return t.view(sizes_of(a)); })
      .def("reshape", [](const Tensor& t, const py::args& a) { return t.reshape(sizes_of(a)); })
      .def("expand", [](const Tensor& t, const py::args& a) { return t.expand(sizes_of(a)); })
      .def("permute",
           [](const Tensor& t, const py::args& a) {
             const std::vector<std::int64_t> d = dims_of(a);
             return t.permute(std::span<const std::int64_t>(d));
           })
      .def("transpose", &Tensor::transpose, py::arg("dim0"), py::arg("dim1"))
      .def("slice", &Tensor::slice, py::arg("dim"), py::arg("start"), py::arg("end"),
           py::arg("step") = 1)
      .def("narrow", &Tensor::narrow, py::arg("dim"), py::arg("start"), py::arg("length"))
      .def("squeeze", static_cast<Tensor (Tensor::*)() const>(&Tensor::squeeze))
      .def("squeeze", static_cast<Tensor (Tensor::*)(std::int64_t) const>(&Tensor::squeeze),
           py::arg("dim"))
      .def("unsqueeze", &Tensor::unsqueeze, py::arg("dim"))
      .def("flatten", &Tensor::flatten)
      .def("copy_", &Tensor::copy_, py::arg("src"))
      .def("fill_", &Tensor::fill_, py::arg("value"))
      .def("zero_", &Tensor::zero_)
      .def("item", &Tensor::item)
      .def("numpy", &to_numpy, py::arg("force") = false,
           "The host tensor's memory as a NumPy array (shared, as torch's); force=True copies "
           "from another device.")
      .def("tolist",
           [](const Tensor& t) {
             const Tensor host = t.to(host_device());
             return numpy_view(host.dtype() == DType::kBFloat16 ? host.to(DType::kFloat32) : host)
                 .attr("tolist")();
           })
      .def("__repr__", &format)
      .def("__str__", &format)
      .def("__len__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("len() of a 0-d tensor");
             return t.size(0);
           })
      .def("__iter__",
           [](const Tensor& t) {
             if (t.dim() == 0) throw py::type_error("iteration over a 0-d tensor");
             py::list rows;
             for (std::int64_t i = 0; i < t.size(0); ++i) rows.append(t.narrow(0, i, 1).squeeze(0));
             return py::iter(rows);
           })
      .def("__getitem__", &get_item)
      .def("__setitem__", &set_item)
      .def("__bool__", [](const Tensor& t) { return only_item(t, "bool()").to_bool(); })
      .def("__float__", [](const Tensor& t) { return only_item(t, "float()").to_double(); })
      .def("__int__", [](const Tensor& t) { return only_item(t, "int()").to_int(); })
      .def("__hash__", [](const py::object& self) {
        return py::hash(py::int_(reinterpret_cast<std::uintptr_t>(self.ptr())));
      });

  // Python's operators: the ops of the same meaning (PyTorch promotion, broadcasting).
  using Binary = Tensor (*)(const TensorOrScalar&, const TensorOrScalar&);
  const auto binary = [&](const char* name, const char* reflected, Binary op) {
    cls.def(
        name, [op](const Tensor& a, const TensorOrScalar& b) { return op(a, b); },
        py::is_operator());
    cls.def(
        reflected, [op](const Tensor& a, const TensorOrScalar& b) { return op(b, a); },
        py::is_operator());
  };
  binary("__add__", "__radd__",
         [](const TensorOrScalar& a, const TensorOrScalar& b) { return ops::add(a, b); });
  binary("__sub__", "__rsub__",
         [](const TensorOrScalar& a, const TensorOrScalar& b) { return ops::sub(a, b); });
  binary("__mul__", "__rmul__", &ops::mul);
  binary("__truediv__", "__rtruediv__", &ops::div);
  binary("__floordiv__", "__rfloordiv__", &ops::floor_divide);
  binary("__mod__", "__rmod__", &ops::remainder);
  binary("__pow__", "__rpow__", &ops::pow);
  binary("__and__", "__rand__", &ops::bitwise_and);
  binary("__or__", "__ror__", &ops::bitwise_or);
  binary("__xor__", "__rxor__", &ops::bitwise_xor);
  binary("__lshift__", "__rlshift__", &ops::bitwise_left_shift);
  binary("__rshift__", "__rrshift__", &ops::bitwise_right_shift);
  for (const auto& [name, op] : {std::pair<const char*, Binary>{"__eq__", &ops::eq},
                                 {"__ne__", &ops::ne},
                                 {"__lt__", &ops::lt},
                                 {"__le__", &ops::le},
                                 {"__gt__", &ops::gt},
                                 {"__ge__", &ops::ge}})
    cls.def(
        name, [op = op](const Tensor& a, const TensorOrScalar& b) { return op(a, b); },
        py::is_operator());
  cls.def("__matmul__", &ops::matmul, py::is_operator())
      .def("__neg__", &ops::neg)
      .def("__abs__", &ops::abs)
      .def("__invert__", &ops::bitwise_not)
      .def(
          "__iadd__", [](const Tensor& a, const TensorOrScalar& b) { return ops::add_(a, b); },
          py::is_operator())
      .def(
          "__isub__", [](const Tensor& a, const TensorOrScalar& b) { return ops::sub_(a, b); },
          py::is_operator())
      .def(
          "__imul__", [](const Tensor& a, const TensorOrScalar& b) { return ops::mul_(a, b); },
          py::is_operator())
      .def(
          "__itruediv__", [](const Tensor& a, const TensorOrScalar& b) { return ops::div_(a, b); },
          py::is_operator());
}

}  // namespace nbx::python
