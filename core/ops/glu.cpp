// The GLU family: the split and its checks here, the math in the elementwise table.
#include "core/ops/glu.hpp"

#include <string>

#include "core/errors.hpp"
#include "core/ops/elementwise_call.hpp"
#include "core/ops/plan.hpp"

namespace nbx::ops {

Shape plan_halves(std::string_view op, const Shape& x, std::int64_t dim) {
  const std::string name(op);
  if (x.size() == 0)
    throw InvalidArgument(name, name +
                                    " does not support scalars because halving size must be "
                                    "even (got a 0-d tensor).");
  const int d = wrap_dim(dim, x.size(), name.c_str());
  const std::int64_t n = x[d];
  if (n % 2 != 0)
    throw InvalidArgument(name, name + ": halving dimension must be even, but dimension " +
                                    std::to_string(d) + " is size " + std::to_string(n) +
                                    " (input shape " + to_string(x) + ").");
  Shape out = x;
  out[d] = n / 2;
  return out;
}

namespace {

// a (the first half) and b (the second) of x along dim: two views of x's storage, so the
// kernel reads each element once, where it lies, with no copy before the launch.
Tensor gated(abi::ElementwiseOp op, const char* name, const Tensor& x, std::int64_t dim) {
  if (!x.defined()) throw InvalidArgument(name, std::string(name) + ": the tensor is undefined.");
  const Shape out = plan_halves(name, x.shape(), dim);
  const int d = wrap_dim(dim, x.dim(), name);
  const std::int64_t half = out[d];
  return detail::run_binary_op(op, x.narrow(d, 0, half), x.narrow(d, half, half), name);
}

}  // namespace

Tensor glu(const Tensor& x, std::int64_t dim) {
  return gated(abi::kOp_sigmoid_mul, "glu", x, dim);
}

Tensor silu_and_mul(const Tensor& x) {
  return gated(abi::kOp_silu_mul, "silu_and_mul", x, -1);
}

Tensor gelu_and_mul(const Tensor& x, GeluApproximation approximate) {
  return approximate == GeluApproximation::kTanh
             ? gated(abi::kOp_gelu_tanh_mul, "gelu_tanh_and_mul", x, -1)
             : gated(abi::kOp_gelu_erf_mul, "gelu_and_mul", x, -1);
}

}  // namespace nbx::ops
