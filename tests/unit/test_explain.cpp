// `nbx explain`'s planner: the decisions it reports are the ones the ops take, for present
// devices and for absent architectures read from their device files.
#include <doctest/doctest.h>

#include <functional>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/capability_resolver.hpp"
#include "core/families/kernel_family.hpp"
#include "core/kernel_abi.hpp"
#include "core/ops/explain.hpp"
#include "core/ops/linalg.hpp"
#include "core/ops/op_catalog.hpp"
#include "nbx/nbx.hpp"

using namespace nbx;

namespace {
ops::OpExplanation on_host(const char* op, std::vector<DType> dtypes, std::vector<Shape> shapes) {
  const Device host = host_device();
  return ops::explain(op, dtypes, shapes, {host.capabilities(), host.str(), host.display_name()});
}
ops::OpExplanation on_arch(const char* op, std::vector<DType> dtypes, std::vector<Shape> shapes,
                           const char* arch) {
  static std::vector<Capabilities> keep;  // PlanTarget holds a reference
  keep.push_back(capabilities_for_arch(arch));
  return ops::explain(op, dtypes, shapes, {keep.back(), arch, std::string("arch ") + arch});
}
const ops::PlanChoice* choice(const ops::OpExplanation& e, const std::string& what) {
  for (const auto& c : e.choices)
    if (c.what == what) return &c;
  return nullptr;
}
}  // namespace

TEST_CASE("explain reports the dtype the op really returns") {
  const Tensor a = Tensor::full({4, 3}, 7, int32), b = Tensor::full({3}, 2, int32);
  const auto e = on_host("div", {int32, int32}, {{4, 3}, {3}});
  REQUIRE_FALSE(e.refused);
  CHECK(e.output == std::string(dtype_name(ops::div(a, b).dtype())) + " [4, 3]");
  CHECK(e.kernel.find("strided") != std::string::npos);
  CHECK(choice(e, "compute_dtype")->value == "float64");

  const Tensor h = Tensor::full({8}, 1.5, float16);
  const auto g = on_host("gelu", {float16}, {{8}});
  CHECK(g.output == "float16 [8]");
  CHECK(choice(g, "compute_dtype")->value == "float32");
  CHECK(ops::gelu(h).dtype() == float16);

  const auto s = on_host("sum", {int8}, {{5, 7}});
  CHECK(s.output == "int64 [5]");
  CHECK(ops::sum(Tensor::full({5, 7}, 3, int8), {-1}).dtype() == int64);
}

TEST_CASE("capability-driven branches differ by architecture") {
  const auto no_fp64 = on_arch("div", {int32, int32}, {{16}}, "vulkan/generic");
  REQUIRE_FALSE(no_fp64.refused);
  CHECK(choice(no_fp64, "compute_dtype")->value == "float32");
  CHECK(choice(no_fp64, "compute_dtype")->capability == "fp64");
  const auto fp64 = on_arch("div", {int32, int32}, {{16}}, "amd/gfx90a");
  CHECK(choice(fp64, "compute_dtype")->value == "float64");

  const auto refused = on_arch("add", {float64, float64}, {{2}}, "vulkan/generic");
  CHECK(refused.refused);
  CHECK(refused.refused_capability == "fp64");

  const auto volta = on_arch("matmul", {float16, float16}, {{64, 64}, {64, 64}}, "nvidia/sm_70");
  CHECK(volta.output == "float32 [64, 64]");
  const auto hopper = on_arch("matmul", {float16, float16}, {{64, 64}, {64, 64}}, "nvidia/sm_90");
  CHECK(hopper.output == "float16 [64, 64]");

  // Contiguous rows on CUDA take the row kernel whatever their length; where it does not
  // serve, a 128k-vocabulary row does not fit shared memory: the looped softmax.
  const auto big = on_arch("softmax", {bfloat16}, {{4, 128256}}, "nvidia/sm_90");
  CHECK(choice(big, "variant")->value == "softmax.rows");
  CHECK(choice(big, "strided_variant")->value == "softmax.looped");
  const auto small = on_arch("softmax", {bfloat16}, {{4, 4096}}, "nvidia/sm_90");
  CHECK(choice(small, "variant")->value == "softmax.rows");
  CHECK(choice(small, "strided_variant")->value == "softmax.one_pass");
  // Vulkan has no row kernel: the strided variant runs, and explain names it.
  const auto vk = on_arch("softmax", {float32}, {{4, 4096}}, "mesa/llvmpipe");
  CHECK(choice(vk, "variant")->value == "softmax.one_pass");
  const auto amd = on_arch("sum", {float32}, {{4, 4096}}, "amd/gfx90a");
  CHECK(choice(amd, "variant")->value == "reduce.rows");
  const auto scan = on_arch("cumsum", {float32}, {{4, 4096}}, "amd/gfx90a");
  // Without the runtime's SM count a long row takes a warp; present devices plan with theirs.
  CHECK(choice(scan, "variant")->value == "scan.lanes");
  CHECK(choice(scan, "layout")->value == "32 lanes per row");
  const auto short_rows = on_arch("cumsum", {float32}, {{4096, 20}}, "nvidia/sm_90");
  CHECK(choice(short_rows, "layout")->value == "8 lanes per row");
  const auto vk_long = on_arch("cumsum", {float32}, {{4, 4096}}, "mesa/llvmpipe");
  CHECK(choice(vk_long, "variant")->value == "scan.block");
  CHECK(std::stoi(choice(small, "row_tile")->value) <=
        capabilities_for_arch("nvidia/sm_90").reduce.tile_max.value);
}

TEST_CASE("explain rejects what it cannot describe") {
  CHECK_THROWS_AS(on_host("frobnicate", {float32}, {{2}}), InvalidArgument);
  CHECK_THROWS_AS(on_host("add", {float32}, {{2}}), InvalidArgument);  // add takes two
  const auto bad = on_host("bitwise_and", {float32, float32}, {{2}});
  CHECK(bad.refused);
  CHECK(bad.refusal.find("float32") != std::string::npos);
}

// ---- Every public op, from the catalog.

namespace {

const char* const kAbsentArchs[] = {"nvidia/sm_90", "amd/gfx90a", "nvidia/sm_70"};

// The capabilities `nbx explain --arch A` plans with (cli/cmd_explain.cpp).
const Capabilities& arch_caps(const std::string& arch) {
  static std::map<std::string, Capabilities> cache;
  auto it = cache.find(arch);
  if (it == cache.end()) it = cache.emplace(arch, capabilities_for_arch(arch, "", "")).first;
  return it->second;
}

ops::OpExplanation explain_on(const std::string& arch, const std::string& op,
                              const std::vector<DType>& dtypes, const std::vector<Shape>& shapes,
                              ops::ExplainArgs args = {}) {
  if (arch == "host") {
    const Device host = host_device();
    return ops::explain(op, dtypes, shapes, {host.capabilities(), host.str(), host.display_name()},
                        args);
  }
  return ops::explain(op, dtypes, shapes, {arch_caps(arch), arch, "arch " + arch}, args);
}

std::string described(const Tensor& t) {
  return std::string(dtype_name(t.dtype())) + " " + to_string(t.shape());
}

// Seeded values of magnitude 0.25 … 2 with random signs (never zero), in `dtype`.
Tensor random_tensor(std::mt19937& rng, const Shape& shape, DType dtype = float32) {
  std::uniform_real_distribution<float> mag(0.25f, 2.0f);
  std::bernoulli_distribution neg(0.5);
  std::vector<float> v(static_cast<std::size_t>(numel(shape)));
  for (float& x : v) x = neg(rng) ? -mag(rng) : mag(rng);
  return Tensor::from_host(v, shape).to(dtype);
}

}  // namespace

TEST_CASE("explain covers every op of the catalog on the host and on absent architectures") {
  const auto catalog = ops::op_catalog();
  REQUIRE(catalog.size() > 100);
  for (const ops::OpEntry& entry : catalog) {
    for (const std::string arch : {"host", "nvidia/sm_90", "amd/gfx90a", "nvidia/sm_70"}) {
      CAPTURE(entry.name);
      CAPTURE(arch);
      ops::OpExplanation e;
      REQUIRE_NOTHROW(e = explain_on(arch, entry.name, entry.example_dtypes, entry.example_shapes));
      CAPTURE(e.refusal);
      CHECK_FALSE(e.refused);
      CHECK_FALSE(e.kernel.empty());
      CHECK_FALSE(e.output.empty());
      CHECK(e.family == entry.family);
      CHECK_FALSE(e.choices.empty());
    }
  }
  CHECK(ops::explainable_ops().size() == catalog.size());
}

TEST_CASE("the catalog's names are the union of the op tables") {
  std::set<std::string> names;
  for (const ops::OpEntry& e : ops::op_catalog()) CHECK(names.insert(e.name).second);  // unique

  // Every row of the X-macro lists is in the catalog under its family and op code.
  struct Row {
    const char* name;
    int code;
    int arity;
  };
  const Row elementwise[] = {
#define NBX_ELEMENTWISE_OP(name, code, arity) {#name, code, arity},
#include "core/elementwise_op_list.inc"
#undef NBX_ELEMENTWISE_OP
  };
  const Row reductions[] = {
#define NBX_REDUCE_OP(name, code) {#name, code, 1},
#include "core/reduce_op_list.inc"
#undef NBX_REDUCE_OP
  };
  const auto rows_of = [](const char* table_op, const char* family) {
    std::vector<const ops::OpEntry*> found;
    for (const ops::OpEntry& e : ops::op_catalog())
      if (e.table_op == table_op && e.family == family) found.push_back(&e);
    return found;
  };
  std::set<std::string> expected;
  for (const Row& r : elementwise) {
    CAPTURE(r.name);
    const auto found = rows_of(r.name, "elementwise");
    REQUIRE_FALSE(found.empty());
    for (const ops::OpEntry* e : found) {
      CHECK(e->code == r.code);
      expected.insert(e->name);
      // The gated products take one fused input, whose halves are the table op's operands.
      const bool fused = e->name == "glu" || e->name == "silu_and_mul" ||
                         e->name == "gelu_and_mul" || e->name == "gelu_tanh_and_mul";
      if (fused) CHECK(e->operands == 1);
      if (!fused && e->name != "masked_fill" && e->table_op != "copy")
        CHECK(e->operands == r.arity);
    }
  }
  for (const Row& r : reductions) {
    CAPTURE(r.name);
    const auto found = rows_of(r.name, "reduce");
    REQUIRE(found.size() == 1);
    CHECK(found[0]->code == r.code);
    expected.insert(found[0]->name);
  }
  // The public names of those rows: the dtype rules' and reduce.hpp's.
  for (const std::string& n : ops::elementwise_op_names()) CHECK(expected.count(n));
  for (const std::string& n : ops::reduction_op_names()) CHECK(expected.count(n));
  for (const char* n : {"copy", "cast", "to", "full", "fill", "gelu", "masked_fill"})
    CHECK(expected.count(n));

  // The enum families (kernel_abi_families.hpp), by code, and the matmul forms.
  const auto expect_codes = [&](const char* family, std::vector<std::pair<const char*, int>> ops) {
    for (const auto& op : ops) {
      // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
      const char* name = op.first;
      const int code = op.second;
      CAPTURE(name);
      const ops::OpEntry* e = ops::find_op(name);
      REQUIRE(e != nullptr);
      CHECK(e->family == family);
      CHECK(e->code == code);
      expected.insert(name);
    }
  };
  expect_codes("scan", {{"cumsum", abi::kScan_cumsum},
                        {"cumprod", abi::kScan_cumprod},
                        {"cummax", abi::kScan_cummax},
                        {"cummin", abi::kScan_cummin},
                        {"logcumsumexp", abi::kScan_logcumsumexp}});
  expect_codes("softmax", {{"softmax", abi::kSoftmax_softmax},
                           {"log_softmax", abi::kSoftmax_log_softmax},
                           {"scaled_masked_softmax", abi::kSoftmax_softmax},
                           {"softmax_with_temperature", abi::kSoftmax_softmax}});
  expect_codes("norm", {{"layer_norm", abi::kNorm_layer_norm},
                        {"rms_norm", abi::kNorm_rms_norm},
                        {"group_norm", abi::kNorm_group_norm},
                        {"batch_norm", abi::kNorm_batch_norm}});
  expect_codes("fill", {{"arange", abi::kFill_arange},
                        {"linspace", abi::kFill_linspace},
                        {"triu", abi::kFill_triu},
                        {"tril", abi::kFill_tril},
                        {"eye", abi::kFill_eye}});
  // The sort family's op and the ops composed on its one launch.
  expect_codes("sort", {{"sort", abi::kSort_sort},
                        {"argsort", abi::kSort_sort},
                        {"msort", abi::kSort_sort},
                        {"topk", abi::kSort_topk},
                        {"kthvalue", abi::kSort_sort},
                        {"median", abi::kSort_sort},
                        {"nanmedian", abi::kSort_sort},
                        {"quantile", abi::kSort_sort},
                        {"nanquantile", abi::kSort_sort},
                        {"mode", abi::kSort_sort},
                        {"unique", abi::kSort_sort}});
  expect_codes("gather", {{"index_select", abi::kGather_index_select},
                          {"gather", abi::kGather_gather},
                          {"take_along_dim", abi::kGather_take_along_dim},
                          {"embedding", abi::kGather_embedding},
                          {"take", abi::kGather_take}});
  expect_codes("gather", {{"masked_scatter", abi::kGather_take}});
  expect_codes("scatter", {{"scatter", abi::kScatter_scatter},
                           {"scatter_add", abi::kScatter_scatter_add},
                           {"scatter_reduce", abi::kScatter_scatter_reduce},
                           {"index_add", abi::kScatter_index_add},
                           {"index_copy", abi::kScatter_index_copy},
                           {"index_fill", abi::kScatter_index_fill},
                           {"index_put", abi::kScatter_index_put},
                           {"masked_select", abi::kScatter_masked_select},
                           {"nonzero", abi::kScatter_nonzero},
                           {"argwhere", abi::kScatter_nonzero},
                           {"one_hot", abi::kScatter_one_hot},
                           {"bincount", abi::kScatter_bincount}});
  expect_codes("search", {{"searchsorted", abi::kSearch_searchsorted},
                          {"bucketize", abi::kSearch_bucketize}});
  expect_codes("rotary", {{"rotary_embedding", abi::kRotary_rotary_embedding}});
  expect_codes("grouped_matmul", {{"grouped_matmul", abi::kGroupedMatmul_grouped_matmul}});
  // The MoE compositions on it (family "moe").
  expect_codes("moe", {{"fused_moe", 0}, {"moe_route", 0}, {"moe_permute", 0}, {"moe_combine", 0}});
  // cat and stack: the join family's one op.
  expect_codes("join", {{"cat", abi::kJoin_cat}, {"stack", abi::kJoin_cat}});
  // The shape ops: compositions of views, copies, index_select and sum (family "shape").
  expect_codes("shape", {{"split", 0},
                         {"chunk", 0},
                         {"meshgrid", 0},
                         {"repeat", 0},
                         {"tile", 0},
                         {"repeat_interleave", 0},
                         {"flip", 0},
                         {"roll", 0},
                         {"rot90", 0},
                         {"pixel_shuffle", 0},
                         {"pixel_unshuffle", 0},
                         {"diagonal", 0},
                         {"diag_embed", 0},
                         {"trace", 0},
                         {"pad", 0},
                         {"narrow_copy", 0},
                         {"unfold", 0},
                         {"tril_indices", 0},
                         {"triu_indices", 0}});
  // scaled_dot_product_attention: the math path's composition (family "attention").
  expect_codes("attention", {{"scaled_dot_product_attention", 0}});
  // The losses: compositions of reductions, gathers and elementwise ops (family "loss").
  expect_codes("loss", {{"cross_entropy", 0},
                        {"nll_loss", 0},
                        {"mse_loss", 0},
                        {"l1_loss", 0},
                        {"smooth_l1_loss", 0},
                        {"binary_cross_entropy_with_logits", 0},
                        {"kl_div", 0}});
  // Every op code a family's table names (core/families) is in the catalog under that
  // family: a family added to family_list.inc without catalog entries fails here.
  for (const FamilySpec& spec : all_families()) {
    if (spec.family == KernelFamily::kMatmul || spec.family == KernelFamily::kTimestamp ||
        spec.family == KernelFamily::kCopyProbe)
      continue;  // matmul's forms are checked below; the diagnostics are not public ops
    CAPTURE(spec.name);
    int named = 0;
    for (int code = 0; code < 64; ++code) {
      const std::string op = spec.op_name(code);
      if (op.rfind(std::string(spec.name) + " op ", 0) == 0) continue;  // no such code
      ++named;
      CAPTURE(op);
      CHECK_FALSE(rows_of(op.c_str(), std::string(spec.name).c_str()).empty());
    }
    CHECK(named > 0);
  }
  for (const ops::ProductForm& f : ops::product_forms()) {
    const ops::OpEntry* e = ops::find_op(f.name);
    REQUIRE(e != nullptr);
    CHECK(e->family == "matmul");
    CHECK(e->operands == f.operands);
    expected.insert(std::string(f.name));
  }
  CHECK(ops::product_forms().size() == 10);
  CHECK(names == expected);
}

TEST_CASE("scans: cumsum of int32 accumulates in int64 and returns int64, as PyTorch") {
  std::mt19937 rng(20261201);
  const auto e = explain_on("host", "cumsum", {int32}, {{4, 1000}});
  REQUIRE_FALSE(e.refused);
  CHECK(e.output == "int64 [4, 1000]");
  CHECK(choice(e, "accumulate_dtype")->value == "int64");
  CHECK(choice(e, "out_dtype")->capability == "int64");
  const Tensor x = random_tensor(rng, {4, 1000}, int32);
  CHECK(e.output == described(ops::cumsum(x, -1)));
  CHECK(e.kernel.find("4 rows of 1000") != std::string::npos);

  const auto half = explain_on("nvidia/sm_90", "cumprod", {float16}, {{8, 64}});
  CHECK(half.output == "float16 [8, 64]");
  CHECK(choice(half, "accumulate_dtype")->value == "float32");

  const auto extreme = explain_on("amd/gfx90a", "cummax", {int32}, {{3, 5}});
  CHECK(extreme.output == "int32 [3, 5] and int64 [3, 5] (indices)");
  CHECK(choice(extreme, "indices_dtype")->value == "int64");

  // No int64 on the generic Vulkan device: the int64 sum is refused by name.
  const auto no_int64 = explain_on("vulkan/generic", "cumsum", {int32}, {{4, 1000}});
  CHECK(no_int64.refused);
  CHECK(no_int64.refused_capability == "int64");
  const auto floats = explain_on("vulkan/generic", "cumsum", {float32}, {{4, 1000}});
  CHECK_FALSE(floats.refused);
}

TEST_CASE("div of int32 on vulkan/generic widens through float32 (the --arch path)") {
  const auto e = explain_on("vulkan/generic", "div", {int32, int32}, {{4, 1000}, {1000}});
  REQUIRE_FALSE(e.refused);
  CHECK(e.output == "float32 [4, 1000]");
  CHECK(choice(e, "compute_dtype")->value == "float32");
  CHECK(choice(e, "compute_dtype")->capability == "fp64");
  CHECK(choice(e, "input_dtype")->value == "int32");
  CHECK(e.kernel.find("strided") != std::string::npos);
  const auto sm70 = explain_on("nvidia/sm_70", "div", {int32, int32}, {{4, 1000}, {1000}});
  CHECK(choice(sm70, "compute_dtype")->value == "float64");
}

TEST_CASE("explain's output is what each non-elementwise op returns on the host") {
  std::mt19937 rng(20261202);
  const auto check_op = [&](const std::string& op, const std::vector<Shape>& shapes,
                            const std::function<Tensor(const std::vector<Tensor>&)>& run,
                            ops::ExplainArgs args = {}) {
    CAPTURE(op);
    std::vector<Tensor> in;
    for (const Shape& s : shapes) in.push_back(random_tensor(rng, s));
    const auto e = explain_on("host", op, std::vector<DType>(shapes.size(), float32), shapes, args);
    CAPTURE(e.refusal);
    REQUIRE_FALSE(e.refused);
    std::string output = e.output;
    const auto indices = output.find(" and int64");
    if (indices != std::string::npos) output.resize(indices);
    CHECK(output == described(run(in)));
  };
  using V = const std::vector<Tensor>&;
  check_op("cumsum", {{4, 7}}, [](V t) { return ops::cumsum(t[0], -1); });
  check_op("cummin", {{4, 7}}, [](V t) { return ops::cummin(t[0], -1).values; });
  check_op("max", {{4, 7}}, [](V t) { return ops::max(t[0], -1).values; });
  check_op("argmax", {{4, 7}}, [](V t) { return ops::argmax(t[0], -1); });
  check_op("softmax", {{4, 7}}, [](V t) { return ops::softmax(t[0], -1); });
  check_op("scaled_masked_softmax", {{4, 7}},
           [](V t) { return ops::scaled_masked_softmax(t[0], -1, 0.5); });
  check_op("softmax_with_temperature", {{4, 7}},
           [](V t) { return ops::softmax_with_temperature(t[0], -1, 0.5); });
  check_op("layer_norm", {{4, 7}}, [](V t) { return ops::layer_norm(t[0], {7}); });
  check_op("rms_norm", {{4, 7}}, [](V t) { return ops::rms_norm(t[0], {7}); });
  check_op("group_norm", {{2, 6, 3}}, [](V t) { return ops::group_norm(t[0], 3); }, {3});
  check_op("triu", {{3, 5, 5}}, [](V t) { return ops::triu(t[0], 1); });
  check_op("copy", {{4, 7}}, [](V t) { return ops::copy(t[0]); });
  check_op("fill", {{4, 7}}, [](V t) { return ops::fill(t[0], 2.5); });
  for (const ops::ProductForm& form : ops::product_forms()) {
    const ops::OpEntry* entry = ops::find_op(form.name);
    REQUIRE(entry != nullptr);
    const std::string name(form.name);
    check_op(name, entry->example_shapes, [&](V t) {
      if (name == "matmul") return ops::matmul(t[0], t[1]);
      if (name == "mm") return ops::mm(t[0], t[1]);
      if (name == "mv") return ops::mv(t[0], t[1]);
      if (name == "dot") return ops::dot(t[0], t[1]);
      if (name == "bmm") return ops::bmm(t[0], t[1]);
      if (name == "addmm") return ops::addmm(t[0], t[1], t[2]);
      if (name == "baddbmm") return ops::baddbmm(t[0], t[1], t[2]);
      if (name == "addmv") return ops::addmv(t[0], t[1], t[2]);
      if (name == "addr") return ops::addr(t[0], t[1], t[2]);
      REQUIRE(name == "linear");
      return ops::linear(t[0], t[1], t.size() > 2 ? std::optional<Tensor>(t[2]) : std::nullopt);
    });
  }
  // Forms whose shapes differ from the examples: vectors squeezed back, a 1-d weight.
  check_op("matmul", {{7}, {7, 3}}, [](V t) { return ops::matmul(t[0], t[1]); });
  check_op("linear", {{7}, {7}}, [](V t) { return ops::linear(t[0], t[1]); });
  check_op("linear", {{2, 5, 7}, {7}, {}}, [](V t) { return ops::linear(t[0], t[1], t[2]); });
  check_op("addmv", {{}, {4, 7}, {7}}, [](V t) { return ops::addmv(t[0], t[1], t[2]); });

  // Casts, creation: their dtypes are not float32 operands.
  const Tensor x = random_tensor(rng, {4, 7});
  CHECK(explain_on("host", "cast", {float32, bfloat16}, {{4, 7}}).output ==
        described(ops::cast(x, bfloat16)));
  const auto same = explain_on("host", "to", {float32, float32}, {{4, 7}});
  CHECK(same.kernel.find("none") != std::string::npos);
  CHECK(explain_on("host", "to", {float32, int8}, {{4, 7}}).output == described(x.to(int8)));
  CHECK(explain_on("host", "full", {int16}, {{3, 2}}).output ==
        described(ops::full({3, 2}, 7, int16)));
  CHECK(explain_on("host", "arange", {int64}, {{9}}).output ==
        described(ops::arange(0, 9, 1, int64)));
  CHECK(explain_on("host", "linspace", {float64}, {{5}}).output ==
        described(ops::linspace(0.0, 1.0, 5, float64)));
  const Tensor mask =
      Tensor::from_host(std::vector<bool>{true, false, true, false, true, false, true}, {7});
  CHECK(explain_on("host", "masked_fill", {float32, bool_}, {{4, 7}, {7}}).output ==
        described(ops::masked_fill(x, mask, 1.5)));
}

TEST_CASE("explain refuses with the op's own message") {
  std::mt19937 rng(20261203);
  const auto same_refusal = [](const ops::OpExplanation& e, const std::function<void()>& run) {
    CAPTURE(e.op);
    REQUIRE(e.refused);
    try {
      run();
      FAIL("the op did not refuse");
    } catch (const Error& err) {
      CHECK(e.refusal == err.what());
    }
  };
  const Tensor x = random_tensor(rng, {2, 6, 3});
  same_refusal(explain_on("host", "group_norm", {float32}, {{2, 6, 3}}, {4}),
               [&] { ops::group_norm(x, 4); });
  const Tensor a = random_tensor(rng, {4, 5}), b = random_tensor(rng, {6, 3});
  same_refusal(explain_on("host", "mm", {float32, float32}, {{4, 5}, {6, 3}}),
               [&] { ops::mm(a, b); });
  same_refusal(explain_on("host", "bmm", {float32, float32}, {{4, 5}, {5, 3}}),
               [&] { ops::bmm(a, a); });
  const Tensor v = random_tensor(rng, {5}), w = random_tensor(rng, {4});
  same_refusal(explain_on("host", "dot", {float32, float32}, {{5}, {4}}), [&] { ops::dot(v, w); });
  const Tensor i = random_tensor(rng, {4}, int32);
  same_refusal(explain_on("host", "layer_norm", {int32}, {{4}}), [&] { ops::layer_norm(i, {4}); });
  same_refusal(explain_on("host", "triu", {float32}, {{5}}), [&] { ops::triu(v); });
  same_refusal(explain_on("host", "mm", {float32, float16}, {{4, 5}, {5, 3}}), [&] {
    ops::mm(a, random_tensor(rng, {5, 3}, float16));
  });
}

TEST_CASE("capability choices of the creation and norm plans") {
  // No int64 on the generic Vulkan device: an int32 range is computed in int32 when its
  // ends fit; without fp64 an integer linspace steps in float32.
  const auto range = explain_on("vulkan/generic", "arange", {int32}, {{1000}});
  REQUIRE_FALSE(range.refused);
  CHECK(choice(range, "compute_dtype")->value == "int32");
  CHECK(choice(range, "compute_dtype")->capability == "int64");
  CHECK(choice(explain_on("host", "arange", {int32}, {{1000}}), "compute_dtype")->value == "int64");
  CHECK(choice(explain_on("vulkan/generic", "linspace", {int32}, {{10}}), "compute_dtype")->value ==
        "float32");
  CHECK(choice(explain_on("nvidia/sm_70", "linspace", {int32}, {{10}}), "compute_dtype")->value ==
        "float64");

  const auto groups = explain_on("nvidia/sm_90", "group_norm", {bfloat16}, {{8, 32, 16, 16}}, {4});
  REQUIRE_FALSE(groups.refused);
  CHECK(groups.kernel.find("32 rows of 2048") != std::string::npos);
  CHECK(choice(groups, "accumulate_dtype")->value == "float32");
  const auto batch = explain_on("amd/gfx90a", "batch_norm", {float16}, {{8, 32, 16, 16}});
  CHECK(batch.kernel.find("8 rows of 8192") != std::string::npos);
}

TEST_CASE("explain checks the operand count against the catalog") {
  CHECK_THROWS_AS(explain_on("host", "cumsum", {float32, float32}, {{4}}), InvalidArgument);
  CHECK_THROWS_AS(explain_on("host", "addmm", {float32, float32}, {{4, 4}}), InvalidArgument);
  // linear's bias is optional.
  CHECK_FALSE(explain_on("host", "linear", {float32, float32}, {{8, 32}, {16, 32}}).refused);
  CHECK_FALSE(
      explain_on("host", "linear", {float32, float32, float32}, {{8, 32}, {16, 32}, {16}}).refused);
}
