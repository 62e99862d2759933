#include <doctest/doctest.h>

#include "core/dtype.hpp"
#include "core/errors.hpp"

using namespace nbx;

namespace {
DType tensor_tensor(DType a, DType b) {
  PromotionOperand ops[] = {{a, OperandKind::kTensor}, {b, OperandKind::kTensor}};
  return result_type(ops);
}
DType tensor_scalar(DType a, DType scalar) {
  PromotionOperand ops[] = {{a, OperandKind::kTensor}, {scalar, OperandKind::kScalar}};
  return result_type(ops);
}
DType tensor_zero_dim(DType a, DType b) {
  PromotionOperand ops[] = {{a, OperandKind::kTensor}, {b, OperandKind::kZeroDimTensor}};
  return result_type(ops);
}
}  // namespace

TEST_CASE("dtype names, sizes and parsing round-trip") {
  for (DType t : kAllDTypes) CHECK(parse_dtype(dtype_name(t)) == t);
  CHECK(dtype_size(bool_) == 1);
  CHECK(dtype_size(bfloat16) == 2);
  CHECK(dtype_size(int64) == 8);
  CHECK(parse_dtype("bf16") == bfloat16);
  CHECK(parse_dtype("half") == float16);
  CHECK_THROWS_AS(parse_dtype("float8"), InvalidArgument);
}

// The full promote_types table for our ten dtypes, transcribed from torch.promote_types
// (rows and columns in the order b1 i8 u8 i16 i32 i64 f16 bf16 f32 f64).
TEST_CASE("promote_types matches PyTorch's table") {
  const DType b = bool_, i1 = int8, u1 = uint8, i2 = int16, i4 = int32, i8 = int64, f2 = float16,
              bf = bfloat16, f4 = float32, f8 = float64;
  const DType table[10][10] = {
      /* b1 */ {b, i1, u1, i2, i4, i8, f2, bf, f4, f8},
      /* i8 */ {i1, i1, i2, i2, i4, i8, f2, bf, f4, f8},
      /* u8 */ {u1, i2, u1, i2, i4, i8, f2, bf, f4, f8},
      /* i16 */ {i2, i2, i2, i2, i4, i8, f2, bf, f4, f8},
      /* i32 */ {i4, i4, i4, i4, i4, i8, f2, bf, f4, f8},
      /* i64 */ {i8, i8, i8, i8, i8, i8, f2, bf, f4, f8},
      /* f16 */ {f2, f2, f2, f2, f2, f2, f2, f4, f4, f8},
      /* bf16 */ {bf, bf, bf, bf, bf, bf, f4, bf, f4, f8},
      /* f32 */ {f4, f4, f4, f4, f4, f4, f4, f4, f4, f8},
      /* f64 */ {f8, f8, f8, f8, f8, f8, f8, f8, f8, f8},
  };
  for (int r = 0; r < 10; ++r)
    for (int c = 0; c < 10; ++c) {
      CAPTURE(r);
      CAPTURE(c);
      CHECK(promote_types(kAllDTypes[r], kAllDTypes[c]) == table[r][c]);
      CHECK(tensor_tensor(kAllDTypes[r], kAllDTypes[c]) == table[r][c]);
    }
}

TEST_CASE("weak scalars only raise the category") {
  CHECK(tensor_scalar(float16, int64) == float16);    // t_f16 + 2
  CHECK(tensor_scalar(float16, float64) == float16);  // t_f16 + 2.5
  CHECK(tensor_scalar(int8, int64) == int8);          // t_i8 + 2
  CHECK(tensor_scalar(int32, float64) == float32);    // t_i32 + 2.5 → default float
  CHECK(tensor_scalar(int64, float64) == float32);
  CHECK(tensor_scalar(bool_, int64) == int64);  // t_bool + 2
  CHECK(tensor_scalar(bool_, float64) == float32);
  CHECK(tensor_scalar(uint8, bool_) == uint8);
  CHECK(tensor_scalar(bfloat16, float64) == bfloat16);
  CHECK(tensor_scalar(float64, float64) == float64);
}

TEST_CASE("0-d tensors rank between tensors and scalars") {
  CHECK(tensor_zero_dim(float32, float64) == float32);  // same category: the tensor decides
  CHECK(tensor_zero_dim(int32, float64) == float64);    // higher category: promote with it
  CHECK(tensor_zero_dim(int8, int64) == int8);
  CHECK(tensor_zero_dim(bool_, int32) == int32);
  PromotionOperand only_zero_dim[] = {{int16, OperandKind::kZeroDimTensor},
                                      {float64, OperandKind::kScalar}};
  CHECK(result_type(only_zero_dim) == float32);
  PromotionOperand two_zero_dim[] = {{int16, OperandKind::kZeroDimTensor},
                                     {int32, OperandKind::kZeroDimTensor}};
  CHECK(result_type(two_zero_dim) == int32);
  CHECK_THROWS_AS(result_type({}), InvalidArgument);
}
