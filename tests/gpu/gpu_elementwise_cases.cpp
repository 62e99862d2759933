// The sweep of elementwise cases: every op of core/elementwise_op_list.inc, every dtype the
// op is defined for, and the layouts that steer the launcher to each kernel (flat and
// vectorised, misaligned, row/column broadcast, transposed, strided, scalar, 0-d tensor,
// 3-d broadcast, strided output).
#include "tests/gpu/gpu_elementwise_cases.hpp"

#include <cstring>

namespace nbx::gputest {
namespace {

using abi::ElementwiseOp;

enum DTypeSet { kAll, kNumeric, kFloat, kInt, kIntBool };

struct OpInfo {
  int op;
  const char* name;
  int arity;
  DTypeSet dtypes;
  bool bool_out;
  Role second;  // role of inputs 1 and 2
};

// The op table of the tests: which dtypes each op is defined for (PyTorch's), whether it
// returns bool, and what values its second operand needs.
constexpr OpInfo kOps[] = {
#define U(name, set, bool_out) \
  { abi::kOp_##name, #name, 1, set, bool_out, Role::kGeneral }
#define B(name, set, bool_out, role) \
  { abi::kOp_##name, #name, 2, set, bool_out, role }
#define T(name, set) \
  { abi::kOp_##name, #name, 3, set, false, Role::kGeneral }
    U(neg, kNumeric, false),
    U(abs, kNumeric, false),
    U(exp, kFloat, false),
    U(exp2, kFloat, false),
    U(log, kFloat, false),
    U(log2, kFloat, false),
    U(sqrt, kFloat, false),
    U(rsqrt, kFloat, false),
    U(reciprocal, kFloat, false),
    U(sin, kFloat, false),
    U(cos, kFloat, false),
    U(tan, kFloat, false),
    U(tanh, kFloat, false),
    U(sigmoid, kFloat, false),
    U(erf, kFloat, false),
    U(relu, kNumeric, false),
    U(silu, kFloat, false),
    U(gelu_erf, kFloat, false),
    U(gelu_tanh, kFloat, false),
    U(mish, kFloat, false),
    U(softplus, kFloat, false),
    U(leaky_relu, kFloat, false),
    U(elu, kFloat, false),
    U(selu, kFloat, false),
    U(celu, kFloat, false),
    U(hardsigmoid, kFloat, false),
    U(hardswish, kFloat, false),
    U(floor, kNumeric, false),
    U(ceil, kNumeric, false),
    U(round, kNumeric, false),
    U(trunc, kNumeric, false),
    U(isnan, kAll, true),
    U(isinf, kAll, true),
    U(isfinite, kAll, true),
    U(nan_to_num, kFloat, false),
    U(logical_not, kAll, true),
    U(bitwise_not, kIntBool, false),
    B(add, kAll, false, Role::kGeneral),
    B(sub, kNumeric, false, Role::kGeneral),
    B(mul, kAll, false, Role::kGeneral),
    B(div, kFloat, false, Role::kGeneral),
    B(floor_divide, kNumeric, false, Role::kDivisor),
    B(remainder, kNumeric, false, Role::kDivisor),
    B(pow, kNumeric, false, Role::kExponent),
    B(maximum, kAll, false, Role::kGeneral),
    B(minimum, kAll, false, Role::kGeneral),
    B(atan2, kFloat, false, Role::kGeneral),
    B(bitwise_and, kIntBool, false, Role::kGeneral),
    B(bitwise_or, kIntBool, false, Role::kGeneral),
    B(bitwise_xor, kIntBool, false, Role::kGeneral),
    B(bitwise_left_shift, kInt, false, Role::kShift),
    B(bitwise_right_shift, kInt, false, Role::kShift),
    B(logical_and, kAll, true, Role::kGeneral),
    B(logical_or, kAll, true, Role::kGeneral),
    B(logical_xor, kAll, true, Role::kGeneral),
    B(eq, kAll, true, Role::kGeneral),
    B(ne, kAll, true, Role::kGeneral),
    B(lt, kAll, true, Role::kGeneral),
    B(le, kAll, true, Role::kGeneral),
    B(gt, kAll, true, Role::kGeneral),
    B(ge, kAll, true, Role::kGeneral),
    U(log_sigmoid, kFloat, false),
    U(threshold, kNumeric, false),
    B(sigmoid_mul, kFloat, false, Role::kGeneral),
    B(silu_mul, kFloat, false, Role::kGeneral),
    B(gelu_erf_mul, kFloat, false, Role::kGeneral),
    B(gelu_tanh_mul, kFloat, false, Role::kGeneral),
    T(where, kAll),
    T(clamp, kNumeric),
    T(lerp, kFloat),
    T(addcmul, kNumeric),
    T(addcdiv, kFloat),
#undef U
#undef B
#undef T
};

bool in_set(DType t, DTypeSet s) {
  switch (s) {
    case kAll:
      return true;
    case kNumeric:
      return t != DType::kBool;
    case kFloat:
      return is_floating(t);
    case kInt:
      return is_integral(t, false);
    case kIntBool:
      return is_integral(t, true);
  }
  return false;
}

DType compute_for(DType t) {
  return is_half_type(t) ? DType::kFloat32 : t;
}

// Attributes as the op wrappers would pass them (both representations filled).
void set_attrs(Case& c, int op) {
  auto both = [](double f) { return abi::ScalarValue{f, static_cast<std::int64_t>(f)}; };
  const bool fl = is_floating(c.compute);
  switch (op) {
    case abi::kOp_add:
    case abi::kOp_sub:
      c.attrs[0] = fl ? abi::ScalarValue{1.5, 1} : both(2);
      break;
    case abi::kOp_addcmul:
    case abi::kOp_addcdiv:
      c.attrs[0] = fl ? abi::ScalarValue{0.5, 0} : both(3);
      break;
    case abi::kOp_softplus:
      c.attrs[0] = both(1.5), c.attrs[1] = both(6.0);
      break;
    case abi::kOp_leaky_relu:
      c.attrs[0] = {0.01, 0};
      break;
    case abi::kOp_elu:
      c.attrs[0] = both(1.0);
      break;
    case abi::kOp_celu:
      c.attrs[0] = {0.7, 0};
      break;
    case abi::kOp_nan_to_num:
      c.attrs[0] = both(0.25), c.attrs[1] = both(100.0), c.attrs[2] = both(-100.0);
      break;
    case abi::kOp_threshold:  // as the wrapper passes them: already in the dtype
      c.attrs[0] = fl ? abi::ScalarValue{0.5, 0} : both(1);
      c.attrs[1] = both(-3);
      break;
    default:
      break;
  }
}

// A layout: the output shape, the output's strides, and each input's view.
struct View {
  std::vector<std::int64_t> strides;
  std::int64_t offset = 0;
  std::int64_t storage = 0;  // elements
  bool scalar = false;
};
struct Layout {
  const char* name;
  int min_arity;
  std::vector<std::int64_t> sizes;
  View out;
  View in[3];
};

std::vector<Layout> layouts() {
  const std::int64_t n = 4099, r = 33, c = 70, R = 24, C = 64;
  std::vector<Layout> l;
  // Flat, vectorised, with a tail (4099 is not a multiple of any vector width).
  l.push_back({"flat", 1, {n}, {{1}, 0, n}, {{{1}, 0, n}, {{1}, 0, n}, {{1}, 0, n}}});
  // Offsets of one element: misaligned vectors send fast combos to the generic kernel.
  l.push_back(
      {"flat_offset", 1, {n}, {{1}, 0, n}, {{{1}, 1, n + 1}, {{1}, 1, n + 1}, {{1}, 1, n + 1}}});
  // [R, C] with input 1 a broadcast row [C] and input 2 a broadcast column [R, 1].
  l.push_back({"broadcast",
               2,
               {R, C},
               {{C, 1}, 0, R * C},
               {{{C, 1}, 0, R * C}, {{0, 1}, 0, C}, {{1, 0}, 0, R}}});
  // Column broadcast in input 1.
  l.push_back({"column",
               2,
               {R, C},
               {{C, 1}, 0, R * C},
               {{{C, 1}, 0, R * C}, {{1, 0}, 0, R}, {{0, 1}, 0, C}}});
  // Input 1 (input 0 for unary ops) a transposed view of a [c, r] buffer: the tiled path.
  l.push_back({"transposed",
               1,
               {r, c},
               {{c, 1}, 0, r * c},
               {{{1, r}, 0, r * c}, {{1, r}, 0, r * c}, {{c, 1}, 0, r * c}}});
  // Every other element of a larger buffer, with an offset.
  l.push_back({"strided",
               1,
               {17, 40},
               {{40, 1}, 0, 680},
               {{{160, 2}, 3, 17 * 160}, {{40, 1}, 0, 680}, {{1, 17}, 0, 680}}});
  // Input 1 a host scalar.
  l.push_back({"scalar",
               2,
               {R, C},
               {{C, 1}, 0, R * C},
               {{{C, 1}, 0, R * C}, {{}, 0, 0, true}, {{C, 1}, 0, R * C}}});
  // Input 1 a 0-d device tensor (one element, all strides 0).
  l.push_back({"zero_dim",
               2,
               {R, C},
               {{C, 1}, 0, R * C},
               {{{C, 1}, 0, R * C}, {{0, 0}, 0, 1}, {{0, 0}, 0, 1}}});
  // 3-d broadcast that collapses to nothing simpler: the generic kernel.
  l.push_back({"broadcast3d",
               1,
               {4, 5, 6},
               {{30, 6, 1}, 0, 120},
               {{{30, 6, 1}, 0, 120}, {{0, 1, 0}, 0, 5}, {{6, 0, 1}, 0, 24}}});
  // A transposed output view.
  l.push_back({"out_transposed",
               1,
               {r, c},
               {{1, r}, 0, r * c},
               {{{c, 1}, 0, r * c}, {{c, 1}, 0, r * c}, {{c, 1}, 0, r * c}}});
  return l;
}

Operand make_operand(const View& v, DType t, Generator& g, Role role) {
  Operand o;
  o.dtype = t;
  o.strides = v.strides;
  o.offset = v.offset;
  if (!v.scalar) g.fill(o.storage, t, v.storage, role);
  return o;
}

Case build(const OpInfo& info, DType t, const Layout& l, std::uint64_t seed) {
  Generator g(seed);
  Case c;
  c.op = info.op;
  c.compute = compute_for(t);
  c.sizes = l.sizes;
  const DType out_t = info.bool_out ? DType::kBool : t;
  c.out.dtype = out_t;
  c.out.strides = l.out.strides;
  // A recognisable pattern, so a write outside the view shows as a difference.
  c.out.storage.assign(std::size_t(l.out.storage) * dtype_size(out_t), std::byte{0x5a});
  if (out_t == DType::kBool) std::memset(c.out.storage.data(), 1, c.out.storage.size());
  for (int k = 0; k < info.arity; ++k) {
    const bool cond = info.op == abi::kOp_where && k == 0;
    const DType in_t = cond ? DType::kBool : t;
    const Role role = cond ? Role::kCondition : (k == 0 ? Role::kGeneral : info.second);
    if (l.in[k].scalar) {
      Operand o;
      o.dtype = c.compute;
      o.scalar = true;
      o.value = g.scalar(c.compute, role);
      c.in.push_back(o);
    } else {
      c.in.push_back(make_operand(l.in[k], in_t, g, role));
    }
  }
  set_attrs(c, info.op);
  c.label = std::string(info.name) + " " + std::string(dtype_name(t)) + " layout=" + l.name +
            " seed=" + std::to_string(seed);
  return c;
}

}  // namespace

std::vector<Case> elementwise_cases(std::uint64_t seed) {
  std::vector<Case> cases;
  const std::vector<Layout> all_layouts = layouts();
  for (const OpInfo& info : kOps)
    for (DType t : kAllDTypes) {
      if (!in_set(t, info.dtypes)) continue;
      for (const Layout& l : all_layouts) {
        if (info.arity < l.min_arity) continue;
        if (info.op == abi::kOp_where && l.in[0].scalar) continue;
        cases.push_back(build(info, t, l, seed++));
      }
    }
  return cases;
}

std::vector<Case> cast_cases(std::uint64_t seed) {
  std::vector<Case> cases;
  const std::vector<Layout> all_layouts = layouts();
  for (DType from : kAllDTypes)
    for (DType to : kAllDTypes)
      for (const Layout& l : all_layouts) {
        if (std::string(l.name) != "flat" && std::string(l.name) != "transposed") continue;
        // The op layer names the output dtype as a cast's compute dtype; the result must
        // not depend on it, so both the output's and the input's are tried.
        for (bool compute_is_output : {true, false}) {
          OpInfo copy{abi::kOp_copy, "copy", 1, kAll, false, Role::kGeneral};
          Case c = build(copy, from, l, seed++);
          c.out.dtype = to;
          c.compute = compute_is_output ? to : compute_for(from);
          c.out.storage.assign(std::size_t(l.out.storage) * dtype_size(to), std::byte{0x5a});
          c.label = "cast " + std::string(dtype_name(from)) + "->" + std::string(dtype_name(to)) +
                    " compute=" + std::string(dtype_name(c.compute)) + " layout=" + l.name +
                    " seed=" + std::to_string(seed - 1);
          cases.push_back(std::move(c));
        }
      }
  return cases;
}

}  // namespace nbx::gputest
