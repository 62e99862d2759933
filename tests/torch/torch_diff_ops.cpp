// One line per op: how the runner calls nbx for a manifest case. Slots (a.t(i), a.ts(i))
// and attribute names match the driver's generators in torch_diff_ops.py.
#include "tests/torch/torch_diff_ops.hpp"

namespace nbx::torch_diff {

namespace {

using A = const CaseArgs&;
using D = const Device&;
using ops::TensorOrScalar;

OpCall unary(Tensor (*f)(const Tensor&)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0))}; };
}
OpCall binary(Tensor (*f)(const TensorOrScalar&, const TensorOrScalar&)) {
  return [f](A a, D) -> Outputs { return {f(a.ts(0), a.ts(1))}; };
}
// sum, prod, mean: (x, dims, keepdim, dtype).
OpCall reduce_typed(Tensor (*f)(const Tensor&, const ops::DimList&, bool, std::optional<DType>)) {
  return [f](A a, D) -> Outputs {
    return {f(a.t(0), a.ints("dims"), a.flag("keepdim"), a.opt_dtype("dtype"))};
  };
}
OpCall reduce(Tensor (*f)(const Tensor&, const ops::DimList&, bool)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0), a.ints("dims"), a.flag("keepdim"))}; };
}
// argmax, argmin: (x, dim or none, keepdim).
OpCall arg_reduce(Tensor (*f)(const Tensor&, std::optional<std::int64_t>, bool)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0), a.opt_integer("dim"), a.flag("keepdim"))}; };
}
// var, stddev: (x, dims, correction, keepdim).
OpCall spread(Tensor (*f)(const Tensor&, const ops::DimList&, double, bool)) {
  return [f](A a, D) -> Outputs {
    return {f(a.t(0), a.ints("dims"), a.real("correction"), a.flag("keepdim"))};
  };
}
// cumsum, cumprod, softmax, log_softmax: (x, dim, dtype).
OpCall along_dim_typed(Tensor (*f)(const Tensor&, std::int64_t, std::optional<DType>)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0), a.integer("dim"), a.opt_dtype("dtype"))}; };
}
Outputs pair(const ops::ValuesAndIndices& r) {
  return {r.values, r.indices};
}
OpCall product(Tensor (*f)(const Tensor&, const Tensor&)) {
  return [f](A a, D) -> Outputs { return {f(a.t(0), a.t(1))}; };
}
OpCall scaled_product(Tensor (*f)(const Tensor&, const Tensor&, const Tensor&, double, double)) {
  return [f](A a, D) -> Outputs {
    return {f(a.t(0), a.t(1), a.t(2), a.real("beta"), a.real("alpha"))};
  };
}
ops::GeluApproximation gelu_mode(A a) {
  return a.text("approximate") == "tanh" ? ops::GeluApproximation::kTanh
                                         : ops::GeluApproximation::kNone;
}

}  // namespace

const std::map<std::string, OpCall>& op_table() {
  static const std::map<std::string, OpCall> table = {
      // ---- unary elementwise ----
      {"neg", unary(ops::neg)},
      {"abs", unary(ops::abs)},
      {"exp", unary(ops::exp)},
      {"exp2", unary(ops::exp2)},
      {"log", unary(ops::log)},
      {"log2", unary(ops::log2)},
      {"sqrt", unary(ops::sqrt)},
      {"rsqrt", unary(ops::rsqrt)},
      {"reciprocal", unary(ops::reciprocal)},
      {"sin", unary(ops::sin)},
      {"cos", unary(ops::cos)},
      {"tan", unary(ops::tan)},
      {"tanh", unary(ops::tanh)},
      {"sigmoid", unary(ops::sigmoid)},
      {"erf", unary(ops::erf)},
      {"relu", unary(ops::relu)},
      {"silu", unary(ops::silu)},
      {"mish", unary(ops::mish)},
      {"selu", unary(ops::selu)},
      {"hardsigmoid", unary(ops::hardsigmoid)},
      {"hardswish", unary(ops::hardswish)},
      {"floor", unary(ops::floor)},
      {"ceil", unary(ops::ceil)},
      {"round", unary(ops::round)},
      {"trunc", unary(ops::trunc)},
      {"isnan", unary(ops::isnan)},
      {"isinf", unary(ops::isinf)},
      {"isfinite", unary(ops::isfinite)},
      {"logical_not", unary(ops::logical_not)},
      {"bitwise_not", unary(ops::bitwise_not)},
      {"gelu", [](A a, D) -> Outputs { return {ops::gelu(a.t(0), gelu_mode(a))}; }},
      {"softplus",
       [](A a, D) -> Outputs {
         return {ops::softplus(a.t(0), a.real("beta"), a.real("threshold"))};
       }},
      {"leaky_relu",
       [](A a, D) -> Outputs { return {ops::leaky_relu(a.t(0), a.real("negative_slope"))}; }},
      {"elu", [](A a, D) -> Outputs { return {ops::elu(a.t(0), a.real("alpha"))}; }},
      {"celu", [](A a, D) -> Outputs { return {ops::celu(a.t(0), a.real("alpha"))}; }},
      {"nan_to_num",
       [](A a, D) -> Outputs {
         return {
             ops::nan_to_num(a.t(0), a.real("nan"), a.opt_real("posinf"), a.opt_real("neginf"))};
       }},
      // ---- issue 13: GLU and friends ----
      {"glu", [](A a, D) -> Outputs { return {ops::glu(a.t(0), a.integer("dim"))}; }},
      {"silu_and_mul", [](A a, D) -> Outputs { return {ops::silu_and_mul(a.t(0))}; }},
      {"gelu_and_mul", [](A a, D) -> Outputs { return {ops::gelu_and_mul(a.t(0))}; }},
      {"gelu_tanh_and_mul",
       [](A a, D) -> Outputs {
         return {ops::gelu_and_mul(a.t(0), ops::GeluApproximation::kTanh)};
       }},
      {"log_sigmoid", unary(ops::log_sigmoid)},
      {"threshold",
       [](A a, D) -> Outputs {
         return {ops::threshold(a.t(0), a.scalar("threshold"), a.scalar("value"))};
       }},
      // ---- binary elementwise ----
      {"add", [](A a, D) -> Outputs { return {ops::add(a.ts(0), a.ts(1), a.scalar("alpha"))}; }},
      {"sub", [](A a, D) -> Outputs { return {ops::sub(a.ts(0), a.ts(1), a.scalar("alpha"))}; }},
      {"mul", binary(ops::mul)},
      {"div", binary(ops::div)},
      {"floor_divide", binary(ops::floor_divide)},
      {"remainder", binary(ops::remainder)},
      {"pow", binary(ops::pow)},
      {"maximum", binary(ops::maximum)},
      {"minimum", binary(ops::minimum)},
      {"atan2", binary(ops::atan2)},
      {"bitwise_and", binary(ops::bitwise_and)},
      {"bitwise_or", binary(ops::bitwise_or)},
      {"bitwise_xor", binary(ops::bitwise_xor)},
      {"bitwise_left_shift", binary(ops::bitwise_left_shift)},
      {"bitwise_right_shift", binary(ops::bitwise_right_shift)},
      {"logical_and", binary(ops::logical_and)},
      {"logical_or", binary(ops::logical_or)},
      {"logical_xor", binary(ops::logical_xor)},
      {"eq", binary(ops::eq)},
      {"ne", binary(ops::ne)},
      {"lt", binary(ops::lt)},
      {"le", binary(ops::le)},
      {"gt", binary(ops::gt)},
      {"ge", binary(ops::ge)},
      // ---- ternary elementwise ----
      {"where", [](A a, D) -> Outputs { return {ops::where(a.t(0), a.ts(1), a.ts(2))}; }},
      {"masked_fill",
       [](A a, D) -> Outputs { return {ops::masked_fill(a.t(0), a.t(1), a.ts(2))}; }},
      {"clamp", [](A a, D) -> Outputs { return {ops::clamp(a.t(0), a.opt_ts(1), a.opt_ts(2))}; }},
      {"lerp", [](A a, D) -> Outputs { return {ops::lerp(a.t(0), a.t(1), a.ts(2))}; }},
      {"addcmul",
       [](A a, D) -> Outputs { return {ops::addcmul(a.t(0), a.t(1), a.t(2), a.scalar("value"))}; }},
      {"addcdiv",
       [](A a, D) -> Outputs { return {ops::addcdiv(a.t(0), a.t(1), a.t(2), a.scalar("value"))}; }},
      // ---- casts, copies and views ----
      {"cast", [](A a, D) -> Outputs { return {ops::cast(a.t(0), a.dtype("dtype"))}; }},
      {"to", [](A a, D) -> Outputs { return {a.t(0).to(a.dtype("dtype"))}; }},
      {"copy", unary(ops::copy)},
      {"contiguous", [](A a, D) -> Outputs { return {a.t(0).contiguous()}; }},
      {"reshape", [](A a, D) -> Outputs { return {a.t(0).reshape(a.shape("shape"))}; }},
      {"flatten", [](A a, D) -> Outputs { return {a.t(0).flatten()}; }},
      // ---- reductions ----
      {"sum", reduce_typed(ops::sum)},
      {"prod", reduce_typed(ops::prod)},
      {"mean", reduce_typed(ops::mean)},
      {"amax", reduce(ops::amax)},
      {"amin", reduce(ops::amin)},
      {"logsumexp", reduce(ops::logsumexp)},
      {"any", reduce(ops::any)},
      {"all", reduce(ops::all)},
      {"max_dim",
       [](A a, D) { return pair(ops::max(a.t(0), a.integer("dim"), a.flag("keepdim"))); }},
      {"min_dim",
       [](A a, D) { return pair(ops::min(a.t(0), a.integer("dim"), a.flag("keepdim"))); }},
      {"argmax", arg_reduce(ops::argmax)},
      {"argmin", arg_reduce(ops::argmin)},
      {"var", spread(ops::var)},
      {"std", spread(ops::std)},
      {"norm",
       [](A a, D) -> Outputs {
         return {ops::norm(a.t(0), a.real("p"), a.ints("dims"), a.flag("keepdim"))};
       }},
      {"count_nonzero",
       [](A a, D) -> Outputs { return {ops::count_nonzero(a.t(0), a.ints("dims"))}; }},
      // ---- scans ----
      {"cumsum", along_dim_typed(ops::cumsum)},
      {"cumprod", along_dim_typed(ops::cumprod)},
      {"cummax", [](A a, D) { return pair(ops::cummax(a.t(0), a.integer("dim"))); }},
      {"cummin", [](A a, D) { return pair(ops::cummin(a.t(0), a.integer("dim"))); }},
      // ---- softmax family ----
      {"softmax", along_dim_typed(ops::softmax)},
      {"log_softmax", along_dim_typed(ops::log_softmax)},
      {"scaled_masked_softmax",
       [](A a, D) -> Outputs {
         return {ops::scaled_masked_softmax(a.t(0), a.integer("dim"), a.real("scale"), a.opt_t(1),
                                            a.flag("log"))};
       }},
      {"softmax_with_temperature",
       [](A a, D) -> Outputs {
         return {ops::softmax_with_temperature(a.t(0), a.integer("dim"), a.real("temperature"))};
       }},
      // ---- normalizations ----
      {"layer_norm",
       [](A a, D) -> Outputs {
         return {ops::layer_norm(a.t(0), a.shape("normalized_shape"), a.opt_t(1), a.opt_t(2),
                                 a.real("eps"))};
       }},
      {"rms_norm",
       [](A a, D) -> Outputs {
         return {ops::rms_norm(a.t(0), a.shape("normalized_shape"), a.opt_t(1), a.opt_real("eps"))};
       }},
      {"group_norm",
       [](A a, D) -> Outputs {
         return {ops::group_norm(a.t(0), a.integer("num_groups"), a.opt_t(1), a.opt_t(2),
                                 a.real("eps"))};
       }},
      {"batch_norm",
       [](A a, D) -> Outputs {
         return {ops::batch_norm(a.t(0), a.t(1), a.t(2), a.opt_t(3), a.opt_t(4), a.real("eps"))};
       }},
      // ---- matrix products ----
      {"matmul", product(ops::matmul)},
      {"mm", product(ops::mm)},
      {"mv", product(ops::mv)},
      {"bmm", product(ops::bmm)},
      {"dot", product(ops::dot)},
      {"addmm", scaled_product(ops::addmm)},
      {"baddbmm", scaled_product(ops::baddbmm)},
      {"addmv", scaled_product(ops::addmv)},
      {"addr", scaled_product(ops::addr)},
      {"linear", [](A a, D) -> Outputs { return {ops::linear(a.t(0), a.t(1), a.opt_t(2))}; }},
      // ---- creation ----
      {"full",
       [](A a, D d) -> Outputs {
         return {ops::full(a.shape("shape"), a.scalar("value"), a.dtype("dtype"), d)};
       }},
      {"zeros",
       [](A a, D d) -> Outputs { return {Tensor::zeros(a.shape("shape"), a.dtype("dtype"), d)}; }},
      {"ones",
       [](A a, D d) -> Outputs { return {Tensor::ones(a.shape("shape"), a.dtype("dtype"), d)}; }},
      {"arange",
       [](A a, D d) -> Outputs {
         return {ops::arange(a.scalar("start"), a.scalar("end"), a.scalar("step"), a.dtype("dtype"),
                             d)};
       }},
      {"linspace",
       [](A a, D d) -> Outputs {
         return {ops::linspace(a.scalar("start"), a.scalar("end"), a.integer("steps"),
                               a.dtype("dtype"), d)};
       }},
      {"full_like", [](A a, D) -> Outputs { return {ops::full_like(a.t(0), a.scalar("value"))}; }},
      {"triu", [](A a, D) -> Outputs { return {ops::triu(a.t(0), a.integer("diagonal"))}; }},
      {"tril", [](A a, D) -> Outputs { return {ops::tril(a.t(0), a.integer("diagonal"))}; }},
      // ---- index reads ----
      {"index_select",
       [](A a, D) -> Outputs { return {ops::index_select(a.t(0), a.integer("dim"), a.t(1))}; }},
      {"gather", [](A a, D) -> Outputs { return {ops::gather(a.t(0), a.integer("dim"), a.t(1))}; }},
      {"take_along_dim",
       [](A a,
          D) -> Outputs { return {ops::take_along_dim(a.t(0), a.t(1), a.opt_integer("dim"))}; }},
      {"embedding",
       [](A a,
          D) -> Outputs { return {ops::embedding(a.t(0), a.t(1), a.opt_integer("padding_idx"))}; }},
      {"take", product(ops::take)},
      // ---- issue 11: the everyday unary ops ----
      {"log1p", unary(ops::log1p)},
      {"expm1", unary(ops::expm1)},
      {"log10", unary(ops::log10)},
      {"sign", unary(ops::sign)},
      {"sgn", unary(ops::sgn)},
      {"signbit", unary(ops::signbit)},
      {"asin", unary(ops::asin)},
      {"acos", unary(ops::acos)},
      {"atan", unary(ops::atan)},
      {"sinh", unary(ops::sinh)},
      {"cosh", unary(ops::cosh)},
      {"asinh", unary(ops::asinh)},
      {"acosh", unary(ops::acosh)},
      {"atanh", unary(ops::atanh)},
      {"erfc", unary(ops::erfc)},
      {"erfinv", unary(ops::erfinv)},
      {"lgamma", unary(ops::lgamma)},
      {"digamma", unary(ops::digamma)},
      {"square", unary(ops::square)},
      {"frac", unary(ops::frac)},
      {"deg2rad", unary(ops::deg2rad)},
      {"rad2deg", unary(ops::rad2deg)},
      {"logit", [](A a, D) -> Outputs { return {ops::logit(a.t(0), a.opt_real("eps"))}; }},
      {"sinc", unary(ops::sinc)},
      {"isposinf", unary(ops::isposinf)},
      {"isneginf", unary(ops::isneginf)},
      // ---- issue 11: the everyday binary ops ----
      {"fmod", binary(ops::fmod)},
      {"hypot", binary(ops::hypot)},
      {"copysign", binary(ops::copysign)},
      {"logaddexp", binary(ops::logaddexp)},
      {"logaddexp2", binary(ops::logaddexp2)},
      {"xlogy", binary(ops::xlogy)},
      {"nextafter", binary(ops::nextafter)},
      {"float_power", binary(ops::float_power)},
      {"isclose",
       [](A a, D) -> Outputs {
         return {ops::isclose(a.t(0), a.t(1), a.real("rtol"), a.real("atol"), a.flag("equal_nan"))};
       }},
      {"allclose",
       [](A a, D) -> Outputs {
         const bool close =
             ops::allclose(a.t(0), a.t(1), a.real("rtol"), a.real("atol"), a.flag("equal_nan"));
         return {ops::full(Shape{}, close, DType::kBool)};
       }},
      {"clamp_min", [](A a, D) -> Outputs { return {ops::clamp_min(a.t(0), a.ts(1))}; }},
      {"clamp_max", [](A a, D) -> Outputs { return {ops::clamp_max(a.t(0), a.ts(1))}; }},
      // ---- issue 11: reductions and scans ----
      {"max_all", unary(ops::max)},
      {"min_all", unary(ops::min)},
      {"aminmax",
       [](A a, D) -> Outputs {
         const auto r = ops::aminmax(a.t(0), a.opt_integer("dim"), a.flag("keepdim"));
         return {r.min, r.max};
       }},
      {"nansum", reduce_typed(ops::nansum)},
      {"nanmean", reduce_typed(ops::nanmean)},
      {"var_mean",
       [](A a, D) -> Outputs {
         const auto r = ops::var_mean(a.t(0), a.ints("dims"), a.real("correction"), a.flag("keepdim"));
         return {r.statistic, r.mean};
       }},
      {"std_mean",
       [](A a, D) -> Outputs {
         const auto r = ops::std_mean(a.t(0), a.ints("dims"), a.real("correction"), a.flag("keepdim"));
         return {r.statistic, r.mean};
       }},
      {"logcumsumexp",
       [](A a, D) -> Outputs { return {ops::logcumsumexp(a.t(0), a.integer("dim"))}; }},
      // ---- issue 11: creation ----
      {"zeros_like",
       [](A a, D) -> Outputs { return {ops::zeros_like(a.t(0), a.opt_dtype("dtype"))}; }},
      {"ones_like", [](A a, D) -> Outputs { return {ops::ones_like(a.t(0), a.opt_dtype("dtype"))}; }},
      {"full_like_typed",
       [](A a, D) -> Outputs {
         return {ops::full_like(a.t(0), a.scalar("value"), a.opt_dtype("dtype"))};
       }},
      {"eye",
       [](A a, D d) -> Outputs {
         const std::int64_t n = a.integer("n");
         return {ops::eye(n, a.opt_integer("m").value_or(n), a.dtype("dtype"), d)};
       }},
  };
  return table;
}

}  // namespace nbx::torch_diff
