// nbx.ops: every public op. The functions are generated from the headers (gen_ops.py); the
// catalog entries that are forms of another function (op_catalog.hpp) are added here.
#include "core/ops/elementwise.hpp"
#include "core/ops/glu.hpp"
#include "python/py_casters.hpp"

namespace nbx::ops {
void bind_generated_ops(pybind11::module_& m);  // ops_bindings_*.cpp, generated
}

namespace nbx::python {

void bind_ops(py::module_& m) {
  ops::bind_generated_ops(m);
  m.def(
      "gelu_tanh", [](const Tensor& x) { return ops::gelu(x, ops::GeluApproximation::kTanh); },
      py::arg("x"), "gelu(x, approximate='tanh').");
  m.def(
      "gelu_tanh_and_mul",
      [](const Tensor& x) { return ops::gelu_and_mul(x, ops::GeluApproximation::kTanh); },
      py::arg("x"), "gelu_and_mul(x, approximate='tanh').");
  m.def(
      "to", [](const Tensor& x, DType dtype) { return x.to(dtype); }, py::arg("x"),
      py::arg("dtype"), "x in `dtype` (x itself when it already is): Tensor.to.");
}

}  // namespace nbx::python
