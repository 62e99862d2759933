// cuDNN's fused flash attention behind the attention family's "cudnn" variant (the hook of
// kernels/gpu/vendor_launch.hpp). The problem is written as cuDNN's SDPA operation graph —
// the pattern its fused attention engines recognise, as NVIDIA's cudnn-frontend lowers its
// sdpa node for inference: S = Q·Kᵀ (float32), S·scale, the causal mask (row and column
// indices, row [+ S − L] >= column, select −inf), softmax as max / subtract / exp / sum /
// divide (with the log-sum-exp statistic the pattern carries, virtual here), the
// probabilities rounded to the input dtype, O = P·V. GQA needs no copy: K and V carry their
// own head count. The engine comes from cuDNN's heuristics (mode A), the first whose
// execution plan finalizes; the plan is cached per problem (shape, strides, dtype, mask) and
// device, so the graph is built once; scale and the mask's lengths are passed by value.
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/cuda/cuda_cudnn_graph.hpp"
#include "backends/cuda/cuda_cudnn_loader.hpp"
#include "backends/cuda/cuda_errors.hpp"
#include "backends/cuda/cuda_library_search.hpp"
#include "backends/cuda/cuda_sanitizer_marks.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"
#include "core/shape.hpp"
#include "kernels/gpu/vendor_launch.hpp"

namespace nbx::gpu {

#if NBX_HAVE_CUDNN_HEADERS
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// Unique ids of the tensors the variant pack binds.
enum Uid : std::int64_t { kQ = 1, kK, kV, kO, kScale, kNegInf, kKvLen, kQLen };

// A built graph, ready to execute: the builder keeps its descriptors alive.
struct CachedPlan {
  cudnn::GraphBuilder graph;
  std::unique_ptr<cudnn::Descriptor> operation_graph;
  std::unique_ptr<cudnn::Descriptor> config;  // the engine configuration the plan runs
  std::unique_ptr<cudnn::Descriptor> plan;
  std::int64_t workspace_bytes = 0;
  bool bottom_right = false;
};

struct DeviceState {
  cudnnHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  std::map<std::string, std::unique_ptr<CachedPlan>> plans;
  std::map<std::string, std::string> refused;  // problems cuDNN had no engine for, and why
};

std::mutex g_mutex;
std::map<int, DeviceState>& devices() {
  static auto* d = new std::map<int, DeviceState>();  // never destroyed: see release below
  return *d;
}

// A size-1 dim may carry any stride (the op gives 0); cuDNN wants the packed one there.
cudnn::Dims tidy_strides(const cudnn::Dims& dims, cudnn::Dims strides) {
  for (int i = 2; i >= 0; --i)
    if (dims[i] == 1) strides[i] = dims[i + 1] * strides[i + 1];
  return strides;
}

cudnn::Dims packed(const cudnn::Dims& dims) {
  return {dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1};
}

std::string problem_key(const abi::AttentionParams& p) {
  std::string key = std::to_string(p.dtype) + ":" + std::to_string(p.causal) + ":" +
                    std::to_string(p.causal_shift != 0);
  for (std::int64_t v :
       {p.batch, p.q_heads, p.kv_heads, p.q_len, p.kv_len, p.head_dim, p.value_dim})
    key += ":" + std::to_string(v);
  for (const std::int64_t* s : {p.q_strides, p.k_strides, p.v_strides, p.out_strides})
    for (int i = 0; i < 4; ++i) key += "," + std::to_string(s[i]);
  return key;
}

// The SDPA graph of `p` (see the file comment); throws cudnn::Failure.
std::unique_ptr<CachedPlan> build(const abi::AttentionParams& p, cudnnHandle_t handle) {
  auto c = std::make_unique<CachedPlan>();
  cudnn::GraphBuilder& g = c->graph;
  const cudnnDataType_t io =
      p.dtype == std::int32_t(DType::kBFloat16) ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
  const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
  const std::int64_t b = p.batch, hq = p.q_heads, hk = p.kv_heads, sq = p.q_len, skv = p.kv_len,
                     d = p.head_dim, dv = p.value_dim;
  const auto strides = [](const std::int64_t* s) { return cudnn::Dims{s[0], s[1], s[2], s[3]}; };
  const cudnn::Dims q_dims{b, hq, sq, d}, kt_dims{b, hk, d, skv}, v_dims{b, hk, skv, dv},
      o_dims{b, hq, sq, dv}, s_dims{b, hq, sq, skv}, row_dims{b, hq, sq, 1}, one{1, 1, 1, 1};
  // Kᵀ: K's row and dim strides swapped, no copy.
  const cudnn::Dims kt_strides{p.k_strides[0], p.k_strides[1], p.k_strides[3], p.k_strides[2]};
  const auto& q = g.tensor(kQ, io, q_dims, tidy_strides(q_dims, strides(p.q_strides)));
  const auto& kt = g.tensor(kK, io, kt_dims, tidy_strides(kt_dims, kt_strides));
  const auto& v = g.tensor(kV, io, v_dims, tidy_strides(v_dims, strides(p.v_strides)));
  const auto& o = g.tensor(kO, io, o_dims, tidy_strides(o_dims, strides(p.out_strides)));
  const auto& scale = g.tensor(kScale, f32, one, one, false, true);
  const cudnn::Dims s_strides = packed(s_dims), row_strides = packed(row_dims);

  const auto& s = g.intermediate(f32, s_dims, s_strides);
  g.matmul(q, kt, s);
  const auto* scores = &g.intermediate(f32, s_dims, s_strides);
  g.pointwise(CUDNN_POINTWISE_MUL, f32, s, &scale, nullptr, *scores);
  if (p.causal) {
    const auto& neg_inf = g.tensor(kNegInf, f32, one, one, false, true);
    const auto* row = &g.intermediate(CUDNN_DATA_INT32, s_dims, s_strides);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *scores, nullptr, nullptr, *row, 2);
    const auto& col = g.intermediate(CUDNN_DATA_INT32, s_dims, s_strides);
    g.pointwise(CUDNN_POINTWISE_GEN_INDEX, f32, *scores, nullptr, nullptr, col, 3);
    if (p.causal_shift != 0) {  // bottom-right: row + S - L >= column
      c->bottom_right = true;
      const auto& kv_len = g.tensor(kKvLen, CUDNN_DATA_INT32, one, one, false, true);
      const auto& q_len = g.tensor(kQLen, CUDNN_DATA_INT32, one, one, false, true);
      const auto& plus = g.intermediate(CUDNN_DATA_INT32, s_dims, s_strides);
      g.pointwise(CUDNN_POINTWISE_ADD, CUDNN_DATA_INT32, *row, &kv_len, nullptr, plus);
      const auto& shifted = g.intermediate(CUDNN_DATA_INT32, s_dims, s_strides);
      g.pointwise(CUDNN_POINTWISE_SUB, CUDNN_DATA_INT32, plus, &q_len, nullptr, shifted);
      row = &shifted;
    }
    const auto& keep = g.intermediate(CUDNN_DATA_BOOLEAN, s_dims, s_strides);
    g.pointwise(CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, *row, &col, nullptr, keep);
    const auto& masked = g.intermediate(f32, s_dims, s_strides);
    g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, f32, *scores, &neg_inf, &keep, masked);
    scores = &masked;
  }
  const auto& max = g.intermediate(f32, row_dims, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, *scores, max);
  const auto& centred = g.intermediate(f32, s_dims, s_strides);
  g.pointwise(CUDNN_POINTWISE_SUB, f32, *scores, &max, nullptr, centred);
  const auto& e = g.intermediate(f32, s_dims, s_strides);
  g.pointwise(CUDNN_POINTWISE_EXP, f32, centred, nullptr, nullptr, e);
  const auto& sum = g.intermediate(f32, row_dims, row_strides);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  const auto& log_sum = g.intermediate(f32, row_dims, row_strides);
  g.pointwise(CUDNN_POINTWISE_LOG, f32, sum, nullptr, nullptr, log_sum);
  const auto& stats = g.intermediate(f32, row_dims, row_strides);
  g.pointwise(CUDNN_POINTWISE_ADD, f32, max, &log_sum, nullptr, stats);
  const auto& probs = g.intermediate(io, s_dims, s_strides);
  g.pointwise(CUDNN_POINTWISE_DIV, f32, e, &sum, nullptr, probs);
  g.matmul(probs, v, o);

  c->operation_graph = std::make_unique<cudnn::Descriptor>(g.finish(handle));
  cudnn::Descriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
  heuristics.set(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, *c->operation_graph)
      .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, &mode)
      .finalize("the engine heuristics");
  std::int64_t count = 0;
  cudnn::check(cudnn_api().get_attribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
               "the engine heuristics' count");
  if (count <= 0)
    throw cudnn::Failure{CUDNN_STATUS_NOT_SUPPORTED, "the heuristics offer no engine"};
  std::vector<cudnn::Descriptor> configs;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (std::int64_t i = 0; i < count; ++i) {
    raw.push_back(configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR).get());
  }
  std::int64_t got = 0;
  cudnn::check(cudnn_api().get_attribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                         CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &got, raw.data()),
               "the engine heuristics' results");
  std::string tried;
  for (std::int64_t i = 0; i < got; ++i) {
    try {
      auto plan = std::make_unique<cudnn::Descriptor>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      plan->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, &handle)
          .set(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[std::size_t(i)])
          .finalize("the execution plan");
      cudnn::check(cudnn_api().get_attribute(plan->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                             CUDNN_TYPE_INT64, 1, nullptr, &c->workspace_bytes),
                   "the plan's workspace size");
      c->config = std::make_unique<cudnn::Descriptor>(std::move(configs[std::size_t(i)]));
      c->plan = std::move(plan);
      return c;
    } catch (const cudnn::Failure& f) {
      tried += (tried.empty() ? "" : "; ") + f.what;
    }
  }
  throw cudnn::Failure{
      CUDNN_STATUS_NOT_SUPPORTED,
      std::to_string(got) + " engine configurations, none finalized (" + tried + ")"};
}

DeviceState& state(const GpuLaunch& l) {
  DeviceState& s = devices()[l.device_index];
  if (!s.handle) {
    try {
      cudnn::check(cudnn_api().create(&s.handle), "cudnnCreate");
    } catch (const cudnn::Failure& f) {
      throw Internal(std::string(kOp) + " on " + *l.device_name + ": cuDNN: " + f.what);
    }
  }
  return s;
}

void ensure_workspace(DeviceState& s, std::size_t bytes, const GpuLaunch& l) {
  if (bytes <= s.workspace_bytes) return;
  if (s.workspace) cuda::check(cudaFree(s.workspace), "cudaFree(cuDNN workspace)", *l.device_name);
  s.workspace = nullptr, s.workspace_bytes = 0;
  const cudaError_t e = cudaMalloc(&s.workspace, bytes);
  if (e != cudaSuccess) cuda::throw_error(e, "cudaMalloc(cuDNN workspace)", *l.device_name, bytes);
  s.workspace_bytes = bytes;
}

[[noreturn]] void refuse(const GpuLaunch& l, const std::string& why) {
  throw Unsupported(kOp, *l.device_name, "attention.cudnn",
                    std::string(kOp) + " on " + *l.device_name + ": cuDNN's fused attention " +
                        why + "; NBX_ATTENTION=own runs the project's kernels.");
}

}  // namespace

std::string vendor_attention_status() {
  return cudnn_api().status;
}

bool vendor_attention_available() {
  return cudnn_api().ok;
}

ElementwiseLaunchResult launch_attention_vendor(const abi::AttentionParams& p, const GpuLaunch& l) {
  if (!cudnn_api().ok) refuse(l, "is unavailable (" + cudnn_api().status + ")");
  std::lock_guard lock(g_mutex);
  DeviceState& s = state(l);
  const std::string key = problem_key(p);
  if (auto r = s.refused.find(key); r != s.refused.end()) refuse(l, r->second);
  auto it = s.plans.find(key);
  if (it == s.plans.end()) {
    try {
      it = s.plans.emplace(key, build(p, s.handle)).first;
    } catch (const cudnn::Failure& f) {
      const std::string why = "has no engine for this problem: " + f.what;
      s.refused.emplace(key, why);
      refuse(l, why);
    }
  }
  CachedPlan& c = *it->second;
  ensure_workspace(s, std::size_t(c.workspace_bytes), l);

  const auto at = [&](int buffer, std::int64_t offset) {
    return static_cast<void*>(static_cast<char*>(l.buffers[buffer].address) + offset * 2);
  };
  float scale = float(p.scale);
  // cuDNN before 9.10 preferred the lowest finite value to -inf for masked scores
  // (cudnn-frontend's choice); every row here keeps at least one key either way.
  float neg_inf = cudnn_api().version < 91000 ? std::numeric_limits<float>::lowest()
                                              : -std::numeric_limits<float>::infinity();
  std::int32_t kv_len = std::int32_t(p.kv_len), q_len = std::int32_t(p.q_len);
  std::vector<std::int64_t> uids = {kQ, kK, kV, kO, kScale};
  std::vector<void*> pointers = {at(1, p.q_offset), at(2, p.k_offset), at(3, p.v_offset),
                                 at(0, p.out_offset), &scale};
  if (p.causal) uids.push_back(kNegInf), pointers.push_back(&neg_inf);
  if (c.bottom_right) {
    uids.insert(uids.end(), {kKvLen, kQLen});
    pointers.insert(pointers.end(), {&kv_len, &q_len});
  }
  try {
    cudnn::check(cudnn_api().set_stream(s.handle, static_cast<cudaStream_t>(l.stream)),
                 "cudnnSetStream");
    cudnn::Descriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    void* workspace = s.workspace;
    pack.set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, uids.data(),
             std::int64_t(uids.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, pointers.data(),
             std::int64_t(pointers.size()))
        .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, &workspace)
        .finalize("the variant pack");
    cudnn::check(cudnn_api().execute(s.handle, c.plan->get(), pack.get()), "cudnnBackendExecute");
    // What cuDNN's kernels wrote: O [B, Hq, L, Dv] by its strides.
    const std::int64_t o_dims[4] = {p.batch, p.q_heads, p.q_len, p.value_dim};
    const auto written = ViewExtent(0).dims(4, o_dims, p.out_strides).end_bytes(2);
    cuda::mark_written_by_vendor(l.stream, pointers[3], std::size_t(written.value_or(0)));
  } catch (const cudnn::Failure& f) {
    if (f.status == CUDNN_STATUS_ALLOC_FAILED)
      throw OutOfMemory(*l.device_name, 0, 0, 0, 0,
                        std::string(kOp) + " on " + *l.device_name + ": cuDNN: " + f.what);
    throw Internal(std::string(kOp) + " on " + *l.device_name + ": cuDNN: " + f.what);
  }
  ElementwiseLaunchResult r;
  r.error = static_cast<int>(cudaGetLastError());
  r.call = "cudnnBackendExecute (attention)";
  r.path = ElementwisePath::kGeneric;
  return r;
}

void release_vendor_attention(int device_index) {
  if (!cudnn_api().ok || vendor_process_exiting()) return;
  std::lock_guard lock(g_mutex);
  auto it = devices().find(device_index);
  if (it == devices().end()) return;
  // Errors are ignored: this runs while the device closes and must not throw.
  it->second.plans.clear();
  if (it->second.workspace) (void)cudaFree(it->second.workspace);
  if (it->second.handle) (void)cudnn_api().destroy(it->second.handle);
  devices().erase(it);
}

#else  // no cuDNN headers in this toolkit: the variant is never offered

std::string vendor_attention_status() {
  return cudnn_api().status;
}
bool vendor_attention_available() {
  return false;
}
ElementwiseLaunchResult launch_attention_vendor(const abi::AttentionParams&, const GpuLaunch& l) {
  throw Unsupported("scaled_dot_product_attention", *l.device_name, "attention.cudnn",
                    "scaled_dot_product_attention on " + *l.device_name + ": " +
                        cudnn_api().status + "; refused.");
}
void release_vendor_attention(int) {}

#endif

}  // namespace nbx::gpu
