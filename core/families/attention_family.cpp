// The attention family (abi::AttentionParams): fused scaled-dot-product attention with an
// online softmax; buffers [0] out, [1] q, [2] k, [3] v, [4] workspace (split_kv). Every view
// is checked against its buffer here, so the kernels index q, k, v and out freely within
// [batch, heads, rows, dim]; the variants' own contracts (tile sizes, dtypes, head dims, the
// 16-byte rows flash_mma's asynchronous copies need) are in `refusal`.
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

constexpr std::string_view kOpNames[] = {"scaled_dot_product_attention"};

std::string op_name(std::int32_t code) {
  return name_from_list("attention", kOpNames, code);
}

constexpr std::string_view kVariants[] = {"flash", "flash_mma", "split_kv", "cudnn"};

bool is_one_of(std::int64_t v, std::initializer_list<std::int64_t> set) {
  for (std::int64_t s : set)
    if (v == s) return true;
  return false;
}

bool half_type(std::int32_t code) {
  return code == std::int32_t(DType::kFloat16) || code == std::int32_t(DType::kBFloat16);
}

// q, k and v with contiguous rows starting on 16 bytes (2-byte dtypes).
bool rows_of_16_bytes(const abi::AttentionParams& p) {
  return abi::attention_rows_of_16_bytes(p.q_offset, p.q_strides, 2) &&
         abi::attention_rows_of_16_bytes(p.k_offset, p.k_strides, 2) &&
         abi::attention_rows_of_16_bytes(p.v_offset, p.v_strides, 2);
}

void validate(const abi::AttentionParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.op != abi::kAttention_sdpa) check.fail("unknown op code " + std::to_string(p.op));
  if (p.variant < abi::kAttentionFlash || p.variant > abi::kAttentionCudnn)
    check.fail("unknown variant " + std::to_string(p.variant));
  check.buffer_count(buffers.size(), 5);
  check.floating_dtype(p.dtype, "q");
  if (p.causal != 0 && p.causal != 1) check.fail("causal is not 0 or 1");
  check.count(p.block_rows, 256, "block_rows");
  check.count(p.block_keys, 256, "block_keys");
  if (p.block_rows < 1 || p.block_keys < 1) check.fail("block_rows and block_keys must be >= 1");
  check.count(p.splits, std::int64_t(1) << 16, "splits");
  if (p.splits < 1) check.fail("splits must be >= 1");
  check.count(p.head_dim, abi::kAttentionMaxDim, "head_dim");
  check.count(p.value_dim, abi::kAttentionMaxDim, "value_dim");
  if (p.head_dim < 1 || p.value_dim < 1) check.fail("head_dim and value_dim must be >= 1");
  check.count(p.q_heads, std::int64_t(1) << 31, "q_heads");
  check.count(p.kv_heads, std::int64_t(1) << 31, "kv_heads");
  if (p.kv_heads < 1 || p.q_heads % p.kv_heads != 0)
    check.fail("kv_heads " + std::to_string(p.kv_heads) + " does not divide q_heads " +
               std::to_string(p.q_heads));
  if (!(p.scale > 0 && p.scale < 1e300)) check.fail("scale is not positive and finite");
  // Grid dims and row counts the kernels number in 32 bits.
  check.count(p.q_len, std::int64_t(1) << 31, "q_len");
  check.count(p.kv_len, std::int64_t(1) << 31, "kv_len");
  const std::int64_t rows[3] = {p.batch, p.q_heads, p.q_len};
  check.product(3, rows, "the query rows");
  if (p.causal && (p.causal_shift < -p.q_len || p.causal_shift > p.kv_len))
    check.fail("causal_shift " + std::to_string(p.causal_shift) + " lies outside [-q_len, kv_len]");
  // Each operand as [batch, heads, rows, dim] through its offset and four strides.
  const auto view4 = [&](const char* label, std::int64_t offset, const std::int64_t* strides,
                         std::int64_t heads, std::int64_t rows, std::int64_t dim,
                         const KernelBuffer& buffer) {
    check.view(label, offset)
        .dim(p.batch, strides[0])
        .dim(heads, strides[1])
        .dim(rows, strides[2])
        .dim(dim, strides[3])
        .inside(buffer, p.dtype);
  };
  view4("out", p.out_offset, p.out_strides, p.q_heads, p.q_len, p.value_dim, buffers[0]);
  view4("q", p.q_offset, p.q_strides, p.q_heads, p.q_len, p.head_dim, buffers[1]);
  view4("k", p.k_offset, p.k_strides, p.kv_heads, p.kv_len, p.head_dim, buffers[2]);
  view4("v", p.v_offset, p.v_strides, p.kv_heads, p.kv_len, p.value_dim, buffers[3]);
  if (p.variant == abi::kAttentionSplitKv) {
    if (p.split_len < 1 || p.splits * p.split_len < p.kv_len ||
        (p.splits - 1) * p.split_len >= std::max<std::int64_t>(p.kv_len, 1))
      check.fail("splits " + std::to_string(p.splits) + " of " + std::to_string(p.split_len) +
                 " keys do not cover kv_len " + std::to_string(p.kv_len) + " with none empty");
    const std::int64_t words =
        abi::attention_workspace_words(p.splits, p.batch, p.q_heads, p.q_len, p.value_dim);
    check.view("the workspace", 0).dim(words, 1).inside(buffers[4], std::int32_t(DType::kFloat32));
  } else if (p.splits != 1) {
    check.fail("splits is " + std::to_string(p.splits) + " outside split_kv");
  }
}

std::string refusal(std::int32_t variant, const abi::AttentionParams& p, int) {
  if (p.dtype == std::int32_t(DType::kFloat64))
    return "float64 is not computed by the fused kernels (the math path takes it)";
  switch (variant) {
    case abi::kAttentionFlash:
      if (!is_one_of(p.block_rows, {8, 16, 32, 64}))
        return "block_rows " + std::to_string(p.block_rows) + " is not 8, 16, 32 or 64";
      if (!is_one_of(p.block_keys, {16, 32}))
        return "block_keys " + std::to_string(p.block_keys) + " is not 16 or 32";
      return {};
    case abi::kAttentionFlashMma:
      if (!half_type(p.dtype)) return "the matrix units take float16 and bfloat16 only";
      if (p.head_dim != p.value_dim) return "head_dim and value_dim differ";
      if (p.head_dim > abi::kAttentionMmaMaxDim || p.head_dim % 8 != 0)
        return "head_dim " + std::to_string(p.head_dim) + " is not a multiple of 8 up to " +
               std::to_string(abi::kAttentionMmaMaxDim);
      if (!is_one_of(p.block_rows, {64, 128}) || p.block_keys != 64 ||
          (p.head_dim > 128 && p.block_rows != 64))
        return "the tile " + std::to_string(p.block_rows) + "x" + std::to_string(p.block_keys) +
               " is not 64x64 or 128x64 (64x64 above head_dim 128)";
      if (!rows_of_16_bytes(p))
        return "q, k and v need contiguous rows starting on 16 bytes (asynchronous copies)";
      return {};
    case abi::kAttentionSplitKv:
      if (p.q_len * (p.q_heads / p.kv_heads) > 16)
        return "more than 16 query rows a kv head (q_len x group)";
      return {};
    case abi::kAttentionCudnn:
      if (!half_type(p.dtype)) return "cuDNN's fused attention takes float16 and bfloat16 only";
      if (p.head_dim % 8 != 0 || p.value_dim % 8 != 0 || p.head_dim > abi::kAttentionCudnnMaxDim ||
          p.value_dim > abi::kAttentionCudnnMaxDim)
        return "head dims " + std::to_string(p.head_dim) + "/" + std::to_string(p.value_dim) +
               " are not multiples of 8 up to " + std::to_string(abi::kAttentionCudnnMaxDim);
      if (!rows_of_16_bytes(p)) return "q, k and v need contiguous rows starting on 16 bytes";
      if (p.kv_len < 1) return "no keys";
      // cuDNN's causal masks: top-left (shift 0) and bottom-right (shift kv_len - q_len),
      // the latter only without rows that see no key (q_len <= kv_len).
      if (p.causal && p.causal_shift != 0 && p.causal_shift != p.kv_len - p.q_len)
        return "a causal shift other than top-left (0) or bottom-right (kv_len - q_len)";
      if (p.causal && p.causal_shift < 0) return "bottom-right causal with q_len > kv_len";
      return {};
  }
  return "unknown variant";
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"q"}, {"k"}, {"v"}, {"workspace", true}};

std::string describe_fault(const abi::FaultRecord& r) {
  return describe_common_fault(r);
}

}  // namespace

extern const FamilySpec attention_family{
    KernelFamily::kAttention,
    "attention",
    sizeof(abi::AttentionParams),
    kBuffers,
    kVariants,
    field_of<abi::AttentionParams, &abi::AttentionParams::op>,
    field_of<abi::AttentionParams, &abi::AttentionParams::variant>,
    op_name,
    validate_bytes<abi::AttentionParams, validate>,
    refusal_bytes<abi::AttentionParams, refusal>,
    set_field<abi::AttentionParams, &abi::AttentionParams::variant>,
    describe_fault};

}  // namespace nbx::families
