// Validation and shape analysis for the CUDA/HIP elementwise family (see the header).
#include "kernels/gpu/elementwise_plan.hpp"

#include <cstdlib>
#include <string>
#include <string_view>

#include "core/errors.hpp"

namespace nbx::gpu {
namespace {

struct OpEntry {
  int code;
  int arity;
  const char* name;
};
constexpr OpEntry kOps[] = {
#define NBX_ELEMENTWISE_OP(name, code, arity) {code, arity, #name},
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
};

const OpEntry* find_op(int op) {
  for (const OpEntry& e : kOps)
    if (e.code == op) return &e;
  return nullptr;
}

[[noreturn]] void reject(const std::string& what) {
  throw InvalidArgument("elementwise", "elementwise launch: " + what + ".");
}

bool is_float_dtype(int d) {
  return d >= 6 && d <= 9;
}

bool is_bitwise(int op) {
  return op == abi::kOp_bitwise_not ||
         (op >= abi::kOp_bitwise_and && op <= abi::kOp_bitwise_right_shift);
}

void check_operand(const abi::ElementwiseParams& p, const abi::ElementwiseOperand& o,
                   const BoundBuffer& b, const std::string& label) {
  const int bytes = dtype_bytes(o.dtype);
  if (bytes == 0) reject(label + " has unknown dtype code " + std::to_string(o.dtype));
  if (o.is_scalar) return;
  if (b.address == nullptr) reject(label + " is a tensor but no buffer is bound to it");
  if (p.numel == 0) return;
  // The furthest element the view reaches must lie inside the buffer.
  std::int64_t last = o.offset;
  if (o.offset < 0) reject(label + " has a negative offset (" + std::to_string(o.offset) + ")");
  for (int d = 0; d < p.ndim; ++d) {
    if (o.strides[d] < 0) reject(label + " has a negative stride in dim " + std::to_string(d));
    last += (p.sizes[d] - 1) * o.strides[d];
  }
  const std::uint64_t end = std::uint64_t(last + 1) * std::uint64_t(bytes);
  if (end > b.bytes)
    reject(label + " reaches byte " + std::to_string(end) + " of a buffer of " +
           std::to_string(b.bytes) + " bytes");
}

// The per-block shared memory every CUDA and HIP device grants without opt-in.
constexpr std::size_t kSharedMemoryWithoutOptIn = 48 * 1024;

bool aligned(const void* address, std::int64_t bytes) {
  return reinterpret_cast<std::uintptr_t>(address) % std::uintptr_t(bytes) == 0;
}

}  // namespace

PathChoice choose_path(const abi::ElementwiseParams& p, const ElementwisePlan& plan, int vec,
                       int in_bytes, const void* const* addresses,
                       const ElementwiseOptions& options) {
  PathChoice L;
  const int out_bytes = dtype_bytes(p.out.dtype);
  auto access_bytes = [&](int k) { return std::int64_t(vec) * (k == 0 ? out_bytes : in_bytes); };
  auto address = [&](int k) { return addresses[k]; };
  auto none = [&] {
    L.path = ElementwisePath::kNone;
    return L;
  };
  bool flat = plan.ndim <= 1;
  for (int k = 0; flat && k < plan.operands; ++k)
    if (plan.tensor[k] && plan.ndim == 1 && plan.strides[k][0] != 1) flat = false;
  if (flat) {
    for (int k = 0; k < plan.operands; ++k)
      if (plan.tensor[k] && !aligned(address(k), access_bytes(k))) return none();
    L.path = ElementwisePath::kContiguous;
    return L;
  }
  if (plan.ndim > 2) return none();
  // A 1-D view with a broadcast operand is one row of a 2-D view.
  const bool one_d = plan.ndim == 1;
  L.rows = one_d ? 1 : plan.sizes[0];
  L.cols = one_d ? plan.sizes[0] : plan.sizes[1];
  auto s0 = [&](int k) { return one_d ? std::int64_t(0) : plan.strides[k][0]; };
  auto s1 = [&](int k) { return one_d ? plan.strides[k][0] : plan.strides[k][1]; };
  if (s1(0) != 1) return none();
  L.out_stride0 = s0(0);
  bool rows_ok = L.cols % vec == 0 && (L.out_stride0 * out_bytes) % access_bytes(0) == 0 &&
                 aligned(address(0), access_bytes(0));
  bool transposed = false;
  for (int k = 1; k < plan.operands; ++k) {
    L.in_stride0[k - 1] = plan.tensor[k] ? s0(k) : 0;
    L.in_stride1[k - 1] = plan.tensor[k] ? s1(k) : 0;
    if (!plan.tensor[k]) continue;
    if (s1(k) > 1) rows_ok = false;
    if (s1(k) == 1 &&
        ((s0(k) * in_bytes) % access_bytes(k) != 0 || !aligned(address(k), access_bytes(k))))
      rows_ok = false;
    if (s0(k) == 1 && s1(k) > 1) transposed = true;
  }
  if (rows_ok) {
    L.path = ElementwisePath::kRows;
    return L;
  }
  if (!transposed) return none();
  L.tile = options.tile > 0 ? options.tile : options.warp_size;
  const std::size_t smem = std::size_t(p.num_inputs) * L.tile * (L.tile + 1) * in_bytes;
  if (smem > kSharedMemoryWithoutOptIn) return none();
  L.path = ElementwisePath::kTiled;
  return L;
}

int dtype_bytes(int dtype) {
  static constexpr int kBytes[] = {1, 1, 1, 2, 4, 8, 2, 2, 4, 8};
  return dtype >= 0 && dtype < 10 ? kBytes[dtype] : 0;
}

int elementwise_op_arity(int op) {
  const OpEntry* e = find_op(op);
  return e ? e->arity : 0;
}

const char* elementwise_op_name(int op) {
  const OpEntry* e = find_op(op);
  return e ? e->name : "unknown op";
}

const char* path_name(ElementwisePath path) {
  switch (path) {
    case ElementwisePath::kGeneric:
      return "generic";
    case ElementwisePath::kContiguous:
      return "contiguous";
    case ElementwisePath::kRows:
      return "rows";
    case ElementwisePath::kTiled:
      return "tiled";
    case ElementwisePath::kBatched:
      return "batched";
    default:
      return "none";
  }
}

void apply_environment(ElementwiseOptions& options) {
  if (const char* tile = std::getenv("NBX_GPU_TILE"); tile && *tile) {
    const std::string_view t(tile);
    if (t == "32")
      options.tile = 32;
    else if (t == "64")
      options.tile = 64;
    else
      throw InvalidArgument("NBX_GPU_TILE",
                            "NBX_GPU_TILE must be 32 or 64 (got '" + std::string(t) + "').");
  }
  if (const char* mode = std::getenv("NBX_GPU_ELEMENTWISE"); mode && *mode) {
    const std::string_view m(mode);
    if (m == "generic")
      options.generic_only = true;
    else if (m == "auto")
      options.generic_only = false;
    else
      throw InvalidArgument(
          "NBX_GPU_ELEMENTWISE",
          "NBX_GPU_ELEMENTWISE must be 'auto' or 'generic' (got '" + std::string(m) + "').");
  }
  if (const char* batch = std::getenv("NBX_GPU_BATCH"); batch && *batch) {
    // 0: off; 1: on with the default threshold; N > 1: on for launches of up to N elements
    // (benchmarks use it to find where batching stops paying).
    const std::string b(batch);
    char* end = nullptr;
    const long long v = std::strtoll(b.c_str(), &end, 10);
    if (end == b.c_str() || *end != '\0' || v < 0)
      throw InvalidArgument("NBX_GPU_BATCH",
                            "NBX_GPU_BATCH must be 0 (off), 1 (on) or a largest "
                            "batched launch in elements (got '" +
                                b + "').");
    options.batch_max_numel = v == 1 ? ElementwiseOptions{}.batch_max_numel : std::int64_t(v);
  }
}

void validate_elementwise(const abi::ElementwiseParams& p, const BoundBuffer* buffers,
                          int num_buffers) {
  const OpEntry* op = find_op(p.op);
  if (!op) reject("unknown op code " + std::to_string(p.op));
  const std::string name = op->name;
  if (p.num_inputs != op->arity)
    reject(name + " takes " + std::to_string(op->arity) + " inputs, the block says " +
           std::to_string(p.num_inputs));
  if (num_buffers != 1 + p.num_inputs)
    reject(name + " needs " + std::to_string(1 + p.num_inputs) + " buffers, got " +
           std::to_string(num_buffers));
  if (p.ndim < 0 || p.ndim > abi::kMaxDims)
    reject(name + " has ndim " + std::to_string(p.ndim) + " outside [0, 8]");
  if (dtype_bytes(p.compute_dtype) == 0)
    reject(name + " has unknown compute dtype code " + std::to_string(p.compute_dtype));
  if (is_bitwise(p.op) && is_float_dtype(p.compute_dtype))
    reject(name + " has no floating-point form (compute dtype code " +
           std::to_string(p.compute_dtype) + ")");
  std::int64_t n = 1;
  for (int d = 0; d < p.ndim; ++d) {
    if (p.sizes[d] < 0) reject(name + " has a negative size in dim " + std::to_string(d));
    n *= p.sizes[d];
  }
  if (n != p.numel)
    reject(name + " has numel " + std::to_string(p.numel) + " but its sizes multiply to " +
           std::to_string(n));
  if (p.out.is_scalar) reject(name + " has a scalar output");
  check_operand(p, p.out, buffers[0], name + " output");
  for (int k = 0; k < p.num_inputs; ++k)
    check_operand(p, p.in[k], buffers[1 + k], name + " input " + std::to_string(k));
}

ElementwisePlan collapse_dimensions(const abi::ElementwiseParams& p) {
  ElementwisePlan plan;
  plan.operands = 1 + p.num_inputs;
  plan.numel = p.numel;
  plan.tensor[0] = true;
  for (int k = 0; k < p.num_inputs; ++k) plan.tensor[1 + k] = !p.in[k].is_scalar;
  auto stride_of = [&](int k, int d) { return k == 0 ? p.out.strides[d] : p.in[k - 1].strides[d]; };
  for (int d = 0; d < p.ndim; ++d) {
    if (p.sizes[d] == 1) continue;
    const int nd = plan.ndim;
    bool merge = nd > 0;
    for (int k = 0; merge && k < plan.operands; ++k)
      if (plan.tensor[k] && plan.strides[k][nd - 1] != stride_of(k, d) * p.sizes[d]) merge = false;
    if (merge) {
      plan.sizes[nd - 1] *= p.sizes[d];
      for (int k = 0; k < plan.operands; ++k) plan.strides[k][nd - 1] = stride_of(k, d);
    } else {
      plan.sizes[nd] = p.sizes[d];
      for (int k = 0; k < plan.operands; ++k) plan.strides[k][nd] = stride_of(k, d);
      plan.ndim = nd + 1;
    }
  }
  return plan;
}

}  // namespace nbx::gpu
