// The fill family (abi::FillParams): values computed from each element's index (arange,
// linspace), a triangle of the input (triu, tril) or the identity (eye); buffers [0] out,
// [1] in (triu/tril).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"arange", "linspace", "triu", "tril", "eye"};

std::string op_name(std::int32_t code) {
  return name_from_list("fill", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"strided"};

void validate(const abi::FillParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  const bool triangle = p.op == abi::kFill_triu || p.op == abi::kFill_tril;
  const bool range = p.op == abi::kFill_arange || p.op == abi::kFill_linspace;
  const bool eye = p.op == abi::kFill_eye;
  if (!triangle && !range && !eye) check.fail("unknown op code " + std::to_string(p.op));
  check.buffer_count(buffers.size(), triangle ? 2 : 1);
  if (p.ndim < (triangle ? 2 : 1) || p.ndim > (triangle ? abi::kMaxDims : 1))
    if (!eye)
      check.fail("ndim " + std::to_string(p.ndim) +
                 (triangle ? " is outside [2, 8]" : " is not 1"));
  if (eye && p.ndim != 2) check.fail("ndim " + std::to_string(p.ndim) + " is not 2");
  check.dtype(p.out_dtype, "the output");
  check.dtype(p.in_dtype, "the input");
  if (triangle && p.in_dtype != p.out_dtype) check.fail("triu/tril keep the input's dtype");
  const std::int64_t n = check.product(p.ndim, p.sizes, "the sizes");
  if (n != p.numel)
    check.fail("numel " + std::to_string(p.numel) + " is not the product of the sizes (" +
               std::to_string(n) + ")");
  check.view("the output", p.out_offset)
      .dims(p.ndim, p.sizes, p.out_strides)
      .inside(buffers[0], p.out_dtype);
  if (triangle)
    check.view("the input", p.in_offset)
        .dims(p.ndim, p.sizes, p.in_strides)
        .inside(buffers[1], p.in_dtype);
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"input"}};

}  // namespace

extern const FamilySpec fill_family{KernelFamily::kFill,
                                    "fill",
                                    sizeof(abi::FillParams),
                                    kBuffers,
                                    kVariants,
                                    field_of<abi::FillParams, &abi::FillParams::op>,
                                    no_field,
                                    op_name,
                                    validate_bytes<abi::FillParams, validate>,
                                    serves_all,
                                    no_variant_field,
                                    describe_common_fault};

}  // namespace nbx::families
