// The nbxtensor Python module: `import nbxtensor as nbx`. Each part is bound by its own file;
// the order matters where a binding's default values are objects of an earlier one's types.
#include "nbx_config.h"
#include "python/py_casters.hpp"

PYBIND11_MODULE(nbxtensor, m) {
  namespace nbxpy = nbx::python;
  namespace py = pybind11;
  m.doc() =
      "nbxtensor: tensors on the host, CUDA, HIP and Vulkan devices, PyTorch's semantics. "
      "nbx.open('cuda:0'), nbx.tensor(data, device=…), nbx.ops.<op>, nbx.caps(device), "
      "nbx.explain(op, dtypes, shapes), torch.from_dlpack(t) / nbx.from_dlpack(x).";
  m.attr("__version__") = NBX_VERSION;
  nbxpy::bind_errors(m);
  nbxpy::bind_device(m);
  nbxpy::bind_tensor(m);
  nbxpy::bind_dlpack(m);
  nbxpy::bind_data(m);
  py::module_ ops = m.def_submodule("ops",
                                    "Every public op of nbx::ops (nbx.op_names()), by "
                                    "the C++ names and parameter names.");
  nbxpy::bind_ops(ops);
}
