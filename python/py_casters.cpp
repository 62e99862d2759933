#include "python/py_casters.hpp"

#include <map>

namespace nbx::python {

py::object tensor_or_none(const Tensor& t) {
  return t.defined() ? py::cast(t) : py::none();
}

py::object named_tuple(const char* name, const char* fields) {
  static auto* types = new std::map<std::string, py::object>();  // never destroyed: see .hpp
  auto [it, fresh] = types->try_emplace(name);
  if (fresh) {
    it->second = py::module_::import("collections").attr("namedtuple")(name, fields);
    it->second.attr("__module__") = "nbxtensor";
  }
  return it->second;
}

py::object result_tuple(const ops::ValuesAndIndices& r) {
  return named_tuple("values_indices", "values indices")(tensor_or_none(r.values),
                                                         tensor_or_none(r.indices));
}
py::object result_tuple(const ops::MinMax& r) {
  return named_tuple("min_max", "min max")(tensor_or_none(r.min), tensor_or_none(r.max));
}
py::object result_tuple(const ops::StatisticAndMean& r) {
  return named_tuple("statistic_mean", "statistic mean")(tensor_or_none(r.statistic),
                                                         tensor_or_none(r.mean));
}
py::object result_tuple(const ops::MoeRouting& r) {
  return named_tuple("moe_routing", "weights expert_ids")(tensor_or_none(r.weights),
                                                          tensor_or_none(r.expert_ids));
}
py::object result_tuple(const ops::MoePermutation& r) {
  return named_tuple("moe_permutation", "order group_offsets inverse")(
      tensor_or_none(r.order), tensor_or_none(r.group_offsets), tensor_or_none(r.inverse));
}
py::object result_tuple(const ops::RotaryResult& r) {
  return named_tuple("rotary", "q k")(tensor_or_none(r.q), r.k ? tensor_or_none(*r.k) : py::none());
}
py::object result_tuple(const ops::UniqueResult& r) {
  return named_tuple("unique", "values inverse counts")(
      tensor_or_none(r.values), tensor_or_none(r.inverse), tensor_or_none(r.counts));
}

DType dtype_of_numpy(const py::handle& numpy_dtype) {
  const std::string kind = numpy_dtype.attr("kind").cast<std::string>();
  const auto size = numpy_dtype.attr("itemsize").cast<std::size_t>();
  for (DType t : kAllDTypes) {
    if (t == DType::kBFloat16 || dtype_size(t) != size) continue;
    const std::string own = t == DType::kBool    ? "b"
                            : t == DType::kUInt8 ? "u"
                            : is_floating(t)     ? "f"
                                                 : "i";
    if (own == kind) return t;
  }
  throw py::type_error("can't convert np.ndarray of type " +
                       py::str(numpy_dtype).cast<std::string>() +
                       ". nbx takes bool, int8, uint8, int16, int32, int64, float16, float32 and "
                       "float64.");
}

const EnumNames<ops::GeluApproximation, 2>& enum_names(ops::GeluApproximation) {
  static const EnumNames<ops::GeluApproximation, 2> t{
      "approximate",
      {{{"none", ops::GeluApproximation::kNone}, {"tanh", ops::GeluApproximation::kTanh}}}};
  return t;
}
const EnumNames<ops::CausalAlignment, 2>& enum_names(ops::CausalAlignment) {
  static const EnumNames<ops::CausalAlignment, 2> t{
      "alignment",
      {{{"top_left", ops::CausalAlignment::kTopLeft},
        {"bottom_right", ops::CausalAlignment::kBottomRight}}}};
  return t;
}
const EnumNames<ops::GroupedWeights, 2>& enum_names(ops::GroupedWeights) {
  static const EnumNames<ops::GroupedWeights, 2> t{
      "layout", {{{"nk", ops::GroupedWeights::kNK}, {"kn", ops::GroupedWeights::kKN}}}};
  return t;
}
const EnumNames<ops::MoeActivation, 1>& enum_names(ops::MoeActivation) {
  static const EnumNames<ops::MoeActivation, 1> t{"activation",
                                                  {{{"silu", ops::MoeActivation::kSilu}}}};
  return t;
}
const EnumNames<ops::RotaryStyle, 2>& enum_names(ops::RotaryStyle) {
  static const EnumNames<ops::RotaryStyle, 2> t{
      "style",
      {{{"rotate_half", ops::RotaryStyle::kRotateHalf},
        {"interleaved", ops::RotaryStyle::kInterleaved}}}};
  return t;
}
const EnumNames<ops::PadMode, 4>& enum_names(ops::PadMode) {
  static const EnumNames<ops::PadMode, 4> t{"mode",
                                            {{{"constant", ops::PadMode::kConstant},
                                              {"reflect", ops::PadMode::kReflect},
                                              {"replicate", ops::PadMode::kReplicate},
                                              {"circular", ops::PadMode::kCircular}}}};
  return t;
}

namespace {

// A Python int as int64; one past its range is refused (PyTorch: "Overflow when unpacking
// long").
std::int64_t int64_of(py::handle h) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow)
    throw InvalidArgument("int",
                          "The integer " + py::str(h).cast<std::string>() + " does not fit int64.");
  return v;
}

bool is_int(py::handle h) {
  return PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr());
}

// A sequence of ints (not a string, not a tensor), each through __index__.
template <class Push>
bool load_int_sequence(py::handle src, Push push) {
  if (!PySequence_Check(src.ptr()) || py::isinstance<py::str>(src) || py::isinstance<Tensor>(src))
    return false;
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(src);
  for (py::handle item : seq) {
    if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr())) return false;
    push(int64_of(py::reinterpret_steal<py::object>(PyNumber_Index(item.ptr()))));
  }
  return true;
}

}  // namespace
}  // namespace nbx::python

namespace pybind11::detail {

using nbx::python::int64_of;
using nbx::python::is_int;

bool type_caster<nbx::Scalar>::load(handle src, bool convert) {
  if (PyBool_Check(src.ptr())) {
    value = nbx::Scalar(src.ptr() == Py_True);
    return true;
  }
  if (is_int(src)) {
    value = nbx::Scalar(int64_of(src));
    return true;
  }
  if (PyFloat_Check(src.ptr())) {
    value = nbx::Scalar(PyFloat_AsDouble(src.ptr()));
    return true;
  }
  if (!convert || isinstance<nbx::Tensor>(src)) return false;
  // NumPy's scalars: bool_ by its dtype's kind, integers through __index__, floats __float__.
  if (hasattr(src, "dtype") && hasattr(src.attr("dtype"), "kind") &&
      src.attr("dtype").attr("kind").cast<std::string>() == "b") {
    value = nbx::Scalar(PyObject_IsTrue(src.ptr()) == 1);
    return true;
  }
  if (PyIndex_Check(src.ptr())) {
    value = nbx::Scalar(int64_of(reinterpret_steal<object>(PyNumber_Index(src.ptr()))));
    return true;
  }
  if (hasattr(src, "__float__")) {
    const object f = reinterpret_steal<object>(PyNumber_Float(src.ptr()));
    if (!f) {
      PyErr_Clear();
      return false;
    }
    value = nbx::Scalar(PyFloat_AsDouble(f.ptr()));
    return true;
  }
  return false;
}

handle type_caster<nbx::Scalar>::cast(const nbx::Scalar& s, return_value_policy, handle) {
  switch (s.kind()) {
    case nbx::Scalar::Kind::kBool:
      return bool_(s.to_bool()).release();
    case nbx::Scalar::Kind::kInt:
      return int_(s.to_int()).release();
    case nbx::Scalar::Kind::kFloat:
      break;
  }
  return float_(s.to_double()).release();
}

bool type_caster<nbx::ops::TensorOrScalar>::load(handle src, bool convert) {
  if (isinstance<nbx::Tensor>(src)) {
    value = nbx::ops::TensorOrScalar(src.cast<nbx::Tensor>());
    return true;
  }
  type_caster<nbx::Scalar> scalar;
  if (!scalar.load(src, convert)) return false;
  value = nbx::ops::TensorOrScalar(static_cast<nbx::Scalar&>(scalar));
  return true;
}

handle type_caster<nbx::ops::TensorOrScalar>::cast(const nbx::ops::TensorOrScalar& v,
                                                   return_value_policy policy, handle parent) {
  if (v.is_tensor()) return pybind11::cast(v.tensor()).release();
  return type_caster<nbx::Scalar>::cast(v.scalar(), policy, parent);
}

bool type_caster<nbx::Dims>::load(handle src, bool convert) {
  value = nbx::Dims();
  if (convert && is_int(src)) {
    value.push_back(int64_of(src));
    return true;
  }
  return nbx::python::load_int_sequence(src, [&](std::int64_t v) { value.push_back(v); });
}

handle type_caster<nbx::Dims>::cast(const nbx::Dims& d, return_value_policy, handle) {
  tuple t(d.size());
  for (int i = 0; i < d.size(); ++i) t[std::size_t(i)] = int_(d[i]);
  return t.release();
}

bool type_caster<std::vector<std::int64_t>>::load(handle src, bool convert) {
  value.clear();
  if (convert && is_int(src)) {
    value.push_back(int64_of(src));
    return true;
  }
  return nbx::python::load_int_sequence(src, [&](std::int64_t v) { value.push_back(v); });
}

handle type_caster<std::vector<std::int64_t>>::cast(const std::vector<std::int64_t>& v,
                                                    return_value_policy, handle) {
  list l(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) l[i] = int_(v[i]);
  return l.release();
}

}  // namespace pybind11::detail
