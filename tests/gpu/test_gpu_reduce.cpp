// The "reduce" family on the GPU against the host reference: every reduction op, several
// dtypes, reductions over inner, middle, outer and all dims, and group sizes from one
// thread per row to a whole block (64 is the wavefront-64 shape AMD GPUs use).
#include <doctest/doctest.h>

#include <span>

#include "core/errors.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace nbx::gputest {
namespace {

struct Reduction {
  std::vector<int> kept, reduced;  // dims of the contiguous input
};

std::vector<std::byte> run_reduce(BackendDevice& d, const abi::ReduceParams& p,
                                  const std::vector<std::byte>& in, std::size_t out_bytes,
                                  std::vector<std::byte>* indices) {
  std::vector<KernelBuffer> buffers;
  std::vector<std::byte> out(out_bytes, std::byte{0x5a});
  DeviceMemory o = d.allocate(out_bytes), i = d.allocate(in.size());
  d.copy_from_host(o, 0, out.data(), out_bytes);
  d.copy_from_host(i, 0, in.data(), in.size());
  buffers.push_back({o, true});
  buffers.push_back({i, false});
  if (indices) {
    DeviceMemory x = d.allocate(indices->size());
    d.copy_from_host(x, 0, indices->data(), indices->size());
    buffers.push_back({x, true});
  }
  d.launch({nbx::KernelFamily::kReduce, buffers,
            std::as_bytes(std::span<const abi::ReduceParams>(&p, 1))});
  d.synchronize();
  d.copy_to_host(out.data(), o, 0, out_bytes);
  if (indices) d.copy_to_host(indices->data(), buffers[2].memory, 0, indices->size());
  for (KernelBuffer& b : buffers) d.free(b.memory);
  return out;
}

bool float_only(int op) {
  return op == abi::kReduce_mean || op == abi::kReduce_var || op == abi::kReduce_std ||
         op == abi::kReduce_norm || op == abi::kReduce_logsumexp;
}

void check_reduction(int op, DType t, const std::vector<std::int64_t>& shape, const Reduction& r,
                     int row_tile, double attr, std::uint64_t seed) {
  // Contiguous strides of the input.
  std::vector<std::int64_t> strides(shape.size());
  std::int64_t numel = 1;
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    strides[std::size_t(d)] = numel;
    numel *= shape[std::size_t(d)];
  }
  abi::ReduceParams p{};
  p.op = op;
  p.in_dtype = std::int32_t(t);
  p.out_dtype = std::int32_t(reduce_out_dtype(op, t));
  p.accumulate_dtype = std::int32_t(reduce_accumulate_dtype(op, t));
  p.row_tile = row_tile;
  p.attr = attr;
  p.rows = 1, p.row_len = 1;
  for (int d : r.kept) {
    p.out_sizes[p.out_ndim] = shape[std::size_t(d)];
    p.in_kept_strides[p.out_ndim++] = strides[std::size_t(d)];
    p.rows *= shape[std::size_t(d)];
  }
  for (int d : r.reduced) {
    p.red_sizes[p.red_ndim] = shape[std::size_t(d)];
    p.in_red_strides[p.red_ndim++] = strides[std::size_t(d)];
    p.row_len *= shape[std::size_t(d)];
  }
  std::int64_t s = 1;
  for (int d = p.out_ndim - 1; d >= 0; --d) {
    p.out_strides[d] = p.index_strides[d] = s;
    s *= p.out_sizes[d];
  }
  Generator g(seed);
  std::vector<std::byte> in;
  // Sums, means, variances and norms of values of one sign: no cancellation for the
  // float32 accumulation of a GPU to lose against the host's float64.
  const bool smooth = float_only(op) || op == abi::kReduce_sum;
  g.fill(in, t, numel, smooth ? Role::kPositive : Role::kGeneral);
  const bool with_index = op == abi::kReduce_max_with_index || op == abi::kReduce_min_with_index;
  const std::size_t out_bytes = std::size_t(p.rows) * dtype_size(reduce_out_dtype(op, t));
  std::vector<std::byte> host_idx(std::size_t(p.rows) * 8), gpu_idx(host_idx.size());
  const auto expected =
      run_reduce(*devices().host, p, in, out_bytes, with_index ? &host_idx : nullptr);
  const auto got =
      run_reduce(*devices().gpu[0].device, p, in, out_bytes, with_index ? &gpu_idx : nullptr);
  Case c;
  c.out.dtype = reduce_out_dtype(op, t);
  INFO("reduce op " << op << " " << dtype_name(t) << " row_tile " << row_tile << " attr " << attr
                    << " rows " << p.rows << " row_len " << p.row_len << " seed " << seed);
  const std::string problem = compare_outputs(c, expected, got);
  CHECK_MESSAGE(problem.empty(), problem);
  if (with_index) CHECK(host_idx == gpu_idx);
}

TEST_CASE("every reduction matches the host reference over inner, middle, outer and all dims") {
  const std::vector<std::int64_t> shape = {6, 50, 40};
  const std::vector<Reduction> reductions = {
      {{0, 1}, {2}}, {{0, 2}, {1}}, {{1}, {0, 2}}, {{}, {0, 1, 2}}};
  std::uint64_t seed = 5000;
  for (int op = abi::kReduce_sum; op <= abi::kReduce_count_nonzero; ++op) {
    if (op == abi::kReduce_prod) continue;  // below, on short rows
    for (DType t : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kFloat16,
                    DType::kInt32, DType::kInt64, DType::kBool, DType::kUInt8}) {
      if (float_only(op) && !is_floating(t)) continue;
      if (t == DType::kBool && op != abi::kReduce_any && op != abi::kReduce_all &&
          op != abi::kReduce_count_nonzero && op != abi::kReduce_sum)
        continue;
      const std::vector<double> attrs =
          op == abi::kReduce_norm ? std::vector<double>{2, 1, 0, 3, INFINITY, -INFINITY}
          : (op == abi::kReduce_var || op == abi::kReduce_std) ? std::vector<double>{1, 0}
                                                               : std::vector<double>{0};
      for (const Reduction& r : reductions)
        for (int tile : {1, 32, 64, 256})
          for (double attr : attrs) check_reduction(op, t, shape, r, tile, attr, seed++);
    }
  }
}

TEST_CASE("prod matches the host reference on short rows") {
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kInt32, DType::kInt64})
    for (int tile : {1, 8, 64})
      check_reduction(abi::kReduce_prod, t, {30, 7}, {{0}, {1}}, tile, 0, 9000 + tile);
}

}  // namespace
}  // namespace nbx::gputest
