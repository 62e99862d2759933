// The matrix-product wrappers: shape rules and the "matmul" launch (the plan: linalg_plan.cpp).
#include "core/ops/linalg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <vector>

#include "core/kernel_abi.hpp"
#include "core/ops/creation.hpp"
#include "core/ops/elementwise.hpp"
#include "core/ops/elementwise_launch.hpp"
#include "core/ops/inplace_write.hpp"

namespace nbx::ops {
namespace {

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

// One product as the kernel sees it: a is batch_a + [m, k], b is batch_b + [k, n] (both at
// least 2-d, 1-d operands already unsqueezed by views), `shapes` the user's shapes for messages.
struct Product {
  const char* name;
  Tensor a, b;
  std::string shapes;
  const Tensor* addend = nullptr;
  double alpha = 1, beta = 0;
  const MatmulPlan* plan = nullptr;  // plan_product's, made from the user's operands
  // An out= form's tensor, contiguous and aligned (product_result decides): written directly.
  const Tensor* into = nullptr;
};

Shape leading(const Shape& s, int keep_last) {
  Shape out;
  for (int d = 0; d + keep_last < s.size(); ++d) out.push_back(s[d]);
  return out;
}

void check_operands(const Product& p) {
  const std::string name = p.name;
  const Tensor* all[3] = {&p.a, &p.b, p.addend};
  for (const Tensor* t : all)
    if (t && !t->defined()) throw InvalidArgument(name, name + ": a tensor is undefined.");
  const DType dt = p.a.dtype();
  for (const Tensor* t : all) {
    if (!t) continue;
    if (t->dtype() != dt)
      throw InvalidArgument(name, name + ": the operands must share one dtype (got " +
                                      dtype_str(dt) + " and " + dtype_str(t->dtype()) + ").");
    if (!(t->device() == p.a.device()))
      throw InvalidArgument(name, name + ": the operands are on different devices (" +
                                      p.a.device().str() + " and " + t->device().str() + ").");
  }
  if (dt == DType::kBool) throw InvalidArgument(name, name + " is not defined for bool tensors.");
  if (!is_floating(dt))
    for (double s : {p.alpha, p.beta})
      if (s != std::trunc(s) || !std::isfinite(s))
        throw InvalidArgument(name, name + ": with " + dtype_str(dt) +
                                        " tensors alpha and beta must be integers (got alpha " +
                                        std::to_string(p.alpha) + ", beta " +
                                        std::to_string(p.beta) + ").");
}

void copy_batch_strides(std::int64_t* dst, const Strides& st, int n) {
  for (int d = 0; d < n; ++d) dst[d] = st[d];
}

// Whether dims (batch..., rows) of one operand walk as one dim of rows; sets `row` to its stride.
bool folds(const abi::MatmulParams& q, const std::int64_t* batch_strides, std::int64_t& row) {
  std::int64_t inner_size = q.m, inner_stride = row;
  for (int d = q.batch_ndim - 1; d >= 0; --d) {
    const std::int64_t size = q.batch_sizes[d];
    if (size == 1) continue;
    if (inner_size == 1) {
      inner_size = size, inner_stride = batch_strides[d];
      continue;
    }
    if (batch_strides[d] != inner_stride * inner_size) return false;
    inner_size *= size;
  }
  row = inner_stride;
  return true;
}

// A batch whose B is shared (batch stride 0) is one taller product when A, the output and
// the addend stack their batch entries as rows: [b, s, in] @ [in, out] is one (b*s) x in
// product, which both the tiled kernel and the vendor BLAS run faster than b small ones.
void fold_batch_into_rows(abi::MatmulParams& q) {
  if (q.batch_ndim == 0) return;
  for (int d = 0; d < q.batch_ndim; ++d)
    if (q.batch_sizes[d] != 1 && q.b_batch_strides[d] != 0) return;
  std::int64_t a_row = q.a_row_stride, out_row = q.out_row_stride, c_row = q.addend_row_stride;
  if (!folds(q, q.a_batch_strides, a_row) || !folds(q, q.out_batch_strides, out_row)) return;
  if (q.has_addend && !folds(q, q.addend_batch_strides, c_row)) return;
  q.a_row_stride = a_row, q.out_row_stride = out_row, q.addend_row_stride = c_row;
  q.m *= q.batch;
  q.batch = 1;
  q.batch_ndim = 0;
}

// Returns a fresh contiguous tensor of shape broadcast(batch_a, batch_b) + [m, n], or p.into
// viewed as that shape.
Tensor launch_product(const Product& p) {
  check_operands(p);
  const std::string name = p.name;
  const Shape& as = p.a.shape();
  const Shape& bs = p.b.shape();
  const std::int64_t m = as[as.size() - 2], k = as[as.size() - 1], n = bs[bs.size() - 1];
  if (bs[bs.size() - 2] != k)
    throw InvalidArgument(name, name + ": shapes " + p.shapes + " cannot be multiplied (" +
                                    std::to_string(k) + " columns against " +
                                    std::to_string(bs[bs.size() - 2]) + " rows).");
  Shape batch;
  try {
    batch = broadcast_shapes(leading(as, 2), leading(bs, 2), p.name);
  } catch (const InvalidArgument&) {
    throw InvalidArgument(name,
                          name + ": the batch dims of shapes " + p.shapes + " do not broadcast.");
  }
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);

  const Device& device = p.a.device();
  const MatmulPlan& plan = *p.plan;
  // The vendor BLAS reads row- or column-major matrices only; another layout is copied first.
  Tensor a_in = p.a, b_in = p.b;
  if (plan.variant == abi::kMatmulVendorBlas) {
    const auto last2 = [](const Tensor& t, int d) { return t.strides()[t.dim() - 2 + d]; };
    if (!detail::blas_layout(m, k, last2(a_in, 0), last2(a_in, 1))) a_in = a_in.contiguous();
    if (!detail::blas_layout(k, n, last2(b_in, 0), last2(b_in, 1))) b_in = b_in.contiguous();
  }

  abi::MatmulParams q{};
  q.a_dtype = static_cast<std::int32_t>(plan.in_dtype);
  q.out_dtype = static_cast<std::int32_t>(plan.out_dtype);
  q.accumulate_dtype = static_cast<std::int32_t>(plan.accumulate_dtype);
  q.tile_m = plan.tile_m, q.tile_n = plan.tile_n, q.tile_k = plan.tile_k;
  q.num_stages = plan.num_stages;
  q.variant = plan.variant;
  q.m = m, q.n = n, q.k = k;
  q.batch_ndim = batch.size();
  q.batch = numel(batch);
  copy_batch_strides(q.batch_sizes, batch, batch.size());
  q.alpha = p.alpha;
  q.beta = p.beta;
  // Each operand is read as out_shape's batch through broadcast strides (stride 0 on a
  // broadcast dim); its own last two dims give the row and column strides.
  const auto bind = [&](const Tensor& t, std::int64_t& offset, std::int64_t* batch_strides,
                        std::int64_t& row, std::int64_t& col) {
    const Strides st =
        broadcast_strides(leading(t.shape(), 2), leading(t.strides(), 2), batch, p.name);
    copy_batch_strides(batch_strides, st, batch.size());
    offset = t.offset();
    row = t.strides()[t.dim() - 2];
    col = t.strides()[t.dim() - 1];
  };
  bind(a_in, q.a_offset, q.a_batch_strides, q.a_row_stride, q.a_col_stride);
  bind(b_in, q.b_offset, q.b_batch_strides, q.b_row_stride, q.b_col_stride);

  Tensor out = p.into ? p.into->view(out_shape) : Tensor::empty(out_shape, plan.out_dtype, device);
  const Strides os = out.strides();
  q.out_offset = out.offset();
  copy_batch_strides(q.out_batch_strides, os, batch.size());
  q.out_row_stride = os[out_shape.size() - 2];
  q.out_col_stride = os[out_shape.size() - 1];
  KernelBuffer buffers[4] = {{out.storage()->memory(), true},
                             {a_in.storage()->memory(), false},
                             {b_in.storage()->memory(), false},
                             {}};
  if (p.addend) {
    Strides st;
    try {
      st = broadcast_strides(p.addend->shape(), p.addend->strides(), out_shape, p.name);
    } catch (const InvalidArgument&) {
      throw InvalidArgument(name, name + ": the input of shape " + to_string(p.addend->shape()) +
                                      " does not broadcast to the product's shape " +
                                      to_string(out_shape) + " (operands " + p.shapes + ").");
    }
    q.has_addend = 1;
    q.addend_dtype = static_cast<std::int32_t>(p.addend->dtype());
    q.addend_offset = p.addend->offset();
    copy_batch_strides(q.addend_batch_strides, st, batch.size());
    q.addend_row_stride = st[out_shape.size() - 2];
    q.addend_col_stride = st[out_shape.size() - 1];
    buffers[3] = {p.addend->storage()->memory(), false};
  }
  if (out.numel() == 0) return out;
  fold_batch_into_rows(q);
  KernelLaunch kl;
  kl.family = KernelFamily::kMatmul;
  kl.buffers = std::span<const KernelBuffer>(buffers, p.addend ? 4 : 3);
  kl.params = std::as_bytes(std::span<const abi::MatmulParams>(&q, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return out;
}

// A form's result of shape `shape` (the user's; the product's own has the 1-d operands'
// dims kept), fresh, or written into an out= tensor: checked for shape, dtype (exactly the
// product's), device and overlap with an operand — refused where they surely share elements
// (every input element is read many times, so no launch order makes writing over one safe).
// A contiguous out whose first byte is 16-byte aligned (what vendor BLAS kernels assume of a
// matrix) is written directly; another view, or one whose memory range only interleaves
// with an operand's, gets the product through a temporary and one copy.
Tensor product_result(Product p, const Shape& shape, const Tensor* out) {
  if (!out) return launch_product(p).view(shape);
  const std::string form = std::string(p.name) + "_out";
  detail::check_destination(form, *out, shape, p.plan->out_dtype, p.a.device(),
                            /*exact_dtype=*/true);
  detail::require_no_internal_overlap(form, *out);
  bool direct = out->is_contiguous() && (out->offset() * std::int64_t(out->itemsize())) % 16 == 0;
  const Tensor* const operands[] = {&p.a, &p.b, p.addend};
  for (const Tensor* t : operands) {
    const detail::Overlap o = t ? detail::overlap_of(*out, *t) : detail::Overlap::kNone;
    if (o == detail::Overlap::kSame || o == detail::Overlap::kPartial)
      throw InvalidArgument(form, form +
                                      ": unsupported operation: the out tensor shares memory "
                                      "with an operand of the product (shapes " +
                                      p.shapes + "). Please clone() the operand first.");
    direct = direct && o == detail::Overlap::kNone;
  }
  if (direct) {
    p.into = out;
    launch_product(p);
    return *out;
  }
  detail::copy_into(form, *out, launch_product(p).view(shape));
  return *out;
}

std::string two_shapes(const Tensor& a, const Tensor& b) {
  return to_string(a.shape()) + " and " + to_string(b.shape());
}

// The form's plan from its operands (all defined), on the device of `on`, the product's
// first matrix: the shape rules and dtypes as `nbx explain` checks them.
ProductPlan form_plan(const char* op, std::initializer_list<const Tensor*> operands,
                      const Tensor& on) {
  std::vector<Shape> shapes;
  std::vector<DType> dtypes;
  for (const Tensor* t : operands) {
    if (!t->defined()) throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
    shapes.push_back(t->shape());
    dtypes.push_back(t->dtype());
  }
  const Device& device = on.device();
  return plan_product(op, dtypes, shapes,
                      {device.capabilities(), device.str(), device.display_name(),
                       &device.context().backend_device()});
}

Tensor matmul_into(const Tensor* out, const Tensor& a, const Tensor& b) {
  const ProductPlan plan = form_plan("matmul", {&a, &b}, a);
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  return product_result({"matmul", a2, b2, two_shapes(a, b), nullptr, 1, 0, &plan.matmul},
                        plan.out_shape, out);
}

Tensor mm_into(const Tensor* out, const Tensor& a, const Tensor& b) {
  const ProductPlan plan = form_plan("mm", {&a, &b}, a);
  return product_result({"mm", a, b, two_shapes(a, b), nullptr, 1, 0, &plan.matmul}, plan.out_shape,
                        out);
}

Tensor mv_into(const Tensor* out, const Tensor& mat, const Tensor& vec) {
  const ProductPlan plan = form_plan("mv", {&mat, &vec}, mat);
  return product_result(
      {"mv", mat, vec.unsqueeze(1), two_shapes(mat, vec), nullptr, 1, 0, &plan.matmul},
      plan.out_shape, out);
}

Tensor bmm_into(const Tensor* out, const Tensor& a, const Tensor& b) {
  const ProductPlan plan = form_plan("bmm", {&a, &b}, a);
  return product_result({"bmm", a, b, two_shapes(a, b), nullptr, 1, 0, &plan.matmul},
                        plan.out_shape, out);
}

Tensor dot_into(const Tensor* out, const Tensor& a, const Tensor& b) {
  const ProductPlan plan = form_plan("dot", {&a, &b}, a);
  return product_result(
      {"dot", a.unsqueeze(0), b.unsqueeze(1), two_shapes(a, b), nullptr, 1, 0, &plan.matmul},
      plan.out_shape, out);
}

Tensor addmm_into(const Tensor* out, const Tensor& input, const Tensor& m1, const Tensor& m2,
                  double beta, double alpha) {
  const ProductPlan plan = form_plan("addmm", {&input, &m1, &m2}, m1);
  return product_result({"addmm", m1, m2, two_shapes(m1, m2), &input, alpha, beta, &plan.matmul},
                        plan.out_shape, out);
}

Tensor baddbmm_into(const Tensor* out, const Tensor& input, const Tensor& b1, const Tensor& b2,
                    double beta, double alpha) {
  const ProductPlan plan = form_plan("baddbmm", {&input, &b1, &b2}, b1);
  return product_result({"baddbmm", b1, b2, two_shapes(b1, b2), &input, alpha, beta, &plan.matmul},
                        plan.out_shape, out);
}

Tensor addmv_into(const Tensor* out, const Tensor& input, const Tensor& mat, const Tensor& vec,
                  double beta, double alpha) {
  const ProductPlan plan = form_plan("addmv", {&input, &mat, &vec}, mat);
  // The product is computed as a column; the input becomes one too.
  const Tensor column = input.dim() == 1 ? input.unsqueeze(1) : input;
  return product_result(
      {"addmv", mat, vec.unsqueeze(1), two_shapes(mat, vec), &column, alpha, beta, &plan.matmul},
      plan.out_shape, out);
}

// addr of bool tensors, as PyTorch computes it: (beta && input) || (alpha && vec1 ⊗ vec2),
// elementwise (no product kernel has bool). Shapes as the numeric form checks them.
Tensor bool_addr(const Tensor* out, const Tensor& input, const Tensor& vec1, const Tensor& vec2,
                 double beta, double alpha) {
  if (vec1.dim() != 1 || vec2.dim() != 1)
    throw InvalidArgument("addr", "addr: vec1 and vec2 must be 1-d, not " +
                                      std::to_string(vec1.dim()) + "-d and " +
                                      std::to_string(vec2.dim()) + "-d.");
  const Shape shape{vec1.shape()[0], vec2.shape()[0]};
  if (!(broadcast_shapes(input.shape(), shape, "addr") == shape))
    throw InvalidArgument("addr", "addr: the input of shape " + to_string(input.shape()) +
                                      " must broadcast to the outer product's " + to_string(shape) +
                                      ".");
  const Tensor none = ops::full(shape, false, DType::kBool, vec1.device());
  const Tensor outer = alpha != 0 ? ops::logical_and(vec1.unsqueeze(1), vec2.unsqueeze(0)) : none;
  const Tensor r = ops::logical_or(beta != 0 ? input.expand(shape) : none, outer);
  if (!out) return r;
  detail::check_destination("addr_out", *out, shape, DType::kBool, vec1.device(),
                            /*exact_dtype=*/true);
  detail::copy_into("addr_out", *out, r);
  return *out;
}

Tensor addr_into(const Tensor* out, const Tensor& input, const Tensor& vec1, const Tensor& vec2,
                 double beta, double alpha) {
  if (input.defined() && vec1.defined() && vec2.defined() && input.dtype() == DType::kBool &&
      vec1.dtype() == DType::kBool && vec2.dtype() == DType::kBool)
    return bool_addr(out, input, vec1, vec2, beta, alpha);
  const ProductPlan plan = form_plan("addr", {&input, &vec1, &vec2}, vec1);
  return product_result({"addr", vec1.unsqueeze(1), vec2.unsqueeze(0), two_shapes(vec1, vec2),
                         &input, alpha, beta, &plan.matmul},
                        plan.out_shape, out);
}

Tensor linear_into(const Tensor* out, const Tensor& x, const Tensor& weight,
                   const std::optional<Tensor>& bias) {
  const ProductPlan plan =
      bias ? form_plan("linear", {&x, &weight, &*bias}, x) : form_plan("linear", {&x, &weight}, x);
  const Tensor a = x.dim() == 1 ? x.unsqueeze(0) : x;
  const Tensor b = weight.dim() == 2 ? weight.transpose(0, 1) : weight.unsqueeze(1);
  // A 1-d weight makes a column; the bias must then broadcast to that column too.
  std::optional<Tensor> addend;
  if (bias) addend = weight.dim() == 1 && bias->dim() >= 1 ? bias->unsqueeze(-1) : *bias;
  return product_result({"linear", a, b, two_shapes(x, weight), addend ? &*addend : nullptr, 1.0,
                         addend ? 1.0 : 0.0, &plan.matmul},
                        plan.out_shape, out);
}

}  // namespace

Shape matmul_shape(const Shape& a, const Shape& b) {
  const std::string shapes = to_string(a) + " and " + to_string(b);
  if (a.size() == 0 || b.size() == 0)
    throw InvalidArgument("matmul",
                          "matmul: both operands need at least one dim (shapes " + shapes + ").");
  Shape a2 = a, b2 = b;
  if (a.size() == 1) a2.insert(0, 1);
  if (b.size() == 1) b2.push_back(1);
  if (a2[a2.size() - 1] != b2[b2.size() - 2])
    throw InvalidArgument("matmul", "matmul: shapes " + shapes + " cannot be multiplied (" +
                                        std::to_string(a2[a2.size() - 1]) + " columns against " +
                                        std::to_string(b2[b2.size() - 2]) + " rows).");
  Shape out;
  try {
    out = broadcast_shapes(leading(a2, 2), leading(b2, 2), "matmul");
  } catch (const InvalidArgument&) {
    throw InvalidArgument("matmul",
                          "matmul: the batch dims of shapes " + shapes + " do not broadcast.");
  }
  if (a.size() > 1) out.push_back(a2[a2.size() - 2]);
  if (b.size() > 1) out.push_back(b2[b2.size() - 1]);
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  return matmul_into(nullptr, a, b);
}
Tensor matmul_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  return matmul_into(&out, a, b);
}
Tensor mm(const Tensor& a, const Tensor& b) {
  return mm_into(nullptr, a, b);
}
Tensor mm_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  return mm_into(&out, a, b);
}
Tensor mv(const Tensor& mat, const Tensor& vec) {
  return mv_into(nullptr, mat, vec);
}
Tensor mv_out(const Tensor& out, const Tensor& mat, const Tensor& vec) {
  return mv_into(&out, mat, vec);
}
Tensor bmm(const Tensor& a, const Tensor& b) {
  return bmm_into(nullptr, a, b);
}
Tensor bmm_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  return bmm_into(&out, a, b);
}
Tensor dot(const Tensor& a, const Tensor& b) {
  return dot_into(nullptr, a, b);
}
Tensor dot_out(const Tensor& out, const Tensor& a, const Tensor& b) {
  return dot_into(&out, a, b);
}
Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta, double alpha) {
  return addmm_into(nullptr, input, m1, m2, beta, alpha);
}
Tensor addmm_out(const Tensor& out, const Tensor& input, const Tensor& m1, const Tensor& m2,
                 double beta, double alpha) {
  return addmm_into(&out, input, m1, m2, beta, alpha);
}
Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
  return baddbmm_into(nullptr, input, b1, b2, beta, alpha);
}
Tensor baddbmm_out(const Tensor& out, const Tensor& input, const Tensor& b1, const Tensor& b2,
                   double beta, double alpha) {
  return baddbmm_into(&out, input, b1, b2, beta, alpha);
}
Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  return addmv_into(nullptr, input, mat, vec, beta, alpha);
}
Tensor addmv_out(const Tensor& out, const Tensor& input, const Tensor& mat, const Tensor& vec,
                 double beta, double alpha) {
  return addmv_into(&out, input, mat, vec, beta, alpha);
}
Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta,
            double alpha) {
  return addr_into(nullptr, input, vec1, vec2, beta, alpha);
}
Tensor addr_out(const Tensor& out, const Tensor& input, const Tensor& vec1, const Tensor& vec2,
                double beta, double alpha) {
  return addr_into(&out, input, vec1, vec2, beta, alpha);
}
Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  return linear_into(nullptr, x, weight, bias);
}
Tensor linear_out(const Tensor& out, const Tensor& x, const Tensor& weight,
                  const std::optional<Tensor>& bias) {
  return linear_into(&out, x, weight, bias);
}

namespace detail {

bool blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) return true;
  return (rs == 1 || rows == 1) && (cols == 1 || cs >= rows);
}

}  // namespace detail

}  // namespace nbx::ops
