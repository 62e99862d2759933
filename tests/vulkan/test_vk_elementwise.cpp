// Every elementwise op x every dtype on vulkan:0 against the host reference, through the
// BackendDevice API (no tensors): seeded random inputs with ±0, NaN and ±inf, the vectorised
// contiguous path with a tail, the scalar contiguous path (unaligned offset), broadcast and
// transposed operands, a strided output, and host scalars. Each cell prints its seed.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.hpp"
#include "vk_test_util.hpp"

namespace nbx::vktest {
namespace {

struct Op {
  const char* name;
  std::int32_t code, arity;
};
constexpr Op kOps[] = {
#define NBX_ELEMENTWISE_OP(name, code, arity) {#name, code, arity},
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
};

bool in(std::string_view name, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                    DType::kFloat64};
const std::vector<DType> kInts = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kInt32,
                                  DType::kInt64};

std::vector<DType> dtypes_for(std::string_view op) {
  // The wrappers launch float_power in float64 only and isclose with its rtol/atol attributes
  // and a bool output, neither of which this generic launch builds: both are covered as the
  // wrappers launch them by the conformance suite and tests/unit/test_elementwise_binary_wave2.
  if (op == "float_power") return {DType::kFloat64};
  if (op == "isclose") return {};
  std::vector<DType> out;
  auto add = [&out](const std::vector<DType>& v) { out.insert(out.end(), v.begin(), v.end()); };
  const bool float_only =
      in(op,
         {"exp",      "exp2",        "log",       "log2",     "sqrt",       "rsqrt", "reciprocal",
          "sin",      "cos",         "tan",       "tanh",     "sigmoid",    "erf",   "silu",
          "gelu_erf", "gelu_tanh",   "mish",      "softplus", "leaky_relu", "elu",   "selu",
          "celu",     "hardsigmoid", "hardswish", "div",      "atan2",      "lerp",  "addcdiv"}) ||
      in(op, {"log1p",      "expm1",   "log10",     "asin",     "acos",       "atan",   "sinh",
              "cosh",       "asinh",   "acosh",     "atanh",    "erfc",       "erfinv", "lgamma",
              "digamma",    "deg2rad", "rad2deg",   "logit",    "sinc",       "hypot",  "logaddexp",
              "logaddexp2", "xlogy",   "nextafter", "copysign", "float_power"}) ||
      in(op, {"log_sigmoid", "sigmoid_mul", "silu_mul", "gelu_erf_mul", "gelu_tanh_mul"});
  const bool bits = in(op, {"bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor"});
  const bool any = in(op, {"isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
                           "logical_xor", "eq", "ne", "lt", "le", "gt", "ge", "where", "copy"});
  if (!bits && !in(op, {"bitwise_left_shift", "bitwise_right_shift"})) add(kFloats);
  if (!float_only) add(kInts);
  if (bits || any) out.push_back(DType::kBool);
  return out;
}

DType out_dtype(std::string_view op, DType t) {
  return in(op, {"isnan", "isinf", "isfinite", "logical_not", "logical_and", "logical_or",
                 "logical_xor", "eq", "ne", "lt", "le", "gt", "ge"})
             ? DType::kBool
             : t;
}

Values values_for(std::string_view op, int k, DType t) {
  const bool fl = is_floating(t);
  if (k == 1 && !fl && in(op, {"floor_divide", "remainder", "fmod"})) return Values::kNonZero;
  if (k == 1 && in(op, {"bitwise_left_shift", "bitwise_right_shift"})) return Values::kShift;
  if (k == 1 && !fl && op == "pow") return Values::kExponent;
  if (in(op, {"lerp", "addcmul", "addcdiv"})) return Values::kSmall;
  return Values::kGeneral;
}

void set_attrs(std::string_view op, abi::ElementwiseParams& p) {
  auto a = [&p](int k, double f, std::int64_t i) { p.attrs[k] = {f, i}; };
  if (in(op, {"add", "sub"})) a(0, 2.0, 2);
  if (op == "softplus") a(0, 1.5, 0), a(1, 15.0, 0);
  if (op == "leaky_relu") a(0, 0.1, 0);
  if (op == "threshold") a(0, 0.5, 1), a(1, -2.5, -3);
  if (op == "elu") a(0, 1.3, 0);
  if (op == "celu") a(0, 0.7, 0);
  if (op == "nan_to_num") a(0, 0.25, 0), a(1, 1000.0, 0), a(2, -1000.0, 0);
  if (in(op, {"addcmul", "addcdiv"})) a(0, 0.5, 3);
}

// Builds the cell's launch in one of four layouts (see the file comment).
Launch build(const Op& op, DType t, int layout, std::mt19937_64& rng) {
  const DType compute = is_half_type(t) ? DType::kFloat32 : t;
  const std::int64_t rows = 5, cols = 77;
  Launch l = make_launch(op.code, out_dtype(op.name, t), compute, {rows, cols});
  set_attrs(op.name, l.params);
  for (int k = 0; k < op.arity; ++k) {
    const DType dt = (std::string_view(op.name) == "where" && k == 0) ? DType::kBool : t;
    Input x;
    const std::size_t n = rows * cols + 3;
    x.raw = random_raw(dt, n, values_for(op.name, k, t), rng);
    x.strides = {cols, 1};
    if (layout == 1) x.offset = 3;
    if (layout == 2) {
      if (k == 0) x.strides = {1, rows};  // a transposed [77, 5] buffer
      if (k == 1) x.strides = {0, 1};     // [1, 77] broadcast over rows
      if (k == 2) x.strides = {1, 0};     // [5, 1] broadcast over columns
    }
    if (layout == 3 && k > 0 && k == op.arity - 1) {
      x.scalar = true;
      const bool shift = in(op.name, {"bitwise_left_shift", "bitwise_right_shift"});
      x.value = is_floating(t) ? abi::ScalarValue{1.75, 1} : abi::ScalarValue{3.0, shift ? 3 : 5};
    }
    l.inputs.push_back(std::move(x));
  }
  if (layout == 3 && op.arity == 1) {  // a transposed (dense, not row-major) output
    l.params.out.strides[0] = 1;
    l.params.out.strides[1] = rows;
  }
  return l;
}

}  // namespace

TEST_CASE("every elementwise op and dtype matches the host reference") {
  BackendDevice& vk = vulkan_device();
  const DeviceProperties& props = vk.properties();
  int cell = 0, passed = 0;
  for (const Op& op : kOps) {
    for (DType t : dtypes_for(op.name)) {
      if ((t == DType::kFloat64 && !props.fp64.value_or(false)) ||
          (t == DType::kInt64 && !props.int64.value_or(false)))
        continue;
      for (int layout : {0, 1 + cell % 3}) {
        const std::uint64_t seed = 0x5eed0000ull + std::uint64_t(cell) * 16 + layout;
        std::mt19937_64 rng(seed);
        Launch l = build(op, t, layout, rng);
        const std::string op_name = op.name;
        CAPTURE(op_name);
        CAPTURE(dtype_name(t));
        CAPTURE(layout);
        CAPTURE(seed);
        const Raw want = run_on(host_device(), l);
        const Raw got = run_on(vk, l);
        const std::string diff = compare(got, want, &l.inputs[0].raw);
        CHECK_MESSAGE(diff.empty(), diff);
        passed += diff.empty();
      }
      ++cell;
    }
  }
  MESSAGE("elementwise cells: " << passed << " launches matched");
  CHECK(passed > 500);
}

TEST_CASE("casts between every pair of dtypes match the host reference") {
  BackendDevice& vk = vulkan_device();
  std::vector<DType> all = kFloats;
  all.insert(all.end(), kInts.begin(), kInts.end());
  all.push_back(DType::kBool);
  int pairs = 0;
  for (DType from : all) {
    for (DType to : all) {
      std::mt19937_64 rng(0xca570000ull + std::uint64_t(from) * 16 + std::uint64_t(to));
      const DType compute = is_half_type(from) ? DType::kFloat32 : from;
      Launch l = make_launch(abi::kOp_copy, to, compute, {1021});
      Input x;
      x.raw = random_raw(from, 1021, Values::kCast, rng);
      x.strides = {1};
      l.inputs.push_back(std::move(x));
      CAPTURE(dtype_name(from));
      CAPTURE(dtype_name(to));
      const std::string diff = compare(run_on(vk, l), run_on(host_device(), l), &l.inputs[0].raw);
      CHECK_MESSAGE(diff.empty(), diff);
      ++pairs;
    }
  }
  CHECK(pairs == 100);
}

}  // namespace nbx::vktest
