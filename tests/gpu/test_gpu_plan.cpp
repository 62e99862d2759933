// The CUDA/HIP launcher's host-side decisions, without a GPU (runs everywhere, CI too):
// validation of parameter blocks, dimension collapsing, and which kernel a layout takes.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdlib>

#include "core/errors.hpp"
#include "kernels/gpu/elementwise_plan.hpp"

namespace nbx::gpu {
namespace {

constexpr int kF32 = 8;

// A binary float32 launch over `sizes` with the given strides (out, in0, in1).
abi::ElementwiseParams binary(std::vector<std::int64_t> sizes,
                              std::vector<std::vector<std::int64_t>> strides) {
  abi::ElementwiseParams p{};
  p.op = abi::kOp_add;
  p.num_inputs = 2;
  p.ndim = int(sizes.size());
  p.compute_dtype = kF32;
  p.numel = 1;
  for (int d = 0; d < p.ndim; ++d) {
    p.sizes[d] = sizes[std::size_t(d)];
    p.numel *= p.sizes[d];
  }
  abi::ElementwiseOperand* ops[] = {&p.out, &p.in[0], &p.in[1]};
  for (int k = 0; k < 3; ++k) {
    ops[k]->dtype = kF32;
    for (int d = 0; d < p.ndim; ++d) ops[k]->strides[d] = strides[std::size_t(k)][std::size_t(d)];
  }
  return p;
}

alignas(64) char arena[1 << 16];

PathChoice choose(const abi::ElementwiseParams& p, int tile = 0, std::ptrdiff_t misalign = 0) {
  const void* addresses[4] = {arena, arena + misalign, arena, arena};
  ElementwiseOptions options;
  options.warp_size = 32;
  options.tile = tile;
  return choose_path(p, collapse_dimensions(p), 4, 4, addresses, options);
}

TEST_CASE("contiguous views collapse to one dimension and take the vectorised path") {
  const auto p = binary({8, 16, 32}, {{512, 32, 1}, {512, 32, 1}, {512, 32, 1}});
  const ElementwisePlan plan = collapse_dimensions(p);
  CHECK(plan.ndim == 1);
  CHECK(plan.sizes[0] == 4096);
  CHECK(choose(p).path == ElementwisePath::kContiguous);
  CHECK(choose(p, 0, 4).path == ElementwisePath::kNone);  // misaligned by one float
}

TEST_CASE("a broadcast bias takes the rows path, over the collapsed [rows, cols] view") {
  const auto p = binary({4, 64, 128}, {{8192, 128, 1}, {8192, 128, 1}, {0, 0, 1}});
  const PathChoice c = choose(p);
  CHECK(c.path == ElementwisePath::kRows);
  CHECK(c.rows == 256);
  CHECK(c.cols == 128);
  CHECK(c.in_stride0[1] == 0);
  CHECK(c.in_stride1[1] == 1);
  // A row length that is not a multiple of the vector width: generic kernel.
  CHECK(choose(binary({4, 66}, {{66, 1}, {66, 1}, {0, 1}})).path == ElementwisePath::kNone);
}

TEST_CASE("a 0-d tensor operand is one row with a stride-0 operand") {
  const PathChoice c = choose(binary({32, 64}, {{64, 1}, {64, 1}, {0, 0}}));
  CHECK(c.path == ElementwisePath::kRows);
  CHECK(c.rows == 1);
  CHECK(c.cols == 2048);
}

TEST_CASE("a transposed operand takes the tiled path; the tile follows the warp or the option") {
  const auto p = binary({100, 300}, {{300, 1}, {300, 1}, {1, 100}});
  CHECK(choose(p).path == ElementwisePath::kTiled);
  CHECK(choose(p).tile == 32);
  CHECK(choose(p, 64).tile == 64);
}

TEST_CASE("other layouts go to the generic kernel") {
  // Strided along the row (every other element).
  CHECK(choose(binary({10, 20}, {{20, 1}, {40, 2}, {20, 1}})).path == ElementwisePath::kNone);
  // Three dimensions that do not collapse.
  CHECK(choose(binary({4, 5, 6}, {{30, 6, 1}, {30, 6, 1}, {0, 1, 0}})).path ==
        ElementwisePath::kNone);
  // A transposed output.
  CHECK(choose(binary({10, 20}, {{1, 10}, {20, 1}, {20, 1}})).path == ElementwisePath::kNone);
}

TEST_CASE("the environment overrides are read and checked") {
  ElementwiseOptions o;
  setenv("NBX_GPU_TILE", "64", 1);
  setenv("NBX_GPU_ELEMENTWISE", "generic", 1);
  apply_environment(o);
  CHECK(o.tile == 64);
  CHECK(o.generic_only);
  setenv("NBX_GPU_TILE", "48", 1);
  CHECK_THROWS_AS(apply_environment(o), InvalidArgument);
  unsetenv("NBX_GPU_TILE");
  unsetenv("NBX_GPU_ELEMENTWISE");
  // Launch batching: on unless NBX_GPU_BATCH=0.
  ElementwiseOptions b;
  CHECK(b.batch_max_numel > 0);
  setenv("NBX_GPU_BATCH", "0", 1);
  apply_environment(b);
  CHECK(b.batch_max_numel == 0);
  setenv("NBX_GPU_BATCH", "1", 1);
  apply_environment(b);
  CHECK(b.batch_max_numel == ElementwiseOptions{}.batch_max_numel);
  setenv("NBX_GPU_BATCH", "1024", 1);
  apply_environment(b);
  CHECK(b.batch_max_numel == 1024);
  setenv("NBX_GPU_BATCH", "-3", 1);
  CHECK_THROWS_AS(apply_environment(b), InvalidArgument);
  setenv("NBX_GPU_BATCH", "yes", 1);
  CHECK_THROWS_AS(apply_environment(b), InvalidArgument);
  unsetenv("NBX_GPU_BATCH");
}

TEST_CASE("op names and arities come from the op table") {
  CHECK(std::string(elementwise_op_name(abi::kOp_floor_divide)) == "floor_divide");
  CHECK(elementwise_op_arity(abi::kOp_where) == 3);
  CHECK(elementwise_op_arity(39) == 0);
}

}  // namespace
}  // namespace nbx::gpu
