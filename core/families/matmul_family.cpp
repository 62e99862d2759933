// The matmul family (abi::MatmulParams): out[b] = alpha · A[b] @ B[b] + beta · addend[b]
// over broadcast batches; buffers [0] out, [1] A, [2] B, [3] addend (when has_addend).
#include <string>

#include "core/dtype.hpp"
#include "core/families/family_spec_builder.hpp"

namespace nbx::families {
namespace {

std::string op_name(std::int32_t) {
  return "matmul";
}

constexpr std::string_view kVariants[] = {"tiled", "blas", "coopmat"};

// A batch of rows × cols matrices from `offset`, with a row and a column stride.
void matrix(const abi::MatmulParams& p, const char* label, std::int64_t offset,
            const std::int64_t* batch_strides, std::int64_t rows, std::int64_t cols,
            std::int64_t row_stride, std::int64_t col_stride, std::int32_t dtype,
            const KernelBuffer& b, const LaunchCheck& check) {
  check.view(label, offset)
      .dims(p.batch_ndim, p.batch_sizes, batch_strides)
      .dim(rows, row_stride)
      .dim(cols, col_stride)
      .inside(b, dtype);
}

void validate(const abi::MatmulParams& p, std::span<const KernelBuffer> buffers,
              const LaunchCheck& check) {
  if (p.variant < 0 || std::size_t(p.variant) >= std::size(kVariants))
    check.fail("unknown variant " + std::to_string(p.variant));
  check.require(p.has_addend == 0 || p.has_addend == 1, "has_addend is neither 0 nor 1");
  check.buffer_count(buffers.size(), p.has_addend ? 4 : 3);
  check.count(p.batch_ndim, abi::kMaxDims, "batch_ndim");
  if (p.m < 0 || p.n < 0 || p.k < 0) check.fail("negative m, n or k");
  const std::int64_t batch = check.product(p.batch_ndim, p.batch_sizes, "the batch sizes");
  if (batch != p.batch) check.fail("batch disagrees with the batch sizes");
  check.dtype(p.a_dtype, "A and B");
  check.dtype(p.out_dtype, "the output");
  check.dtype(p.accumulate_dtype, "the accumulate dtype");
  if (p.has_addend) check.dtype(p.addend_dtype, "the addend");
  check.require(DType(p.a_dtype) != DType::kBool, "A and B are bool");
  check.require(is_floating(DType(p.a_dtype)) == is_floating(DType(p.out_dtype)),
                "a floating product with an integer output, or the reverse");
  matrix(p, "the output", p.out_offset, p.out_batch_strides, p.m, p.n, p.out_row_stride,
         p.out_col_stride, p.out_dtype, buffers[0], check);
  if (p.m > 0 && p.n > 0) {
    matrix(p, "A", p.a_offset, p.a_batch_strides, p.m, p.k, p.a_row_stride, p.a_col_stride,
           p.a_dtype, buffers[1], check);
    matrix(p, "B", p.b_offset, p.b_batch_strides, p.k, p.n, p.b_row_stride, p.b_col_stride,
           p.a_dtype, buffers[2], check);
  }
  // With beta 0 the addend is never read (PyTorch: NaN in it does not propagate).
  if (p.has_addend && p.beta != 0)
    matrix(p, "the addend", p.addend_offset, p.addend_batch_strides, p.m, p.n, p.addend_row_stride,
           p.addend_col_stride, p.addend_dtype, buffers[3], check);
}

// The cooperative-matrix variant (Vulkan matmul_coopmat.comp) is built for float16
// fragments (glslc has no bfloat16 type), accumulating into float16 or float32.
std::string variant_refusal(std::int32_t variant, const abi::MatmulParams& p, int) {
  if (variant != abi::kMatmulCoopMatrix) return {};
  const auto half_or_float = [](std::int32_t t) {
    return DType(t) == DType::kFloat16 || DType(t) == DType::kFloat32;
  };
  if (DType(p.a_dtype) != DType::kFloat16 || !half_or_float(p.out_dtype) ||
      (p.has_addend && p.beta != 0 && !half_or_float(p.addend_dtype)))
    return "the cooperative-matrix kernel multiplies float16 operands into float16 or float32";
  return {};
}

constexpr BufferRole kBuffers[] = {{"out", true}, {"A"}, {"B"}, {"addend"}};

}  // namespace

extern const FamilySpec matmul_family{KernelFamily::kMatmul,
                                      "matmul",
                                      sizeof(abi::MatmulParams),
                                      kBuffers,
                                      kVariants,
                                      no_field,
                                      field_of<abi::MatmulParams, &abi::MatmulParams::variant>,
                                      op_name,
                                      validate_bytes<abi::MatmulParams, validate>,
                                      refusal_bytes<abi::MatmulParams, variant_refusal>,
                                      set_field<abi::MatmulParams, &abi::MatmulParams::variant>,
                                      describe_common_fault};

}  // namespace nbx::families
