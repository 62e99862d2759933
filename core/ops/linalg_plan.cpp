// The matmul plan (linalg.hpp: plan_matmul): output and accumulate dtypes, the tile that fits
// the device's shared memory, and the variant — vendor BLAS, cooperative matrix or the own
// tiled kernel — each with the capability that drove it, as `nbx explain` shows; and
// plan_product, the shape rules of each public form (mm, addmv, linear …) before it.
#include <algorithm>
#include <atomic>
#include <cstdlib>

#include "core/ops/elementwise_launch.hpp"
#include "core/ops/linalg.hpp"

namespace nbx::ops {
namespace {

std::string dtype_str(DType t) {
  return std::string(dtype_name(t));
}

// The dtype capability a plan needs, checked on Capabilities alone so that `nbx explain`
// refuses for an absent architecture exactly as the wrapper would on the device.
void require_dtype(const std::string& op, DType t, const Capabilities& caps) {
  const char* key = nullptr;
  const Capability<bool>* flag = nullptr;
  switch (t) {
    case DType::kFloat64:
      key = "fp64", flag = &caps.fp64;
      break;
    case DType::kFloat16:
      key = "fp16", flag = &caps.fp16;
      break;
    case DType::kInt64:
      key = "int64", flag = &caps.int64;
      break;
    case DType::kInt8:
    case DType::kUInt8:
      key = "int8", flag = &caps.int8;
      break;
    default:
      break;
  }
  std::string source;
  if (flag && !flag->value) source = flag->source;
  if (t == DType::kBFloat16 && caps.bf16.value == Bf16Support::kNone)
    key = "bf16", source = caps.bf16.source;
  if (source.empty()) return;
  throw Unsupported(op, caps.device, key,
                    op + " on " + caps.device + ": " + dtype_str(t) + " tensors need the '" + key +
                        "' capability, which this device does not have (" + source + "); refused.");
}

struct TileShape {
  int m, n, k;
};
constexpr TileShape kTiles[] = {{128, 128, 32}, {128, 64, 32}, {64, 64, 32},
                                {64, 64, 16},   {32, 32, 16},  {16, 16, 16}};
constexpr int kWantedStages = 4;

void choose_tile(MatmulPlan& plan, const Capabilities& caps, const std::string& op) {
  const std::int64_t item = static_cast<std::int64_t>(dtype_size(plan.in_dtype));
  const std::int64_t limit = caps.shared_memory_per_block.value;
  const int max_stages = std::clamp(caps.pipelining.max_num_stages.value, 1, kWantedStages);
  plan.shared_memory_limit = limit;
  // First pass keeps the pipeline (≥ 2 stages) where the device has one; the second takes
  // any tile that fits at all.
  for (int min_stages : {std::min(2, max_stages), 1}) {
    for (const TileShape& t : kTiles) {
      const std::int64_t per_stage = static_cast<std::int64_t>(t.m + t.n) * t.k * item;
      const auto stages = static_cast<int>(std::min<std::int64_t>(max_stages, limit / per_stage));
      if (stages < min_stages) continue;
      plan.tile_m = t.m, plan.tile_n = t.n, plan.tile_k = t.k, plan.num_stages = stages;
      plan.shared_memory_bytes = per_stage * stages;
      const std::string tile =
          std::to_string(t.m) + "x" + std::to_string(t.n) + "x" + std::to_string(t.k);
      plan.choices.push_back(
          {"tile", tile, "shared_memory.per_block", caps.shared_memory_per_block.source,
           "The largest tile whose " + std::to_string(stages) + "-stage footprint (" +
               std::to_string(plan.shared_memory_bytes) +
               " bytes) fits the shared memory per block (" + std::to_string(limit) + " bytes)."});
      plan.choices.push_back(
          {"num_stages", std::to_string(stages), "pipelining.max_num_stages",
           caps.pipelining.max_num_stages.source,
           "As many stages as fit, at most " + std::to_string(max_stages) + "."});
      return;
    }
  }
  const TileShape& smallest = kTiles[std::size(kTiles) - 1];
  throw Unsupported(op, caps.device, "shared_memory.per_block",
                    op + " on " + caps.device + ": the smallest " + dtype_str(plan.in_dtype) +
                        " tile (" + std::to_string(smallest.m) + "x" + std::to_string(smallest.n) +
                        "x" + std::to_string(smallest.k) + ", " +
                        std::to_string((smallest.m + smallest.n) * smallest.k * item) +
                        " bytes) does not fit the shared memory per block (" +
                        std::to_string(limit) + " bytes, " + caps.shared_memory_per_block.source +
                        "); refused.");
}

// ---- The variant: which kernel runs the product.

std::atomic<int> g_request{-1};  // -1: NBX_MATMUL not read yet

MatmulRequest parse_request(const char* text) {
  const std::string v = text ? text : "";
  if (v.empty() || v == "auto") return MatmulRequest::kAuto;
  if (v == "tiled") return MatmulRequest::kTiled;
  if (v == "blas") return MatmulRequest::kBlas;
  if (v == "coopmat") return MatmulRequest::kCoopMatrix;
  throw InvalidArgument(
      "matmul", "NBX_MATMUL='" + v + "' is not a matmul variant (auto, tiled, blas, coopmat).");
}

bool blas_dtype(DType t) {
  return t == DType::kFloat16 || t == DType::kBFloat16 || t == DType::kFloat32 ||
         t == DType::kFloat64;
}

// Whether the device offers a variant, and the provenance that says so.
struct Offer {
  bool offered = false;
  std::string source;
};

Offer blas_offer(const Capabilities& caps, const BackendDevice* device) {
  if (device) {
    const auto& extra = device->properties().extra;
    const auto it = extra.find("matmul.blas");
    const std::string note = it == extra.end() ? "" : " (" + it->second + ")";
    if (device->offers(KernelFamily::kMatmul, abi::kMatmulVendorBlas))
      return {true, "runtime: offers(matmul.blas)" + note};
    return {false, "runtime: no \"matmul.blas\" kernel" +
                       (note.empty() ? std::string(" (the backend has no vendor BLAS)") : note)};
  }
  if (caps.backend == "cuda")
    return {true, "derived: backend cuda (" +
                      (caps.device_file.empty() ? caps.device : caps.device_file) +
                      "): vendor BLAS (cuBLASLt) when the library loads at run time"};
  return {false, "derived: backend " + caps.backend + " has no vendor BLAS"};
}

Offer coopmat_offer(const Capabilities& caps, const BackendDevice* device) {
  if (device) {
    if (device->offers(KernelFamily::kMatmul, abi::kMatmulCoopMatrix))
      return {true, "runtime: offers(matmul.coopmat)"};
    return {false, "runtime: no \"matmul.coopmat\" kernel"};
  }
  const bool unit = caps.matrix_unit.value == MatrixUnit::kCoopmat ||
                    caps.matrix_unit.value == MatrixUnit::kCoopmat2;
  if (caps.backend == "vulkan" && unit)
    return {true, "derived: backend vulkan, matrix.unit " +
                      std::string(to_string(caps.matrix_unit.value)) + " (" +
                      caps.matrix_unit.source + ")"};
  return {false, "derived: backend " + caps.backend + ", matrix.unit " +
                     std::string(to_string(caps.matrix_unit.value))};
}

void choose_variant(MatmulPlan& plan, const Capabilities& caps, const BackendDevice* device,
                    const std::string& op) {
  const DType t = plan.in_dtype;
  const MatmulRequest request = matmul_variant_request();
  const Offer blas = blas_offer(caps, device);
  const Offer coop = coopmat_offer(caps, device);
  // Float16 only: the cooperative-matrix shaders are built for float16 fragments (glslc
  // has no bfloat16 type), so bfloat16 products stay on the tiled kernel.
  const bool coop_dtype = t == DType::kFloat16;
  const auto take = [&](abi::MatmulVariant v, const std::string& key, const std::string& source,
                        const std::string& reason) {
    plan.variant = v;
    plan.choices.push_back(
        {"variant", ::nbx::variant_name(KernelFamily::kMatmul, v), key, source, reason});
  };
  const auto refuse = [&](const std::string& key, const std::string& why) {
    throw Unsupported(op, caps.device, key,
                      op + " on " + caps.device + ": NBX_MATMUL asks for the " + key +
                          " variant, but " + why + "; refused.");
  };
  switch (request) {
    case MatmulRequest::kTiled:
      return take(abi::kMatmulTiled, "", "",
                  "NBX_MATMUL=tiled asks for the own tiled kernel (kernels/gpu, kernels/vulkan).");
    case MatmulRequest::kBlas:
      if (!blas.offered)
        refuse("matmul.blas", "the device has no vendor BLAS (" + blas.source + ")");
      if (!blas_dtype(t))
        refuse("matmul.blas", "the vendor BLAS has no " + dtype_str(t) + " product");
      return take(abi::kMatmulVendorBlas, "matmul.blas", blas.source,
                  "NBX_MATMUL=blas asks for the vendor BLAS (cuBLASLt).");
    case MatmulRequest::kCoopMatrix:
      if (!coop.offered)
        refuse("matmul.coopmat",
               "the device has no cooperative-matrix kernel (" + coop.source + ")");
      if (!coop_dtype)
        refuse("matmul.coopmat",
               "the cooperative-matrix kernel takes float16, not " + dtype_str(t));
      return take(abi::kMatmulCoopMatrix, "matmul.coopmat", coop.source,
                  "NBX_MATMUL=coopmat asks for the cooperative-matrix kernel.");
    case MatmulRequest::kAuto:
      break;
  }
  if (blas.offered && blas_dtype(t))
    return take(abi::kMatmulVendorBlas, "matmul.blas", blas.source,
                "The vendor BLAS (cuBLASLt) is the fastest path for floating products "
                "(float32 without TF32, 16-bit floats accumulate in float32); the tile above is "
                "the own kernel's, which NBX_MATMUL=tiled takes.");
  if (coop.offered && coop_dtype)
    return take(abi::kMatmulCoopMatrix, "matmul.coopmat", coop.source,
                "float16 runs on the device's cooperative-matrix unit.");
  std::string why = "The own tiled kernel";
  if (blas.offered)
    why += ": the vendor BLAS has no wrapping " + dtype_str(t) + " product";
  else if (device && device->properties().extra.count("matmul.blas"))
    why += ": the vendor BLAS is unavailable";
  else
    why += ": the device offers no vendor BLAS or cooperative-matrix kernel for " + dtype_str(t);
  take(abi::kMatmulTiled, blas.offered ? "" : "matmul.blas", blas.offered ? "" : blas.source,
       why + ".");
}

// ---- The forms: the shapes each one takes and returns.

constexpr ProductForm kForms[] = {
    {"matmul", 2, 0, "a; b"},
    {"mm", 2, 0, "a; b"},
    {"mv", 2, 0, "mat; vec"},
    {"dot", 2, 0, "a; b"},
    {"bmm", 2, 0, "a; b"},
    {"addmm", 3, 0, "input; m1; m2"},
    {"baddbmm", 3, 0, "input; b1; b2"},
    {"addmv", 3, 0, "input; mat; vec"},
    {"addr", 3, 0, "input; vec1; vec2"},
    {"linear", 2, 1, "x; weight; bias"},
};

std::string pair_str(const Shape& a, const Shape& b) {
  return to_string(a) + " and " + to_string(b);
}

void require_rank(const std::string& op, const Shape& s, int rank, const char* what) {
  if (s.size() != rank)
    throw InvalidArgument(op, op + ": " + what + " must be " + std::to_string(rank) +
                                  "-d (got shape " + to_string(s) + ").");
}

// [.., m, k] @ [.., k, n]: k columns against k rows.
void require_inner(const std::string& op, std::int64_t k, std::int64_t rows,
                   const std::string& shapes) {
  if (k != rows)
    throw InvalidArgument(op, op + ": shapes " + shapes + " cannot be multiplied (" +
                                  std::to_string(k) + " columns against " + std::to_string(rows) +
                                  " rows).");
}

// The addend (addmm's input, linear's bias) is read through broadcast strides.
void require_addend(const std::string& op, const char* what, const Shape& addend,
                    const Shape& product, const std::string& shapes) {
  bool ok = addend.size() <= product.size();
  for (int i = 1; ok && i <= addend.size(); ++i) {
    const std::int64_t a = addend[addend.size() - i], p = product[product.size() - i];
    ok = a == p || a == 1;
  }
  if (!ok)
    throw InvalidArgument(op, op + ": the " + what + " of shape " + to_string(addend) +
                                  " does not broadcast to the product's shape " +
                                  to_string(product) + " (operands " + shapes + ").");
}

Shape linear_shape(const std::string& op, std::span<const Shape> s) {
  const Shape &x = s[0], &w = s[1];
  const std::string shapes = pair_str(x, w);
  if (x.size() == 0 || w.size() == 0 || w.size() > 2)
    throw InvalidArgument(op, op +
                                  ": the input must be at least 1-d and the weight 1-d or 2-d "
                                  "(shapes " +
                                  shapes + ").");
  const std::int64_t features = x[x.size() - 1], weight_in = w[w.size() - 1];
  if (features != weight_in)
    throw InvalidArgument(op, op + ": shapes " + shapes + " cannot be multiplied (the input has " +
                                  std::to_string(features) + " features, the weight " +
                                  std::to_string(weight_in) + ").");
  Shape out = x;
  out.erase(out.size() - 1);
  if (w.size() == 2) out.push_back(w[0]);
  if (s.size() == 3) {
    // The product as the kernel runs it: x as a matrix, a 1-d weight as a column (whose
    // bias becomes a column too).
    Shape product = x.size() == 1 ? Shape{1} : out;
    if (x.size() == 1 && w.size() == 2) product.push_back(w[0]);
    if (w.size() == 1) product.push_back(1);
    Shape bias = s[2];
    if (w.size() == 1 && bias.size() >= 1) bias.push_back(1);
    require_addend(op, "bias", bias, product, shapes);
  }
  return out;
}

Shape form_shape(const std::string& op, std::span<const Shape> s) {
  if (op == "matmul") return matmul_shape(s[0], s[1]);
  if (op == "linear") return linear_shape(op, s);
  const bool addend = s.size() == 3;
  const Shape& a = s[addend ? 1 : 0];
  const Shape& b = s[addend ? 2 : 1];
  const std::string shapes = pair_str(a, b);
  Shape out;
  if (op == "mm" || op == "addmm") {
    require_rank(op, a, 2, addend ? "the first matrix" : "the first operand");
    require_rank(op, b, 2, addend ? "the second matrix" : "the second operand");
    require_inner(op, a[1], b[0], shapes);
    out = {a[0], b[1]};
  } else if (op == "mv" || op == "addmv") {
    require_rank(op, a, 2, "the matrix");
    require_rank(op, b, 1, "the vector");
    if (addend && s[0].size() > 1)
      throw InvalidArgument(op, op + ": the input of shape " + to_string(s[0]) +
                                    " does not broadcast to the product's shape [" +
                                    std::to_string(a[0]) + "].");
    require_inner(op, a[1], b[0], shapes);
    out = {a[0]};
  } else if (op == "dot") {
    require_rank(op, a, 1, "the first operand");
    require_rank(op, b, 1, "the second operand");
    if (a[0] != b[0])
      throw InvalidArgument(op, op + ": shapes " + shapes + " have different lengths.");
  } else if (op == "bmm" || op == "baddbmm") {
    require_rank(op, a, 3, addend ? "the first batch" : "the first operand");
    require_rank(op, b, 3, addend ? "the second batch" : "the second operand");
    if (a[0] != b[0])
      throw InvalidArgument(op, op + ": shapes " + shapes + " have different batch sizes" +
                                    (addend ? "." : " (bmm does not broadcast)."));
    require_inner(op, a[2], b[1], shapes);
    out = {a[0], a[1], b[2]};
  } else if (op == "addr") {
    require_rank(op, a, 1, "the first vector");
    require_rank(op, b, 1, "the second vector");
    out = {a[0], b[0]};
  } else {
    throw InvalidArgument(op, "'" + op + "' is not a matrix product.");
  }
  if (addend) require_addend(op, "input", s[0], out, shapes);
  return out;
}

}  // namespace

std::span<const ProductForm> product_forms() {
  return kForms;
}

namespace {

// The product's column count n for the forms that add an input (-1 for the others and for a
// linear without bias).
std::int64_t addend_columns(const std::string& op, std::span<const Shape> shapes) {
  if (op == "addmv") return 1;
  if (op == "addmm") return shapes[2][1];
  if (op == "baddbmm") return shapes[2][2];
  if (op == "addr") return shapes[2][0];
  if (op == "linear" && shapes.size() == 3) return shapes[1].size() == 1 ? 1 : shapes[1][0];
  return -1;
}

// cuBLASLt's matrix-vector path (n = 1) rounds the product to a 16-bit output dtype before it
// adds C: bfloat16 linear(x, w[k], b) gave 8.0 for 43.63 - 35.75 = 7.875 on the H200
// (2026-12-02, cuBLASLt of CUDA 13.0; NBX_MATMUL=tiled gave 7.875, as PyTorch). Such products
// take the tiled kernel, which adds the addend in float32 and rounds once.
void avoid_blas_vector_addend(MatmulPlan& plan, const std::string& op,
                              std::span<const Shape> shapes) {
  const bool half_out = plan.out_dtype == DType::kFloat16 || plan.out_dtype == DType::kBFloat16;
  if (plan.variant != abi::kMatmulVendorBlas || !half_out ||
      matmul_variant_request() == MatmulRequest::kBlas)
    return;
  if (addend_columns(op, shapes) != 1) return;
  plan.variant = abi::kMatmulTiled;
  for (PlanChoice& c : plan.choices)
    if (c.what == "variant")
      c = {"variant", ::nbx::variant_name(KernelFamily::kMatmul, abi::kMatmulTiled), "", "",
           "A 16-bit product of one column with an addend: cuBLASLt's matrix-vector path rounds "
           "the product to " +
               dtype_str(plan.out_dtype) +
               " before adding the input (seen on the H200); the tiled kernel adds in float32 "
               "and rounds once."};
}

}  // namespace

ProductPlan plan_product(std::string_view op, std::span<const DType> dtypes,
                         std::span<const Shape> shapes, const PlanTarget& target) {
  const std::string name(op);
  const ProductForm* form = nullptr;
  for (const ProductForm& f : kForms)
    if (f.name == op) form = &f;
  if (!form) throw InvalidArgument(name, "'" + name + "' is not a matrix product.");
  const auto given = static_cast<int>(shapes.size());
  if (given != static_cast<int>(dtypes.size()) || given < form->operands ||
      given > form->operands + form->optional_operands)
    throw InvalidArgument(
        name, name + " takes " + std::to_string(form->operands) +
                  (form->optional_operands
                       ? " or " + std::to_string(form->operands + form->optional_operands)
                       : std::string()) +
                  " tensors (" + std::string(form->operand_names) + "), not " +
                  std::to_string(given) + ".");
  ProductPlan plan;
  plan.out_shape = form_shape(name, shapes);
  for (DType t : dtypes)
    if (t != dtypes[0])
      throw InvalidArgument(name, name + ": the operands must share one dtype (got " +
                                      dtype_str(dtypes[0]) + " and " + dtype_str(t) + ").");
  if (dtypes[0] == DType::kBool)
    throw InvalidArgument(name, name + " is not defined for bool tensors.");
  detail::require_dtype_support(name, dtypes[0], target.caps, target.device_id, target.device_name);
  plan.matmul = plan_matmul(dtypes[0], target.caps, name, target.device);
  avoid_blas_vector_addend(plan.matmul, name, shapes);
  detail::require_dtype_support(name, plan.matmul.out_dtype, target.caps, target.device_id,
                                target.device_name);
  return plan;
}

MatmulRequest matmul_variant_request() {
  int r = g_request.load();
  if (r < 0) {
    r = static_cast<int>(parse_request(std::getenv("NBX_MATMUL")));
    int unset = -1;
    if (!g_request.compare_exchange_strong(unset, r)) r = unset;
  }
  return static_cast<MatmulRequest>(r);
}

void set_matmul_variant_request(MatmulRequest request) {
  g_request.store(static_cast<int>(request));
}

const char* variant_name(abi::MatmulVariant v) {
  switch (v) {
    case abi::kMatmulVendorBlas:
      return "vendor BLAS";
    case abi::kMatmulCoopMatrix:
      return "cooperative matrix";
    default:
      return "tiled";
  }
}

MatmulPlan plan_matmul(DType in_dtype, const Capabilities& caps, const std::string& op,
                       const BackendDevice* device) {
  if (in_dtype == DType::kBool) throw InvalidArgument(op, op + " is not defined for bool tensors.");
  require_dtype(op, in_dtype, caps);
  MatmulPlan plan;
  plan.in_dtype = in_dtype;
  plan.out_dtype = in_dtype;
  plan.accumulate_dtype = is_half_type(in_dtype) ? DType::kFloat32 : in_dtype;
  const bool native_bf16 = caps.bf16.value == Bf16Support::kNative;
  if (in_dtype == DType::kFloat16 && !native_bf16) {
    // Pre-Ampere parts (no native bf16) overflow float16 outputs of long dot products.
    plan.out_dtype = DType::kFloat32;
    plan.choices.push_back({"out_dtype", "float32", "bf16", caps.bf16.source,
                            "float16 inputs on a device without native bf16 (bf16: " +
                                std::string(to_string(caps.bf16.value)) +
                                ") return float32, as overflow protection."});
  } else {
    plan.choices.push_back(
        {"out_dtype", dtype_str(plan.out_dtype), "", "", "The product keeps its operands' dtype."});
  }
  require_dtype(op, plan.out_dtype, caps);
  plan.choices.push_back({"accumulate_dtype", dtype_str(plan.accumulate_dtype),
                          in_dtype == DType::kBFloat16 ? "bf16" : "",
                          in_dtype == DType::kBFloat16 ? caps.bf16.source : "",
                          is_half_type(in_dtype)
                              ? "16-bit floats accumulate in float32."
                              : "The operands' dtype accumulates (integers wrap, as PyTorch's)."});
  choose_tile(plan, caps, op);
  choose_variant(plan, caps, device, op);
  return plan;
}

}  // namespace nbx::ops
