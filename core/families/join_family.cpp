// The join family (abi::JoinParams): cat's inputs, up to kJoinMaxInputs of one dtype, each
// copied bit for bit into its slice of the output along the cat dim in one launch; buffers
// [0] out, [1 + k] input k. The strided variant serves any block; the flat variant rows that
// the output and every input hold contiguously (the wrapper folds a cat into that form
// wherever the layouts allow). Nothing is indexed by data, so it has no faults.
#include <iterator>
#include <string>

#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"cat"};

std::string op_name(std::int32_t code) {
  return name_from_list("join", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"strided", "flat"};

void validate(const abi::JoinParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op != abi::kJoin_cat) check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  if (p.count < 1 || p.count > abi::kJoinMaxInputs)
    check.fail("count " + std::to_string(p.count) + " is not in [1, " +
               std::to_string(abi::kJoinMaxInputs) + "]");
  check.buffer_count(buffers.size(), std::size_t(p.count) + 1);
  if (p.ndim < 1 || p.ndim > abi::kMaxDims)
    check.fail("ndim " + std::to_string(p.ndim) + " is not in [1, " +
               std::to_string(abi::kMaxDims) + "]");
  if (p.dim < 0 || p.dim >= p.ndim)
    check.fail("dim " + std::to_string(p.dim) + " is not in [0, ndim)");
  check.dtype(p.dtype, "the inputs");
  check.product(p.ndim, p.sizes, "the sizes");
  check.view("the output", p.out_offset)
      .dims(p.ndim, p.sizes, p.out_strides)
      .inside(buffers[0], p.dtype);
  std::int64_t sizes[abi::kMaxDims];
  for (int d = 0; d < p.ndim; ++d) sizes[d] = p.sizes[d];
  for (int k = 0; k < p.count; ++k) {
    const abi::JoinInput& in = p.inputs[k];
    // Each input writes only inside the output's dim: [at, at + extent) within [0, size).
    if (in.extent < 0 || in.at < 0 || in.at > p.sizes[p.dim] - in.extent)
      check.fail("input " + std::to_string(k) + "'s slice [" + std::to_string(in.at) + ", " +
                 std::to_string(in.at) + " + " + std::to_string(in.extent) +
                 ") is not inside the output's " + std::to_string(p.sizes[p.dim]) +
                 " positions along dim");
    sizes[p.dim] = in.extent;
    check.view("an input", in.offset)
        .dims(p.ndim, sizes, in.strides)
        .inside(buffers[1 + k], p.dtype);
  }
}

// The flat variant (join_kernels.cu, join.comp; abi::kJoinFlat): a row (dim 0) of every
// operand is one run of elements with stride 1 along dim 1, so the kernel copies it as bytes;
// a run of at most one element has no stride to speak of.
std::string refusal(std::int32_t variant, const abi::JoinParams& p, int) {
  if (variant != abi::kJoinFlat) return {};
  if (p.ndim != 2 || p.dim != 1) return "the block is not folded to rows (ndim 2, dim 1)";
  if (p.sizes[1] > 1 && p.out_strides[1] != 1)
    return "the output does not run along dim 1 with stride 1";
  for (int k = 0; k < p.count && k < abi::kJoinMaxInputs; ++k)
    if (p.inputs[k].extent > 1 && p.inputs[k].strides[1] != 1)
      return "input " + std::to_string(k) + " does not run along dim 1 with stride 1";
  return {};
}

// Out, then the inputs (every launch binds count + 1 of them).
constexpr BufferRole kBuffers[] = {{"out", true}, {"input"}, {"input"}, {"input"}, {"input"},
                                   {"input"},     {"input"}, {"input"}, {"input"}, {"input"},
                                   {"input"},     {"input"}, {"input"}, {"input"}, {"input"},
                                   {"input"},     {"input"}};
static_assert(std::size(kBuffers) == 1 + abi::kJoinMaxInputs);

}  // namespace

extern const FamilySpec join_family{KernelFamily::kJoin,
                                    "join",
                                    sizeof(abi::JoinParams),
                                    kBuffers,
                                    kVariants,
                                    field_of<abi::JoinParams, &abi::JoinParams::op>,
                                    field_of<abi::JoinParams, &abi::JoinParams::variant>,
                                    op_name,
                                    validate_bytes<abi::JoinParams, validate>,
                                    refusal_bytes<abi::JoinParams, refusal>,
                                    set_field<abi::JoinParams, &abi::JoinParams::variant>,
                                    describe_common_fault};

}  // namespace nbx::families
