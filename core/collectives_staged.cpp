// Collectives staged through host memory (collectives_staged.hpp): each rank's tensor is
// flattened and brought to the host, combined with the host's own ops, and written back into
// the ranks' tensors in place (copy_ across devices).
#include "core/collectives_staged.hpp"

#include "core/errors.hpp"
#include "core/ops/reduce.hpp"
#include "core/ops/shape.hpp"

namespace nbx {
namespace {

using namespace ops;

// A flat host copy of t, never t itself (to() returns a host tensor as it is): in-place calls
// write the ranks' tensors while these are still read.
Tensor on_host(const Tensor& t) {
  return (t.device().is_host() ? t.clone() : t.to(host_device()).contiguous()).flatten();
}

// The element-wise reduction over ranks as one flat host tensor of the ranks' dtype. bool
// reduces as uint8 (sum and prod arrive as max and min, PyTorch's meaning for bool); integer
// sums wrap in the dtype as NCCL's do (summed in int64, then narrowed).
Tensor reduce_ranks(const std::vector<Tensor>& xs, ReduceOp op) {
  const DType dtype = xs[0].dtype();
  TensorList host;
  for (const Tensor& x : xs)
    host.push_back(dtype == DType::kBool ? on_host(x).to(DType::kUInt8) : on_host(x));
  const Tensor stacked = stack(host, 0);
  Tensor r;
  switch (op) {
    case ReduceOp::kSum:
      r = sum(stacked, {0});
      break;
    case ReduceOp::kProd:
      r = prod(stacked, {0});
      break;
    case ReduceOp::kMin:
      r = amin(stacked, {0});
      break;
    case ReduceOp::kMax:
      r = amax(stacked, {0});
      break;
    case ReduceOp::kAvg:
      r = mean(stacked, {0});
      break;
  }
  return r.to(dtype);
}

// Writes the flat host tensor `src` into `dst` (contiguous, same numel).
void write(const Tensor& dst, const Tensor& src) {
  dst.view({-1}).copy_(src.to(dst.device()));
}

Tensor block(const Tensor& t, std::int64_t index, std::int64_t length) {
  return t.view({-1}).narrow(0, index * length, length);
}

}  // namespace

void run_staged(const CollectiveCall& call, const std::vector<Tensor>& sends,
                const std::vector<Tensor>& recvs) {
  const std::int64_t ranks = static_cast<std::int64_t>(sends.size());
  switch (call.kind) {
    case CollectiveKind::kAllReduce: {
      const Tensor r = reduce_ranks(sends, call.op);
      for (const Tensor& t : recvs) write(t, r);
      return;
    }
    case CollectiveKind::kReduce:
      write(recvs[call.root_or_peer], reduce_ranks(sends, call.op));
      return;
    case CollectiveKind::kBroadcast: {
      const Tensor r = on_host(sends[call.root_or_peer]);
      for (std::int64_t i = 0; i < ranks; ++i)
        if (i != call.root_or_peer) write(recvs[i], r);
      return;
    }
    case CollectiveKind::kAllGather: {
      TensorList host;
      for (const Tensor& x : sends) host.push_back(on_host(x));
      const Tensor r = cat(host, 0);
      for (const Tensor& t : recvs) write(t, r);
      return;
    }
    case CollectiveKind::kReduceScatter: {
      const Tensor r = reduce_ranks(sends, call.op);
      const std::int64_t n = recvs[0].numel();
      for (std::int64_t i = 0; i < ranks; ++i) write(recvs[i], r.narrow(0, i * n, n));
      return;
    }
    case CollectiveKind::kAllToAll: {
      // Block p of rank r's input becomes block r of rank p's output; the inputs come to the
      // host first, so an output that aliases an input is read before it is written.
      TensorList host;
      for (const Tensor& x : sends) host.push_back(on_host(x));
      const std::int64_t n = sends[0].numel() / ranks;
      for (std::int64_t p = 0; p < ranks; ++p)
        for (std::int64_t r = 0; r < ranks; ++r)
          block(recvs[p], r, n).copy_(block(host[r], p, n).to(recvs[p].device()));
      return;
    }
    case CollectiveKind::kSend:
    case CollectiveKind::kRecv:
      // Core refuses point to point without a peer in another process before this.
      throw Internal("run_staged: point-to-point has no staged form");
  }
}

}  // namespace nbx
