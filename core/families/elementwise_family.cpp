// The elementwise family (abi::ElementwiseParams): every op of elementwise_op_list.inc
// through strides and broadcasting; buffers [0] out, [1 + k] input k (empty for a scalar).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

struct OpEntry {
  std::string_view name;
  std::int32_t code;
  int arity;
};
constexpr OpEntry kOps[] = {
#define NBX_ELEMENTWISE_OP(name, code, arity) {#name, code, arity},
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
};

const OpEntry* find_op(std::int32_t code) {
  for (const OpEntry& e : kOps)
    if (e.code == code) return &e;
  return nullptr;
}

bool is_bitwise(std::int32_t op) {
  return op == abi::kOp_bitwise_not ||
         (op >= abi::kOp_bitwise_and && op <= abi::kOp_bitwise_right_shift);
}

std::string op_name(std::int32_t code) {
  const OpEntry* e = find_op(code);
  return e ? std::string(e->name) : "elementwise op " + std::to_string(code);
}

void check_operand(const abi::ElementwiseParams& p, const abi::ElementwiseOperand& o,
                   const KernelBuffer& b, const char* label, const LaunchCheck& check) {
  check.dtype(o.dtype, label);
  if (o.is_scalar) return;
  check.view(label, o.offset).dims(p.ndim, p.sizes, o.strides).inside(b, o.dtype);
}

void validate(const abi::ElementwiseParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  const OpEntry* op = find_op(p.op);
  if (!op) check.fail("unknown op code " + std::to_string(p.op));
  if (p.num_inputs != op->arity)
    check.fail("the op takes " + std::to_string(op->arity) + " inputs, the block says " +
               std::to_string(p.num_inputs));
  check.buffer_count(buffers.size(), std::size_t(1 + p.num_inputs));
  check.count(p.ndim, abi::kMaxDims, "ndim");
  check.dtype(p.compute_dtype, "the compute dtype");
  if (is_bitwise(p.op) && is_floating(DType(p.compute_dtype)))
    check.fail("a bitwise op has no floating-point form (compute dtype " +
               std::string(dtype_name(DType(p.compute_dtype))) + ")");
  const std::int64_t n = check.product(p.ndim, p.sizes, "the sizes");
  if (n != p.numel)
    check.fail("numel is " + std::to_string(p.numel) + " but the sizes multiply to " +
               std::to_string(n));
  if (p.variant != abi::kElementwiseStrided && p.variant != abi::kElementwiseBatched)
    check.fail("unknown variant " + std::to_string(p.variant));
  check.require(!p.out.is_scalar, "the output is a scalar");
  check_operand(p, p.out, buffers[0], "the output", check);
  static const char* const kInputs[] = {"input 0", "input 1", "input 2"};
  for (int k = 0; k < p.num_inputs; ++k)
    check_operand(p, p.in[k], buffers[std::size_t(1 + k)], kInputs[k], check);
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input 0"}, {"input 1"}, {"input 2"}};
constexpr std::string_view kVariants[] = {"strided", "batched"};

}  // namespace

extern const FamilySpec elementwise_family{
    KernelFamily::kElementwise,
    "elementwise",
    sizeof(abi::ElementwiseParams),
    kBuffers,
    kVariants,
    field_of<abi::ElementwiseParams, &abi::ElementwiseParams::op>,
    field_of<abi::ElementwiseParams, &abi::ElementwiseParams::variant>,
    op_name,
    validate_bytes<abi::ElementwiseParams, validate>,
    serves_all,
    set_field<abi::ElementwiseParams, &abi::ElementwiseParams::variant>,
    describe_common_fault};

}  // namespace nbx::families
