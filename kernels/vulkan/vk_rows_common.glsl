// What the row families (softmax.comp, norm.comp, scan.comp) share: the accumulate class
// ACC (float32, or float64 in NBX_CLS_D builds) with its codec, exp and log, and Knuth's
// TwoSum compensated addition (kernels/gpu/compensated_sum.cuh, the CUDA twin).
//
// `precise` keeps drivers from contracting or re-associating TwoSum, whose error term is
// exact only in this evaluation order. Once the sum is ±inf or NaN its rounding error means
// nothing (inf - inf would poison it): compensation stops and the total is the sum.
// Integer builds (NBX_CLS_L, scan.comp) get only NBX_ROW_OFFSET.

#if NBX_CLS_D
#define ACC double
#define ACC_INF double(kInf)
ACC acc_dec(int dt, uvec2 r) { return nbx_decD(dt, r); }
uvec2 acc_enc(int dt, ACC v) { return nbx_encD(dt, v); }
ACC acc_exp(ACC x) { return nbx_exp_d(x); }
ACC acc_log(ACC x) { return nbx_log_d(x); }
#elif NBX_CLS_F
#define ACC float
#define ACC_INF kInf
ACC acc_dec(int dt, uvec2 r) { return nbx_decF(dt, r); }
uvec2 acc_enc(int dt, ACC v) { return nbx_encF(dt, v); }
ACC acc_exp(ACC x) { return nbx_exp(x); }
ACC acc_log(ACC x) { return nbx_log(x); }
#endif

#ifdef ACC
bool acc_finite(ACC x) { return !isinf(x) && !isnan(x); }

void two_sum_add(inout ACC sum, inout ACC comp, ACC x, ACC x_comp) {
  precise ACC s = sum + x;
  precise ACC bb = s - sum;
  precise ACC err = (sum - (s - bb)) + (x - bb);
  if (acc_finite(s)) comp += x_comp + err;
  sum = s;
}

ACC compensated_total(ACC sum, ACC comp) { return acc_finite(sum) ? sum + comp : sum; }
#endif

// Element offset of row `row` (row-major over the outer dims) for one operand; sizes and
// strides arrive as uvec4 pairs (dim d at [d / 4][d % 4]).
#define NBX_ROW_OFFSET(OUT, row, ndim, sizes, strides, base)  \
  {                                                           \
    uint rest_ = (row);                                       \
    OUT = (base);                                             \
    for (int d_ = int(ndim) - 1; d_ >= 0; --d_) {             \
      uint n_ = sizes[d_ >> 2][d_ & 3];                       \
      OUT += (rest_ % n_) * strides[d_ >> 2][d_ & 3];         \
      rest_ /= n_;                                            \
    }                                                         \
  }
