// The matrix-product wrappers: shape rules and the "matmul" launch (the plan: linalg_plan.cpp).
#include "core/ops/linalg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/kernel_abi.hpp"
#include "core/ops/elementwise_launch.hpp"

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

// A matrix of rows x cols with strides rs, cs is row- or column-major: one unit stride (any
// stride on a dim of size 1) and rows (columns) that do not overlap.
bool blas_layout(std::int64_t rows, std::int64_t cols, std::int64_t rs, std::int64_t cs) {
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= cols)) return true;
  return (rs == 1 || rows == 1) && (cols == 1 || cs >= rows);
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

// Returns a fresh contiguous tensor of shape broadcast(batch_a, batch_b) + [m, n].
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
  for (const Tensor* t : {&p.a, p.addend})
    if (t) detail::require_dtype_support(name, t->dtype(), device);
  BackendDevice& backend = device.context().backend_device();
  const MatmulPlan plan = plan_matmul(p.a.dtype(), device.capabilities(), name, &backend);
  detail::require_dtype_support(name, plan.out_dtype, device);
  // The vendor BLAS reads row- or column-major matrices only; another layout is copied first.
  Tensor a_in = p.a, b_in = p.b;
  if (plan.variant == abi::kMatmulVendorBlas) {
    const auto last2 = [](const Tensor& t, int d) { return t.strides()[t.dim() - 2 + d]; };
    if (!blas_layout(m, k, last2(a_in, 0), last2(a_in, 1))) a_in = a_in.contiguous();
    if (!blas_layout(k, n, last2(b_in, 0), last2(b_in, 1))) b_in = b_in.contiguous();
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

  Tensor out = Tensor::empty(out_shape, plan.out_dtype, device);
  const Strides os = out.strides();
  q.out_offset = 0;
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
  kl.kernel = "matmul";
  kl.buffers = std::span<const KernelBuffer>(buffers, p.addend ? 4 : 3);
  kl.params = std::as_bytes(std::span<const abi::MatmulParams>(&q, 1));
  DeviceContext& ctx = device.context();
  std::lock_guard lock(ctx.launch_mutex());
  ctx.backend_device().launch(kl);
  return out;
}

std::string two_shapes(const Tensor& a, const Tensor& b) {
  return to_string(a.shape()) + " and " + to_string(b.shape());
}

void require_rank(const char* op, const Tensor& t, int rank, const char* what) {
  if (!t.defined()) throw InvalidArgument(op, std::string(op) + ": a tensor is undefined.");
  if (t.dim() != rank)
    throw InvalidArgument(op, std::string(op) + ": " + what + " must be " + std::to_string(rank) +
                                  "-d (got shape " + to_string(t.shape()) + ").");
}

// Drops the unit dims that 1-d operands were given: a row (dim -2) and/or a column (-1).
Tensor squeeze_vector_dims(const Tensor& out, bool drop_row, bool drop_col) {
  Shape s = out.shape();
  if (drop_col) s.erase(s.size() - 1);
  if (drop_row) s.erase(s.size() - (drop_col ? 1 : 2));
  return out.view(s);
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
  if (!a.defined() || !b.defined())
    throw InvalidArgument("matmul", "matmul: a tensor is undefined.");
  const Shape expected = matmul_shape(a.shape(), b.shape());
  const Tensor a2 = a.dim() == 1 ? a.unsqueeze(0) : a;
  const Tensor b2 = b.dim() == 1 ? b.unsqueeze(1) : b;
  const Tensor out = launch_product({"matmul", a2, b2, two_shapes(a, b)});
  return out.view(expected);
}

Tensor mm(const Tensor& a, const Tensor& b) {
  require_rank("mm", a, 2, "the first operand");
  require_rank("mm", b, 2, "the second operand");
  return launch_product({"mm", a, b, two_shapes(a, b)});
}

Tensor mv(const Tensor& mat, const Tensor& vec) {
  require_rank("mv", mat, 2, "the matrix");
  require_rank("mv", vec, 1, "the vector");
  return squeeze_vector_dims(launch_product({"mv", mat, vec.unsqueeze(1), two_shapes(mat, vec)}),
                             false, true);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  require_rank("bmm", a, 3, "the first operand");
  require_rank("bmm", b, 3, "the second operand");
  if (a.shape()[0] != b.shape()[0])
    throw InvalidArgument("bmm", "bmm: shapes " + two_shapes(a, b) +
                                     " have different batch sizes (bmm does not broadcast).");
  return launch_product({"bmm", a, b, two_shapes(a, b)});
}

Tensor dot(const Tensor& a, const Tensor& b) {
  require_rank("dot", a, 1, "the first operand");
  require_rank("dot", b, 1, "the second operand");
  if (a.shape()[0] != b.shape()[0])
    throw InvalidArgument("dot", "dot: shapes " + two_shapes(a, b) + " have different lengths.");
  return launch_product({"dot", a.unsqueeze(0), b.unsqueeze(1), two_shapes(a, b)}).view(Shape{});
}

Tensor addmm(const Tensor& input, const Tensor& m1, const Tensor& m2, double beta, double alpha) {
  require_rank("addmm", m1, 2, "the first matrix");
  require_rank("addmm", m2, 2, "the second matrix");
  return launch_product({"addmm", m1, m2, two_shapes(m1, m2), &input, alpha, beta});
}

Tensor baddbmm(const Tensor& input, const Tensor& b1, const Tensor& b2, double beta, double alpha) {
  require_rank("baddbmm", b1, 3, "the first batch");
  require_rank("baddbmm", b2, 3, "the second batch");
  if (b1.shape()[0] != b2.shape()[0])
    throw InvalidArgument("baddbmm",
                          "baddbmm: shapes " + two_shapes(b1, b2) + " have different batch sizes.");
  return launch_product({"baddbmm", b1, b2, two_shapes(b1, b2), &input, alpha, beta});
}

Tensor addmv(const Tensor& input, const Tensor& mat, const Tensor& vec, double beta, double alpha) {
  require_rank("addmv", mat, 2, "the matrix");
  require_rank("addmv", vec, 1, "the vector");
  if (!input.defined()) throw InvalidArgument("addmv", "addmv: the input is undefined.");
  if (input.dim() > 1)
    throw InvalidArgument("addmv", "addmv: the input of shape " + to_string(input.shape()) +
                                       " does not broadcast to the product's shape [" +
                                       std::to_string(mat.shape()[0]) + "].");
  // The product is computed as a column; the input becomes one too.
  const Tensor column = input.dim() == 1 ? input.unsqueeze(1) : input;
  return squeeze_vector_dims(
      launch_product({"addmv", mat, vec.unsqueeze(1), two_shapes(mat, vec), &column, alpha, beta}),
      false, true);
}

Tensor addr(const Tensor& input, const Tensor& vec1, const Tensor& vec2, double beta,
            double alpha) {
  require_rank("addr", vec1, 1, "the first vector");
  require_rank("addr", vec2, 1, "the second vector");
  return launch_product(
      {"addr", vec1.unsqueeze(1), vec2.unsqueeze(0), two_shapes(vec1, vec2), &input, alpha, beta});
}

Tensor linear(const Tensor& x, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (!x.defined() || !weight.defined())
    throw InvalidArgument("linear", "linear: a tensor is undefined.");
  if (x.dim() == 0 || weight.dim() == 0 || weight.dim() > 2)
    throw InvalidArgument("linear",
                          "linear: the input must be at least 1-d and the weight 1-d or "
                          "2-d (shapes " +
                              two_shapes(x, weight) + ").");
  const Tensor a = x.dim() == 1 ? x.unsqueeze(0) : x;
  const Tensor b = weight.dim() == 2 ? weight.transpose(0, 1) : weight.unsqueeze(1);
  if (a.shape()[a.dim() - 1] != b.shape()[0])
    throw InvalidArgument("linear", "linear: shapes " + two_shapes(x, weight) +
                                        " cannot be multiplied (the input has " +
                                        std::to_string(a.shape()[a.dim() - 1]) +
                                        " features, the weight " + std::to_string(b.shape()[0]) +
                                        ").");
  const std::string shapes = two_shapes(x, weight);
  // A 1-d weight makes a column; the bias must then broadcast to that column too.
  std::optional<Tensor> addend;
  if (bias) addend = weight.dim() == 1 && bias->dim() >= 1 ? bias->unsqueeze(-1) : *bias;
  const Tensor out = launch_product(
      {"linear", a, b, shapes, addend ? &*addend : nullptr, 1.0, addend ? 1.0 : 0.0});
  return squeeze_vector_dims(out, x.dim() == 1, weight.dim() == 1);
}

}  // namespace nbx::ops
