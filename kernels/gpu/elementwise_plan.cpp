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

int collapse_strided_dims(int ndim, std::int64_t* sizes, std::int64_t* const* strides, int arrays) {
  int n = 0;
  for (int d = 0; d < ndim; ++d) {
    if (sizes[d] == 1) continue;
    bool merge = n > 0;
    for (int a = 0; a < arrays && merge; ++a)
      merge = static_cast<std::uint64_t>(strides[a][n - 1]) ==
              static_cast<std::uint64_t>(strides[a][d]) * static_cast<std::uint64_t>(sizes[d]);
    if (merge) {
      sizes[n - 1] *= sizes[d];
      for (int a = 0; a < arrays; ++a) strides[a][n - 1] = strides[a][d];
    } else {
      sizes[n] = sizes[d];
      for (int a = 0; a < arrays; ++a) strides[a][n] = strides[a][d];
      ++n;
    }
  }
  return n;
}

}  // namespace nbx::gpu
