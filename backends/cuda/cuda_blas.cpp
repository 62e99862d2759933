// cuBLASLt behind the CUDA backend's "matmul.blas" variant (the hook declared in
// kernels/gpu/matmul_launch.hpp). The library is not linked: the module must stay small
// enough to carry (cuBLASLt is ~500 MB), and a machine without it only loses this variant.
// It is dlopened once per process (cuda_blas_loader.cpp: where it looks, the version check);
// cublasLt.h is included for types and constants only, every call goes through lt_api().
//
// Row-major products on a column-major library: out (m x n, row-major) is out^T (n x m,
// column-major), so D' = B' A' with B' = B^T (k x n read as n x k) and A' = A^T. An operand
// with a unit column stride is column-major as it stands (op N, ld = row stride); one with a
// unit row stride is its transpose (op T, ld = column stride). The wrapper copies any other
// operand first (core/ops/linalg.cpp). The addend is laid into the output by a small kernel
// (launch_matmul_addend: broadcast, dtype conversion) and read back as C = D with beta, so
// every broadcast the ABI allows works; beta 0 reads nothing (NaN addends do not propagate).
// Batch dims are merged where all operands allow, then run as one strided batch (stride 0
// for a broadcast operand), the outer dims as a loop. float32 computes in float32 (no TF32:
// PyTorch's default for matmul), float16/bfloat16 in float32, float64 in float64. The
// algorithm: the first time a problem is seen, the fastest of the heuristic's candidates
// (timed on the call's operands, cuda_blas_tune.cpp; NBX_BLAS_TUNE=0 takes its first),
// then that one for every later call of the problem in the process.
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/cuda_blas_loader.hpp"
#include "backends/cuda/cuda_blas_tune.hpp"
#include "backends/cuda/cuda_errors.hpp"
#include "backends/cuda/cuda_library_search.hpp"
#include "backends/cuda/cuda_sanitizer_marks.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"
#include "kernels/gpu/matmul_launch.hpp"

namespace nbx::gpu {
namespace {

// nbx::DType codes as the parameter block carries them.
constexpr int kFloat16 = static_cast<int>(DType::kFloat16);
constexpr int kBFloat16 = static_cast<int>(DType::kBFloat16);
constexpr int kFloat32 = static_cast<int>(DType::kFloat32);
constexpr int kFloat64 = static_cast<int>(DType::kFloat64);

// Per device: the handle, the workspace and the algorithm chosen for each problem.
struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  std::map<std::string, cublasLtMatmulAlgo_t> algos;
};
std::mutex g_mutex;
std::map<int, DeviceState>& devices() {
  // Never destroyed: at exit the CUDA runtime may already be gone; the driver frees all.
  static auto* d = new std::map<int, DeviceState>();
  return *d;
}

// 32 MiB: what cuBLAS recommends for Hopper's largest kernels (smaller parts need less).
constexpr std::size_t kWorkspaceBytes = std::size_t(32) << 20;

[[noreturn]] void reject(const std::string& what) {
  throw InvalidArgument("matmul", "matmul launch (cuBLASLt): " + what + ".");
}

void check(cublasStatus_t s, const char* call, const MatmulDevice& device) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  const char* name = lt_api().status_name ? lt_api().status_name(s) : "cublasStatus";
  throw Internal("matmul on " + device.name + ": " + call + " failed (" + name + ", " +
                 std::to_string(static_cast<int>(s)) + ").");
}

DeviceState& state(const MatmulDevice& device) {
  DeviceState& s = devices()[device.index];
  if (!s.handle) {
    check(lt_api().create(&s.handle), "cublasLtCreate", device);
    const cudaError_t e = cudaMalloc(&s.workspace, kWorkspaceBytes);
    if (e != cudaSuccess)
      cuda::throw_error(e, "cudaMalloc(cuBLASLt workspace)", device.name, kWorkspaceBytes);
    s.workspace_bytes = kWorkspaceBytes;
  }
  return s;
}

// A row-major-indexed operand X (r x c, strides rs, cs) as cuBLASLt reads X^T (c x r).
struct Layout {
  cublasOperation_t op = CUBLAS_OP_N;
  std::uint64_t rows = 0, cols = 0;  // of the stored column-major matrix
  std::int64_t ld = 0;
};
std::optional<Layout> transposed_view(std::int64_t r, std::int64_t c, std::int64_t rs,
                                      std::int64_t cs) {
  if ((cs == 1 || c == 1) && (r == 1 || rs >= c))  // row-major X = column-major X^T
    return Layout{CUBLAS_OP_N, std::uint64_t(c), std::uint64_t(r), r == 1 ? c : rs};
  if ((rs == 1 || r == 1) && (c == 1 || cs >= r))  // column-major X, transposed by the op
    return Layout{CUBLAS_OP_T, std::uint64_t(r), std::uint64_t(c), c == 1 ? r : cs};
  return std::nullopt;
}

// Batch dims merged across A, B and the output where every one walks them as one dim.
struct Batch {
  std::vector<std::int64_t> sizes, a, b, out;
};
Batch merged_batch(const abi::MatmulParams& p) {
  Batch m;
  for (int d = 0; d < p.batch_ndim; ++d) {
    if (p.batch_sizes[d] == 1) continue;
    const std::int64_t size = p.batch_sizes[d];
    if (!m.sizes.empty() && m.a.back() == p.a_batch_strides[d] * size &&
        m.b.back() == p.b_batch_strides[d] * size &&
        m.out.back() == p.out_batch_strides[d] * size) {
      m.sizes.back() *= size;
      m.a.back() = p.a_batch_strides[d], m.b.back() = p.b_batch_strides[d];
      m.out.back() = p.out_batch_strides[d];
      continue;
    }
    m.sizes.push_back(size);
    m.a.push_back(p.a_batch_strides[d]);
    m.b.push_back(p.b_batch_strides[d]);
    m.out.push_back(p.out_batch_strides[d]);
  }
  return m;
}

// The largest power of two (at most 256) dividing the address and every batch step.
std::uint32_t alignment(const void* base, std::int64_t stride_bytes) {
  std::uint64_t bits = reinterpret_cast<std::uintptr_t>(base) | 256u;
  if (stride_bytes) bits |= static_cast<std::uint64_t>(stride_bytes);
  return static_cast<std::uint32_t>(bits & (~bits + 1));
}

struct Types {
  cudaDataType_t in, out;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};
Types types_of(const abi::MatmulParams& p) {
  const auto data = [](int dtype) -> cudaDataType_t {
    switch (dtype) {
      case kFloat16:
        return CUDA_R_16F;
      case kBFloat16:
        return CUDA_R_16BF;
      case kFloat32:
        return CUDA_R_32F;
      case kFloat64:
        return CUDA_R_64F;
      default:
        reject("dtype code " + std::to_string(dtype) + " has no cuBLASLt product");
    }
  };
  const Types t{data(p.a_dtype), data(p.out_dtype),
                p.a_dtype == kFloat64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F,
                p.a_dtype == kFloat64 ? CUDA_R_64F : CUDA_R_32F};
  const bool half_to_float =
      (p.a_dtype == kFloat16 || p.a_dtype == kBFloat16) && p.out_dtype == kFloat32;
  if (p.out_dtype != p.a_dtype && !half_to_float)
    reject("a product of dtype " + std::to_string(p.a_dtype) + " into dtype " +
           std::to_string(p.out_dtype));
  return t;
}

// Owns the descriptors of one call.
struct Descriptors {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  ~Descriptors() {
    const LtApi& lt = lt_api();
    if (pref) lt.pref_destroy(pref);
    if (d) lt.layout_destroy(d);
    if (b) lt.layout_destroy(b);
    if (a) lt.layout_destroy(a);
    if (desc) lt.desc_destroy(desc);
  }
};

// One cublasLtMatmul over `count` entries `step_*` elements apart (count 1: no batch).
struct Call {
  const char* a;  // A' = B^T: the user's B
  const char* b;  // B' = A^T: the user's A
  char* d;
  std::int64_t count = 1, step_a = 0, step_b = 0, step_d = 0;
};

// The heuristic's algorithms for a call (at most `count`, its best prediction first), those
// that ran its checks and fit the workspace; empty when it has none.
std::vector<cublasLtMatmulHeuristicResult_t> heuristic_algorithms(Descriptors& x, int count,
                                                                  std::int64_t out_bytes,
                                                                  const std::uint32_t (&align)[3],
                                                                  DeviceState& s,
                                                                  const MatmulDevice& device) {
  const LtApi& lt = lt_api();
  check(lt.pref_create(&x.pref), "cublasLtMatmulPreferenceCreate", device);
  const std::uint64_t ws = s.workspace_bytes;
  check(lt.pref_set(x.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws),
        "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)", device);
  // Split-k partial sums stay in float32 for 16-bit outputs (INPLACE and OUTPUT_TYPE would
  // round each partial to float16/bfloat16): the product accumulates in float32 end to end.
  if (out_bytes == 2) {
    const std::uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    check(lt.pref_set(x.pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof mask),
          "cublasLtMatmulPreferenceSetAttribute(REDUCTION_SCHEME_MASK)", device);
  }
  // The heuristic otherwise assumes 256-byte aligned matrices, which views need not be.
  const std::pair<cublasLtMatmulPreferenceAttributes_t, std::uint32_t> aligns[] = {
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, align[0]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, align[1]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, align[2]},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, align[2]}};
  for (const auto& [attr, value] : aligns)
    check(lt.pref_set(x.pref, attr, &value, sizeof value),
          "cublasLtMatmulPreferenceSetAttribute(MIN_ALIGNMENT)", device);
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<std::size_t>(count));
  int returned = 0;
  const cublasStatus_t hs =
      lt.heuristic(s.handle, x.desc, x.a, x.b, x.d, x.d, x.pref, count, results.data(), &returned);
  if (hs == CUBLAS_STATUS_NOT_SUPPORTED) return {};
  check(hs, "cublasLtMatmulAlgoGetHeuristic", device);
  results.resize(static_cast<std::size_t>(std::clamp(returned, 0, count)));
  std::erase_if(results, [&](const cublasLtMatmulHeuristicResult_t& r) {
    return r.state != CUBLAS_STATUS_SUCCESS || r.workspaceSize > s.workspace_bytes;
  });
  return results;
}

// False when the heuristic has no algorithm for this call (the caller splits a batch).
bool run_call(const abi::MatmulParams& p, const Types& t, const Layout& la, const Layout& lb,
              const Layout& ld, const Call& c, DeviceState& s, const MatmulDevice& device,
              cudaStream_t stream) {
  const LtApi& lt = lt_api();
  Descriptors x;
  check(lt.desc_create(&x.desc, t.compute, t.scale), "cublasLtMatmulDescCreate", device);
  const std::int32_t op_a = la.op, op_b = lb.op;
  check(lt.desc_set(x.desc, CUBLASLT_MATMUL_DESC_TRANSA, &op_a, sizeof op_a),
        "cublasLtMatmulDescSetAttribute(TRANSA)", device);
  check(lt.desc_set(x.desc, CUBLASLT_MATMUL_DESC_TRANSB, &op_b, sizeof op_b),
        "cublasLtMatmulDescSetAttribute(TRANSB)", device);
  const auto make = [&](cublasLtMatrixLayout_t& out, cudaDataType_t type, const Layout& l,
                        std::int64_t step) {
    check(lt.layout_create(&out, type, l.rows, l.cols, l.ld), "cublasLtMatrixLayoutCreate", device);
    if (c.count > 1) {
      const std::int32_t count = static_cast<std::int32_t>(c.count);
      check(lt.layout_set(out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count),
            "cublasLtMatrixLayoutSetAttribute(BATCH_COUNT)", device);
      check(lt.layout_set(out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &step, sizeof step),
            "cublasLtMatrixLayoutSetAttribute(STRIDED_BATCH_OFFSET)", device);
    }
  };
  make(x.a, t.in, la, c.step_a);
  make(x.b, t.in, lb, c.step_b);
  make(x.d, t.out, ld, c.step_d);

  const std::int64_t in_bytes = p.a_dtype == kFloat64 ? 8 : p.a_dtype == kFloat32 ? 4 : 2;
  const std::int64_t out_bytes = p.out_dtype == kFloat64 ? 8 : p.out_dtype == kFloat32 ? 4 : 2;
  const std::uint32_t align[3] = {alignment(c.a, c.step_a * in_bytes),
                                  alignment(c.b, c.step_b * in_bytes),
                                  alignment(c.d, c.step_d * out_bytes)};
  // beta != 0 reads the addend laid into D as C: part of the problem (the timing differs).
  const bool reads_c = p.has_addend && p.beta != 0;
  const std::string key =
      std::to_string(p.a_dtype) + "," + std::to_string(p.out_dtype) + "," + std::to_string(la.op) +
      std::to_string(lb.op) + "," + std::to_string(la.rows) + "x" + std::to_string(la.cols) + ":" +
      std::to_string(la.ld) + "," + std::to_string(lb.rows) + "x" + std::to_string(lb.cols) + ":" +
      std::to_string(lb.ld) + "," + std::to_string(ld.ld) + ",b" + std::to_string(c.count) + ":" +
      std::to_string(c.step_a) + ":" + std::to_string(c.step_b) + ":" + std::to_string(c.step_d) +
      ",al" + std::to_string(align[0]) + ":" + std::to_string(align[1]) + ":" +
      std::to_string(align[2]) + (reads_c ? ",beta" : "");

  const float alpha_f = static_cast<float>(p.alpha);
  const float beta_f = reads_c ? static_cast<float>(p.beta) : 0.0f;
  const double alpha_d = p.alpha;
  const double beta_d = reads_c ? p.beta : 0.0;
  const bool f64 = t.scale == CUDA_R_64F;
  const void* alpha = f64 ? static_cast<const void*>(&alpha_d) : &alpha_f;
  const void* beta = f64 ? static_cast<const void*>(&beta_d) : &beta_f;
  // D is also C (read only with beta != 0).
  const AlgoLaunch launch = [&](const cublasLtMatmulAlgo_t& algo, char* d) {
    return lt.matmul(s.handle, x.desc, alpha, c.a, x.a, c.b, x.b, beta, d, x.d, d, x.d, &algo,
                     s.workspace, s.workspace_bytes, stream);
  };

  auto found = s.algos.find(key);
  if (found == s.algos.end()) {
    const BlasTune mode = blas_tune_mode();
    const double macs = double(p.m) * double(p.n) * double(p.k) * double(c.count);
    const bool big = macs >= kTuneMinMacs;
    // A negative batch step of D would need another scratch extent: such a call is not tuned.
    const bool tune = mode != BlasTune::kOff && big && c.step_d >= 0;
    const std::vector<cublasLtMatmulHeuristicResult_t> algos =
        heuristic_algorithms(x, tune ? kTuneCandidates : 1, out_bytes, align, s, device);
    if (algos.empty()) {
      if (c.count > 1) return false;
      throw Unsupported("matmul", device.name, "matmul.blas",
                        "matmul on " + device.name + ": cuBLASLt has no algorithm for this " +
                            "product (" + key + "); NBX_MATMUL=tiled runs the own kernel.");
    }
    std::size_t pick = 0;
    std::string note = mode == BlasTune::kOff ? "the heuristic's first (NBX_BLAS_TUNE=0)"
                       : !big                 ? "the heuristic's first (below 2^27 multiply-adds)"
                              : "the heuristic's first (a negative batch step of the output)";
    if (tune) {
      // Timing reaches the last element D's layout addresses, batches included.
      const std::uint64_t extent = std::uint64_t(c.count - 1) * std::uint64_t(c.step_d) +
                                   (ld.cols - 1) * std::uint64_t(ld.ld) + ld.rows;
      const TuneTarget target{c.d, extent * std::uint64_t(out_bytes), reads_c, stream, device.name};
      pick = fastest_algorithm(algos, target, launch, note);
    }
    if (mode == BlasTune::kLog)
      std::fprintf(stderr, "nbx: matmul.blas on %s, problem %s: %s\n", device.name.c_str(),
                   key.c_str(), note.c_str());
    found = s.algos.emplace(key, algos[pick].algo).first;
  }
  // The one launch that writes D: with beta != 0 it reads the addend as laid, untouched by
  // any tuning above.
  check(launch(found->second, c.d), "cublasLtMatmul", device);
  return true;
}

}  // namespace

std::string vendor_blas_status() {
  return lt_api().ok ? lt_api().status + "; " + blas_tune_summary() : lt_api().status;
}

bool vendor_blas_available() {
  return lt_api().ok;
}

ElementwiseLaunchResult launch_matmul_vendor_blas(const abi::MatmulParams& p,
                                                  const BoundBuffer* buffers, int num_buffers,
                                                  const MatmulDevice& device, void* stream) {
  if (!lt_api().ok)
    throw Unsupported(
        "matmul", device.name, "matmul.blas",
        "matmul on " + device.name + ": the vendor BLAS is " + lt_api().status + "; refused.");
  if (p.variant != abi::kMatmulVendorBlas) reject("the parameter block asks for another variant");
  if (!matmul_has_work(p)) return {};
  const Types t = types_of(p);
  // k = 0: the product is empty and out = beta * addend (or 0).
  if (p.k == 0) return launch_matmul_addend(p, buffers, num_buffers, p.beta, stream);
  if (p.has_addend && p.beta != 0) {
    const ElementwiseLaunchResult r = launch_matmul_addend(p, buffers, num_buffers, 1.0, stream);
    if (r.error != 0) return r;
  }
  const std::optional<Layout> la = transposed_view(p.k, p.n, p.b_row_stride, p.b_col_stride);
  const std::optional<Layout> lb = transposed_view(p.m, p.k, p.a_row_stride, p.a_col_stride);
  const std::optional<Layout> ld = transposed_view(p.m, p.n, p.out_row_stride, p.out_col_stride);
  if (!la || !lb) reject("an operand has no unit stride in its last two dims (copy it first)");
  if (!ld || ld->op != CUBLAS_OP_N) reject("the output is not row-major");
  for (std::uint64_t extent : {la->rows, la->cols, lb->rows, lb->cols})
    if (extent > 0x7fffffffULL) reject("a matrix dim exceeds 2^31 - 1");

  const Batch batch = merged_batch(p);
  const std::int64_t in_bytes = p.a_dtype == kFloat64 ? 8 : p.a_dtype == kFloat32 ? 4 : 2;
  const std::int64_t out_bytes = p.out_dtype == kFloat64 ? 8 : p.out_dtype == kFloat32 ? 4 : 2;
  const char* a_base = static_cast<const char*>(buffers[2].address) + p.b_offset * in_bytes;
  const char* b_base = static_cast<const char*>(buffers[1].address) + p.a_offset * in_bytes;
  char* d_base = static_cast<char*>(buffers[0].address) + p.out_offset * out_bytes;
  const auto stream_ = static_cast<cudaStream_t>(stream);

  std::lock_guard lock(g_mutex);
  DeviceState& s = state(device);
  // The innermost merged batch dim is cuBLASLt's strided batch; outer dims are a loop.
  const int nd = static_cast<int>(batch.sizes.size());
  const std::int64_t inner = nd ? batch.sizes[nd - 1] : 1;
  std::int64_t outer = 1;
  for (int d = 0; d + 1 < nd; ++d) outer *= batch.sizes[d];
  for (std::int64_t e = 0; e < outer; ++e) {
    std::int64_t rest = e, off_a = 0, off_b = 0, off_d = 0;
    for (int d = nd - 2; d >= 0; --d) {
      const std::int64_t i = rest % batch.sizes[d];
      rest /= batch.sizes[d];
      off_a += i * batch.b[d], off_b += i * batch.a[d], off_d += i * batch.out[d];
    }
    Call c{a_base + off_a * in_bytes, b_base + off_b * in_bytes, d_base + off_d * out_bytes};
    if (nd) {
      c.count = inner;
      c.step_a = batch.b[nd - 1], c.step_b = batch.a[nd - 1], c.step_d = batch.out[nd - 1];
    }
    for (std::int64_t done = 0; done < c.count;) {
      // BATCH_COUNT is an int32: split larger batches.
      Call part = c;
      part.count = std::min<std::int64_t>(c.count - done, 0x7fffffff);
      part.a += done * c.step_a * in_bytes, part.b += done * c.step_b * in_bytes;
      part.d += done * c.step_d * out_bytes;
      if (!run_call(p, t, *la, *lb, *ld, part, s, device, stream_)) {
        // No strided-batch algorithm (a stride-0 operand, say): one call per entry.
        for (std::int64_t i = 0; i < part.count; ++i) {
          Call one = part;
          one.count = 1;
          one.a += i * c.step_a * in_bytes, one.b += i * c.step_b * in_bytes;
          one.d += i * c.step_d * out_bytes;
          run_call(p, t, *la, *lb, *ld, one, s, device, stream_);
        }
      }
      done += part.count;
    }
  }
  // What cuBLASLt wrote: every batch entry's m x n view of the output.
  const auto written = ViewExtent(0)
                           .dim(p.m, p.out_row_stride)
                           .dim(p.n, p.out_col_stride)
                           .dims(nd, batch.sizes.data(), batch.out.data())
                           .end_bytes(std::size_t(out_bytes));
  cuda::mark_written_by_vendor(stream, d_base, std::size_t(written.value_or(0)));
  ElementwiseLaunchResult r;
  r.error = static_cast<int>(cudaGetLastError());
  r.call = "cublasLtMatmul";
  r.path = ElementwisePath::kTiled;
  return r;
}

void release_vendor_blas(int device_index) {
  if (!lt_api().ok || vendor_process_exiting()) return;
  std::lock_guard lock(g_mutex);
  auto it = devices().find(device_index);
  if (it == devices().end()) return;
  // Errors are ignored: this runs while the device closes and must not throw.
  if (it->second.workspace) (void)cudaFree(it->second.workspace);
  if (it->second.handle) (void)lt_api().destroy(it->second.handle);
  devices().erase(it);
}

}  // namespace nbx::gpu
