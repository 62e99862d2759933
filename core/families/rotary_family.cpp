// The rotary family (abi::RotaryParams): rotary position embedding in place on q and k, one
// work item per (token, head, pair); buffers [0] q, [1] k (empty without k), [2] positions,
// [3] cos_sin_cache. A position outside [0, max_position) is a device fault, decoded here;
// every view is checked against its buffer, so the kernels read out of range only through
// a position, which they check.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"rotary_embedding"};

std::string op_name(std::int32_t code) {
  return name_from_list("rotary", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"pairs"};

bool is_float(std::int32_t code) {
  const DType t = DType(code);
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}

void validate(const abi::RotaryParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op != abi::kRotary_rotary_embedding) check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant != abi::kRotaryPairs) check.fail("unknown variant " + std::to_string(p.variant));
  check.buffer_count(buffers.size(), 4);
  check.count(p.token_ndim, abi::kMaxDims, "token_ndim");
  check.dtype(p.dtype, "q");
  check.dtype(p.cache_dtype, "the cache");
  if (!is_float(p.dtype))
    check.fail("the q/k dtype code " + std::to_string(p.dtype) + " is not a float dtype");
  if (p.cache_dtype != p.dtype && p.cache_dtype != std::int32_t(DType::kFloat32))
    check.fail("the cache dtype code " + std::to_string(p.cache_dtype) +
               " is neither float32 nor q's");
  if (p.pos_dtype != std::int32_t(DType::kInt32) && p.pos_dtype != std::int32_t(DType::kInt64))
    check.fail("the positions dtype code " + std::to_string(p.pos_dtype) +
               " is not int32 or int64");
  if (p.style != abi::kRotaryHalf && p.style != abi::kRotaryInterleaved)
    check.fail("unknown style " + std::to_string(p.style));
  if (p.has_k != 0 && p.has_k != 1) check.fail("has_k is not 0 or 1");
  if (!p.has_k && p.k_heads != 0) check.fail("k_heads is not 0 without k");
  if (p.rotary_dim < 2 || p.rotary_dim % 2 != 0)
    check.fail("rotary_dim " + std::to_string(p.rotary_dim) + " is not even and positive");
  if (p.max_position < 0)
    check.fail("max_position " + std::to_string(p.max_position) + " is negative");
  const std::int64_t tokens = check.product(p.token_ndim, p.token_sizes, "the token sizes");
  if (tokens != p.tokens)
    check.fail("tokens " + std::to_string(p.tokens) + " is not the product of the token sizes (" +
               std::to_string(tokens) + ")");
  check.count(p.q_heads, std::int64_t(1) << 31, "q_heads");
  check.count(p.k_heads, std::int64_t(1) << 31, "k_heads");
  // The work items the kernels number: tokens · heads · pairs must not overflow.
  const std::int64_t work[3] = {p.tokens, p.q_heads + p.k_heads, p.rotary_dim / 2};
  check.product(3, work, "the work items");
  check.view("q", p.q_offset)
      .dims(p.token_ndim, p.token_sizes, p.q_token_strides)
      .dim(p.q_heads, p.q_head_stride)
      .dim(p.rotary_dim, p.q_dim_stride)
      .inside(buffers[0], p.dtype);
  if (p.has_k)
    check.view("k", p.k_offset)
        .dims(p.token_ndim, p.token_sizes, p.k_token_strides)
        .dim(p.k_heads, p.k_head_stride)
        .dim(p.rotary_dim, p.k_dim_stride)
        .inside(buffers[1], p.dtype);
  check.view("the positions", p.pos_offset)
      .dims(p.token_ndim, p.token_sizes, p.pos_strides)
      .inside(buffers[2], p.pos_dtype);
  // Every row an in-range position can pick; an empty cache is never read (every position
  // faults).
  if (p.tokens > 0 && p.q_heads + p.k_heads > 0)
    check.view("the cache", p.cache_offset)
        .dim(p.max_position, p.cache_row_stride)
        .dim(p.rotary_dim, p.cache_col_stride)
        .inside(buffers[3], p.cache_dtype);
}

constexpr BufferRole kBuffers[] = {{"q", true}, {"k", true}, {"positions"}, {"cos_sin_cache"}};

std::string describe_fault(const abi::FaultRecord& r) {
  if (r.code != abi::kFaultIndexOutOfRange) return describe_common_fault(r);
  return "position " + std::to_string(r.index) + " is out of range [0, " + std::to_string(r.bound) +
         ") at token " + std::to_string(r.position);
}

}  // namespace

extern const FamilySpec rotary_family{KernelFamily::kRotary,
                                      "rotary",
                                      sizeof(abi::RotaryParams),
                                      kBuffers,
                                      kVariants,
                                      field_of<abi::RotaryParams, &abi::RotaryParams::op>,
                                      field_of<abi::RotaryParams, &abi::RotaryParams::variant>,
                                      op_name,
                                      validate_bytes<abi::RotaryParams, validate>,
                                      serves_all,
                                      set_field<abi::RotaryParams, &abi::RotaryParams::variant>,
                                      describe_fault};

}  // namespace nbx::families
