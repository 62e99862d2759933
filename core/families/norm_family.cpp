// The norm family (abi::NormParams): layer/rms/group/batch norm over rows of a contiguous
// input; buffers [0] out, [1] in, [2] weight, [3] bias, [4] running mean, [5] running var
// (empty memory where absent).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"layer_norm", "rms_norm", "group_norm", "batch_norm"};

std::string op_name(std::int32_t code) {
  return name_from_list("norm", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"general", "rows"};

// A contiguous operand of `elements` elements of `dtype` from element 0.
void contiguous(const char* label, const KernelBuffer& b, std::int64_t elements, std::int32_t dtype,
                const LaunchCheck& check) {
  check.view(label, 0).dim(elements, 1).inside(b, dtype);
}

void validate(const abi::NormParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op < 0 || std::size_t(p.op) >= std::size(kOpNames))
    check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  const bool batch = p.op == abi::kNorm_batch_norm;
  // Absent optional operands are bound as empty memory, so the count is fixed per op.
  if (buffers.size() < (batch ? 6u : 2u) || buffers.size() > 6u)
    check.fail(std::to_string(buffers.size()) + " buffers bound; the op takes " +
               (batch ? "6" : "2 to 6"));
  check.floating_dtype(p.in_dtype, "the input");
  check.floating_dtype(p.out_dtype, "the output");
  check.floating_dtype(p.accumulate_dtype, "the accumulate dtype");
  check.floating_dtype(p.param_dtype, "the parameters");
  check.require(p.has_weight == 0 || p.has_weight == 1, "has_weight is neither 0 nor 1");
  check.require(p.has_bias == 0 || p.has_bias == 1, "has_bias is neither 0 nor 1");
  check.require(p.row_tile >= 1, "row_tile is below 1");
  if (p.rows < 0 || p.row_len < 0) check.fail("negative rows or row_len");
  std::int64_t numel = 0;
  if (__builtin_mul_overflow(p.rows, p.row_len, &numel)) check.fail("rows · row_len overflow");
  const bool by_channel = batch || p.op == abi::kNorm_group_norm;
  if (by_channel) {
    std::int64_t per_row = 0;
    const bool shape_ok =
        p.inner > 0 && p.groups > 0 && p.channels > 0 && p.channels % p.groups == 0 &&
        !__builtin_mul_overflow(batch ? p.channels : p.channels / p.groups, p.inner, &per_row) &&
        per_row == p.row_len;
    if (!shape_ok)
      check.fail("channels " + std::to_string(p.channels) + ", groups " + std::to_string(p.groups) +
                 " and inner " + std::to_string(p.inner) + " disagree with row_len " +
                 std::to_string(p.row_len));
  }
  if (numel == 0) return;
  contiguous("the output", buffers[0], numel, p.out_dtype, check);
  contiguous("the input", buffers[1], numel, p.in_dtype, check);
  const std::int64_t params = by_channel ? p.channels : p.row_len;
  auto optional = [&](std::size_t k, bool wanted, const char* label) {
    if (!wanted) return;
    if (k >= buffers.size()) check.fail(std::string(label) + " is not bound");
    contiguous(label, buffers[k], params, p.param_dtype, check);
  };
  optional(2, p.has_weight != 0, "the weight");
  optional(3, p.has_bias != 0, "the bias");
  optional(4, batch, "the running mean");
  optional(5, batch, "the running variance");
}

bool half_or_float(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32;
}

// The rows variant (CUDA/HIP norm_rows_fast.cu) holds layer/rms norm rows in registers; its
// operands start at element 0 of 16-byte aligned allocations (every backend's).
std::string variant_refusal(std::int32_t variant, const abi::NormParams& p, int) {
  if (variant != abi::kNormRows) return {};
  if (p.op != abi::kNorm_layer_norm && p.op != abi::kNorm_rms_norm)
    return "the row kernel has no " + op_name(p.op);
  if (p.rows < 1 || p.row_len < 1) return "there is no row to normalize";
  const DType t = DType(p.in_dtype), acc = DType(p.accumulate_dtype);
  const bool affine = p.has_weight != 0 || p.has_bias != 0;
  if (DType(p.out_dtype) != t || (affine && DType(p.param_dtype) != t))
    return "the row kernel keeps one dtype for input, output and parameters";
  if (!((half_or_float(t) && half_or_float(acc)) || (t == DType::kFloat64 && acc == t)))
    return "the row kernel accumulates only in the input's usual dtype";
  return {};
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input"},        {"weight"},
                                   {"bias"},      {"running_mean"}, {"running_var"}};

}  // namespace

extern const FamilySpec norm_family{KernelFamily::kNorm,
                                    "norm",
                                    sizeof(abi::NormParams),
                                    kBuffers,
                                    kVariants,
                                    field_of<abi::NormParams, &abi::NormParams::op>,
                                    field_of<abi::NormParams, &abi::NormParams::variant>,
                                    op_name,
                                    validate_bytes<abi::NormParams, validate>,
                                    refusal_bytes<abi::NormParams, variant_refusal>,
                                    set_field<abi::NormParams, &abi::NormParams::variant>,
                                    describe_common_fault};

}  // namespace nbx::families
