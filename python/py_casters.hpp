// How the nbxtensor module converts between Python and nbx's C++ types: the Tensor, Device
// and dtype classes are bound (py_tensor.cpp, py_device.cpp); the types below convert by
// value. Included by every file of the module and by the generated op bindings.
//
//   Scalar             Python bool, int, float (and NumPy scalars, through __index__/__float__)
//   TensorOrScalar     a Tensor, or a Scalar
//   Shape, Strides     a sequence of ints (or one int)
//   std::vector<int64> a sequence of ints; one int where the call has no other overload
//   GeluApproximation … the enums by name, as PyTorch's strings ("tanh", "reflect")
//   ValuesAndIndices … the result structs as named tuples (torch.return_types' fields)
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/ops/attention.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/moe.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/rotary.hpp"
#include "core/ops/shape.hpp"
#include "core/ops/sort.hpp"
#include "core/tensor.hpp"

namespace nbx::python {

namespace py = pybind11;

// An undefined tensor (a result the call did not ask for) as None.
py::object tensor_or_none(const Tensor& t);
// A named tuple type (collections.namedtuple), made once; never destroyed, so that no
// Python object outlives the interpreter in a static.
py::object named_tuple(const char* name, const char* fields);

// The result structs as named tuples (py_casters.cpp).
py::object result_tuple(const ops::ValuesAndIndices& r);
py::object result_tuple(const ops::MinMax& r);
py::object result_tuple(const ops::StatisticAndMean& r);
py::object result_tuple(const ops::MoeRouting& r);
py::object result_tuple(const ops::MoePermutation& r);
py::object result_tuple(const ops::RotaryResult& r);
py::object result_tuple(const ops::UniqueResult& r);

// The dtype a NumPy dtype stands for (by its kind and size); NumPy's uint16/32/64, complex,
// strings and objects have none and raise TypeError, as PyTorch's conversions do.
DType dtype_of_numpy(const py::handle& numpy_dtype);

// Each binding file's part of the module.
void bind_errors(py::module_& m);
void bind_device(py::module_& m);
void bind_tensor(py::module_& m);
void bind_dlpack(py::module_& m);
void bind_data(py::module_& m);
void bind_ops(py::module_& ops);

// An enum read from and written as its PyTorch name.
template <class Enum, std::size_t N>
struct EnumNames {
  const char* what;  // "approximate"
  std::array<std::pair<const char*, Enum>, N> names;
};
const EnumNames<ops::GeluApproximation, 2>& enum_names(ops::GeluApproximation);
const EnumNames<ops::CausalAlignment, 2>& enum_names(ops::CausalAlignment);
const EnumNames<ops::GroupedWeights, 2>& enum_names(ops::GroupedWeights);
const EnumNames<ops::MoeActivation, 1>& enum_names(ops::MoeActivation);
const EnumNames<ops::RotaryStyle, 2>& enum_names(ops::RotaryStyle);
const EnumNames<ops::PadMode, 4>& enum_names(ops::PadMode);

}  // namespace nbx::python

namespace pybind11::detail {

template <>
struct type_caster<nbx::Scalar> {
  PYBIND11_TYPE_CASTER(nbx::Scalar, const_name("int | float | bool"));
  bool load(handle src, bool convert);
  static handle cast(const nbx::Scalar& s, return_value_policy, handle);
};

template <>
struct type_caster<nbx::ops::TensorOrScalar> {
  PYBIND11_TYPE_CASTER(nbx::ops::TensorOrScalar, const_name("Tensor | int | float | bool"));
  type_caster() : value(nbx::Scalar(0)) {}
  bool load(handle src, bool convert);
  static handle cast(const nbx::ops::TensorOrScalar& v, return_value_policy, handle);
};

template <>
struct type_caster<nbx::Dims> {
  PYBIND11_TYPE_CASTER(nbx::Dims, const_name("Sequence[int]"));
  bool load(handle src, bool convert);
  static handle cast(const nbx::Dims& d, return_value_policy, handle);
};

// Lists of ints (dims, repeats, pads); a bare int only in the converting pass, so that an
// overload taking one int (split, repeat_interleave) is tried first.
template <>
struct type_caster<std::vector<std::int64_t>> {
  PYBIND11_TYPE_CASTER(std::vector<std::int64_t>, const_name("int | Sequence[int]"));
  bool load(handle src, bool convert);
  static handle cast(const std::vector<std::int64_t>& v, return_value_policy, handle);
};

template <class Enum>
struct named_enum_caster {
  PYBIND11_TYPE_CASTER(Enum, const_name("str"));
  bool load(handle src, bool) {
    if (!isinstance<str>(src)) return false;
    const std::string name = src.cast<std::string>();
    const auto& table = nbx::python::enum_names(Enum{});
    for (const auto& [n, v] : table.names)
      if (name == n) {
        value = v;
        return true;
      }
    std::string known;
    for (const auto& [n, v] : table.names)
      known += (known.empty() ? "'" : ", '") + std::string(n) + "'";
    throw nbx::InvalidArgument(table.what, std::string(table.what) + " must be one of " + known +
                                               " (got '" + name + "').");
  }
  static handle cast(Enum e, return_value_policy, handle) {
    for (const auto& [n, v] : nbx::python::enum_names(Enum{}).names)
      if (v == e) return str(n).release();
    return none().release();
  }
};
template <>
struct type_caster<nbx::ops::GeluApproximation> : named_enum_caster<nbx::ops::GeluApproximation> {};
template <>
struct type_caster<nbx::ops::CausalAlignment> : named_enum_caster<nbx::ops::CausalAlignment> {};
template <>
struct type_caster<nbx::ops::GroupedWeights> : named_enum_caster<nbx::ops::GroupedWeights> {};
template <>
struct type_caster<nbx::ops::MoeActivation> : named_enum_caster<nbx::ops::MoeActivation> {};
template <>
struct type_caster<nbx::ops::RotaryStyle> : named_enum_caster<nbx::ops::RotaryStyle> {};
template <>
struct type_caster<nbx::ops::PadMode> : named_enum_caster<nbx::ops::PadMode> {};

// Result structs, returned only: named tuples, fields in the struct's order.
template <class Result>
struct result_caster {
  PYBIND11_TYPE_CASTER(Result, const_name("tuple"));
  bool load(handle, bool) { return false; }
  static handle cast(const Result& r, return_value_policy, handle) {
    return nbx::python::result_tuple(r).release();
  }
};
template <>
struct type_caster<nbx::ops::ValuesAndIndices> : result_caster<nbx::ops::ValuesAndIndices> {};
template <>
struct type_caster<nbx::ops::MinMax> : result_caster<nbx::ops::MinMax> {};
template <>
struct type_caster<nbx::ops::StatisticAndMean> : result_caster<nbx::ops::StatisticAndMean> {};
template <>
struct type_caster<nbx::ops::MoeRouting> : result_caster<nbx::ops::MoeRouting> {};
template <>
struct type_caster<nbx::ops::MoePermutation> : result_caster<nbx::ops::MoePermutation> {};
template <>
struct type_caster<nbx::ops::RotaryResult> : result_caster<nbx::ops::RotaryResult> {};
template <>
struct type_caster<nbx::ops::UniqueResult> : result_caster<nbx::ops::UniqueResult> {};

}  // namespace pybind11::detail
