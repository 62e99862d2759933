// The same malformed raw launches sent to every present backend (host, and vulkan:0 / cuda:0
// / hip:0 where they open) must be refused with the same typed error and the same words:
// BackendDevice::launch validates through the family table (core/families) once, for every
// backend, before any backend sees the launch. Well-formed launches of each family run, and
// a variant a device does not offer, or whose contract the block breaks, is refused by name.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/backend.hpp"
#include "core/device.hpp"
#include "core/errors.hpp"
#include "core/families/backend_variants.hpp"
#include "core/kernel_abi.hpp"
#include "core/tensor.hpp"
#include "tests/unit/present_devices.hpp"

using namespace nbx;

namespace {

using testing::present_devices;

// A parameter block and its buffers, as the tests mutate them.
struct RawLaunch {
  KernelFamily family;
  std::vector<std::byte> params;
  std::vector<KernelBuffer> buffers;
  template <class P>
  P& as() {
    return *reinterpret_cast<P*>(params.data());
  }
};

template <class P>
RawLaunch raw(const P& p, std::vector<KernelBuffer> buffers) {
  RawLaunch r{FamilyOf<P>::value, std::vector<std::byte>(sizeof p), std::move(buffers)};
  std::memcpy(r.params.data(), &p, sizeof p);
  return r;
}

void run(const Device& d, const RawLaunch& r) {
  KernelLaunch kl{r.family, r.buffers, r.params};
  std::lock_guard lock(d.context().launch_mutex());
  d.context().backend_device().launch(kl);
  d.context().backend_device().synchronize();
}

// Well-formed launches over 4 rows of 8 float32 values (never all zero).
struct Operands {
  Tensor x, out, rows_out, idx, rows_picked;
  Tensor rot_q, rot_pos, rot_cache;  // rotary: q [4, 2, 8], positions [4], cache [4, 8]
  Tensor group_offsets;              // grouped_matmul: x's rows in groups [0, 1) and [1, 4)
  explicit Operands(const Device& d) {
    std::vector<float> v(32);
    for (int i = 0; i < 32; ++i) v[std::size_t(i)] = 0.25f * float(i % 7) - 0.5f;
    x = Tensor::from_host(v, {4, 8}, d);
    out = Tensor::empty({4, 8}, DType::kFloat32, d);
    rows_out = Tensor::empty({4}, DType::kFloat32, d);
    idx = Tensor::empty({4, 8}, DType::kInt64, d);
    rows_picked = Tensor::from_host(std::vector<std::int64_t>{3, 0, 2, 0}, {4}, d);
    std::vector<float> q(64), c(32);
    for (int i = 0; i < 64; ++i) q[std::size_t(i)] = 0.125f * float(i % 11) - 0.5f;
    for (int i = 0; i < 32; ++i) c[std::size_t(i)] = 0.0625f * float(i % 13) - 0.25f;
    rot_q = Tensor::from_host(q, {4, 2, 8}, d);
    rot_pos = Tensor::from_host(std::vector<std::int64_t>{1, 0, 3, 2}, {4}, d);
    rot_cache = Tensor::from_host(c, {4, 8}, d);
    group_offsets = Tensor::from_host(std::vector<std::int64_t>{0, 1, 4}, {3}, d);
  }
  KernelBuffer w(const Tensor& t) const { return {t.storage()->memory(), true}; }
  KernelBuffer r(const Tensor& t) const { return {t.storage()->memory(), false}; }
};

constexpr std::int32_t kF32 = std::int32_t(DType::kFloat32);

RawLaunch reduce_sum(const Operands& o) {
  abi::ReduceParams p{};
  p.op = abi::kReduce_sum;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = kF32;
  p.out_ndim = p.red_ndim = 1;
  p.row_tile = 1;
  p.rows = 4;
  p.row_len = 8;
  p.out_sizes[0] = 4;
  p.red_sizes[0] = 8;
  p.in_kept_strides[0] = 8;
  p.in_red_strides[0] = 1;
  p.out_strides[0] = 1;
  return raw(p, {o.w(o.rows_out), o.r(o.x)});
}

RawLaunch softmax_rows(const Operands& o) {
  abi::SoftmaxParams p{};
  p.op = abi::kSoftmax_softmax;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = kF32;
  p.outer_ndim = 1;
  p.variant = abi::kSoftmaxLooped;
  p.row_tile = 1;
  p.rows = 4;
  p.row_len = 8;
  p.outer_sizes[0] = 4;
  p.in_outer_strides[0] = p.out_outer_strides[0] = 8;
  p.in_row_stride = p.out_row_stride = 1;
  p.scale = 1.0;
  return raw(p, {o.w(o.out), o.r(o.x)});
}

RawLaunch layer_norm(const Operands& o) {
  abi::NormParams p{};
  p.op = abi::kNorm_layer_norm;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = p.param_dtype = kF32;
  p.row_tile = 1;
  p.rows = 4;
  p.row_len = 8;
  p.eps = 1e-5;
  return raw(p, {o.w(o.out), o.r(o.x)});
}

RawLaunch cummax(const Operands& o) {
  abi::ScanParams p{};
  p.op = abi::kScan_cummax;
  p.in_dtype = p.out_dtype = p.accumulate_dtype = kF32;
  p.lanes = 1;  // variant scan.lanes, a lane per row (every backend runs it)
  p.outer_ndim = 1;
  p.rows = 4;
  p.row_len = 8;
  p.outer_sizes[0] = 4;
  p.in_outer_strides[0] = p.out_outer_strides[0] = p.index_outer_strides[0] = 8;
  p.in_row_stride = p.out_row_stride = p.index_row_stride = 1;
  return raw(p, {o.w(o.out), o.r(o.x), o.w(o.idx)});
}

RawLaunch tril(const Operands& o) {
  abi::FillParams p{};
  p.op = abi::kFill_tril;
  p.out_dtype = p.in_dtype = kF32;
  p.ndim = 2;
  p.numel = 32;
  p.sizes[0] = 4;
  p.sizes[1] = 8;
  p.out_strides[0] = p.in_strides[0] = 8;
  p.out_strides[1] = p.in_strides[1] = 1;
  return raw(p, {o.w(o.out), o.r(o.x)});
}

RawLaunch add(const Operands& o) {
  abi::ElementwiseParams p{};
  p.op = abi::kOp_add;
  p.num_inputs = 2;
  p.ndim = 2;
  p.compute_dtype = kF32;
  p.numel = 32;
  p.sizes[0] = 4;
  p.sizes[1] = 8;
  for (abi::ElementwiseOperand* e : {&p.out, &p.in[0], &p.in[1]}) {
    e->dtype = kF32;
    e->strides[0] = 8;
    e->strides[1] = 1;
  }
  p.contiguous = 1;
  return raw(p, {o.w(o.out), o.r(o.x), o.r(o.x)});
}

RawLaunch matmul(const Operands& o) {  // [4, 8] @ [8, 4] read from x and its transpose
  abi::MatmulParams p{};
  p.a_dtype = p.out_dtype = p.accumulate_dtype = kF32;
  p.variant = abi::kMatmulTiled;
  p.tile_m = p.tile_n = p.tile_k = 16;
  p.num_stages = 1;
  p.m = 4, p.n = 4, p.k = 8;
  p.batch = 1;
  p.a_row_stride = 8, p.a_col_stride = 1;
  p.b_row_stride = 1, p.b_col_stride = 8;
  p.out_row_stride = 4, p.out_col_stride = 1;
  p.alpha = 1.0;
  return raw(p, {o.w(o.out), o.r(o.x), o.r(o.x)});
}

RawLaunch index_select_rows(const Operands& o) {  // out row r = x row rows_picked[r]
  abi::GatherParams p{};
  p.op = abi::kGather_index_select;
  p.dtype = kF32;
  p.index_dtype = std::int32_t(DType::kInt64);
  p.ndim = 2;
  p.variant = abi::kGatherStrided;
  p.numel = 32;
  p.bound = 4;
  p.sizes[0] = 4;
  p.sizes[1] = 8;
  p.out_strides[0] = 8;
  p.out_strides[1] = 1;
  p.src_strides[1] = 1;  // dim 0 is the indexed one: its stride is src_index_stride
  p.src_index_stride = 8;
  p.index_strides[0] = 1;
  p.index_positions[0] = 1;
  return raw(p, {o.w(o.out), o.r(o.x), o.r(o.rows_picked)});
}

// rotary_embedding of q [4 tokens, 2 heads, 8] with rotary_dim 8 (no k).
RawLaunch rotary_q(const Operands& o) {
  abi::RotaryParams p{};
  p.op = abi::kRotary_rotary_embedding;
  p.variant = abi::kRotaryPairs;
  p.dtype = p.cache_dtype = kF32;
  p.pos_dtype = std::int32_t(DType::kInt64);
  p.style = abi::kRotaryHalf;
  p.token_ndim = 1;
  p.tokens = 4;
  p.q_heads = 2;
  p.rotary_dim = 8;
  p.max_position = 4;
  p.token_sizes[0] = 4;
  p.q_token_strides[0] = 16;
  p.q_head_stride = 8;
  p.q_dim_stride = 1;
  p.pos_strides[0] = 1;
  p.cache_row_stride = 8;
  p.cache_col_stride = 1;
  return raw(p, {o.w(o.rot_q), {DeviceMemory{}, true}, o.r(o.rot_pos), o.r(o.rot_cache)});
}

// grouped_matmul of x [4, 8] in two groups (rows 0 | 1-3) by rot_q read as b [2, 4, 8]: out's
// first 4 columns of each row (row stride 8).
RawLaunch grouped(const Operands& o) {
  abi::GroupedMatmulParams p{};
  p.op = abi::kGroupedMatmul_grouped_matmul;
  p.variant = abi::kGroupedMatmulTiled;
  p.dtype = p.out_dtype = kF32;
  p.offsets_dtype = std::int32_t(DType::kInt64);
  p.groups = 2;
  p.rows = 4;
  p.n = 4;
  p.k = 8;
  p.a_row_stride = 8;
  p.a_col_stride = 1;
  p.b_group_stride = 32;
  p.b_n_stride = 8;
  p.b_k_stride = 1;
  p.out_row_stride = 8;
  p.out_col_stride = 1;
  p.offsets_stride = 1;
  return raw(p, {o.w(o.out), o.r(o.x), o.r(o.rot_q), o.r(o.group_offsets)});
}

struct Misuse {
  const char* what;
  std::function<RawLaunch(const Operands&)> make;
  bool unsupported;      // Unsupported, else InvalidArgument
  const char* expected;  // words the message must hold
};

std::vector<Misuse> misuses() {
  auto mutate = [](auto base, auto f) {
    return [base, f](const Operands& o) {
      RawLaunch r = base(o);
      f(r);
      return r;
    };
  };
  return {
      {"a parameter block of the wrong size",
       mutate(reduce_sum, [](RawLaunch& r) { r.params.resize(r.params.size() + 8); }), false,
       "the parameter block has"},
      {"an unknown op code",
       mutate(reduce_sum, [](RawLaunch& r) { r.as<abi::ReduceParams>().op = 77; }), false,
       "unknown op code 77"},
      {"a negative size",
       mutate(softmax_rows,
              [](RawLaunch& r) {
                auto& p = r.as<abi::SoftmaxParams>();
                p.outer_sizes[0] = -4;
                p.rows = -4;
              }),
       false, "negative size"},
      {"an input one element past its allocation",
       mutate(softmax_rows,
              [](RawLaunch& r) {
                // The allocator rounds sizes up: reach one element past the whole allocation.
                const auto elements = std::int64_t(r.buffers[1].memory.bytes / 4);
                r.as<abi::SoftmaxParams>().in_offset = elements - 31;
              }),
       false, "beyond its buffer"},
      {"an offset near 2^62 (no wrap)",
       mutate(cummax,
              [](RawLaunch& r) { r.as<abi::ScanParams>().in_offset = std::int64_t(1) << 62; }),
       false, "beyond its buffer"},
      {"a negative stride",
       mutate(tril, [](RawLaunch& r) { r.as<abi::FillParams>().in_strides[1] = -1; }), false,
       "negative stride"},
      {"a missing buffer", mutate(cummax, [](RawLaunch& r) { r.buffers.pop_back(); }), false,
       "2 buffers bound; the launch takes 3"},
      {"an output marked read-only",
       mutate(add, [](RawLaunch& r) { r.buffers[0].written = false; }), false, "marked read-only"},
      {"a norm weight that is not bound",
       mutate(layer_norm, [](RawLaunch& r) { r.as<abi::NormParams>().has_weight = 1; }), false,
       "the weight is not bound"},
      {"a bitwise op computing in float",
       mutate(add, [](RawLaunch& r) { r.as<abi::ElementwiseParams>().op = abi::kOp_bitwise_and; }),
       false, "no floating-point form"},
      {"an unknown variant",
       mutate(softmax_rows, [](RawLaunch& r) { r.as<abi::SoftmaxParams>().variant = 9; }), false,
       "unknown variant 9"},
      {"a row variant on strided rows",
       mutate(softmax_rows,
              [](RawLaunch& r) {
                auto& p = r.as<abi::SoftmaxParams>();
                p.variant = abi::kSoftmaxRows;
                p.in_row_stride = 2;
                p.row_len = 4;
              }),
       false, "softmax.rows variant does not serve it"},
      {"matmul with a bool product",
       mutate(matmul,
              [](RawLaunch& r) { r.as<abi::MatmulParams>().a_dtype = std::int32_t(DType::kBool); }),
       false, "A and B are bool"},
      {"a gather output one element past its allocation",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                const auto elements = std::int64_t(r.buffers[0].memory.bytes / 4);
                r.as<abi::GatherParams>().out_offset = elements - 31;
              }),
       false, "the output reaches element"},
      {"a gather input one element past its allocation",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                const auto elements = std::int64_t(r.buffers[1].memory.bytes / 4);
                r.as<abi::GatherParams>().src_offset = elements - 31;
              }),
       false, "the input reaches element"},
      {"a gather index one element past its allocation",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                const auto elements = std::int64_t(r.buffers[2].memory.bytes / 8);
                r.as<abi::GatherParams>().index_offset = elements - 3;
              }),
       false, "the index reaches element"},
      {"int32 indices one element past an index buffer's end",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                // Counted in 4-byte words: an int32 view of the int64 buffer must be checked
                // in its own element size.
                auto& p = r.as<abi::GatherParams>();
                p.index_dtype = std::int32_t(DType::kInt32);
                p.index_offset = std::int64_t(r.buffers[2].memory.bytes / 4) - 3;
              }),
       false, "the index reaches element"},
      {"a gather with a negative bound",
       mutate(index_select_rows, [](RawLaunch& r) { r.as<abi::GatherParams>().bound = -1; }), false,
       "the bound -1 is negative"},
      {"a gather with a float32 index",
       mutate(index_select_rows,
              [](RawLaunch& r) { r.as<abi::GatherParams>().index_dtype = kF32; }),
       false, "is not int32 or int64"},
      {"a gather with its index buffer missing",
       mutate(index_select_rows, [](RawLaunch& r) { r.buffers.pop_back(); }), false,
       "2 buffers bound; the launch takes 3"},
      {"a gather with one buffer too many",
       mutate(index_select_rows, [](RawLaunch& r) { r.buffers.push_back(r.buffers[1]); }), false,
       "4 buffers bound; the family binds at most 3"},
      {"an unknown gather op",
       mutate(index_select_rows, [](RawLaunch& r) { r.as<abi::GatherParams>().op = 5; }), false,
       "unknown op code 5"},
      {"a gather whose numel is not the product of its sizes",
       mutate(index_select_rows, [](RawLaunch& r) { r.as<abi::GatherParams>().numel = 31; }), false,
       "numel 31 is not the product of the sizes (32)"},
      {"a gather with sizes multiplying past 2^63",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                auto& p = r.as<abi::GatherParams>();
                p.sizes[0] = p.sizes[1] = std::int64_t(1) << 32;
              }),
       false, "the sizes multiply past 2^63"},
      {"a gather input stride along the indexed dim near 2^62 (no wrap)",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                // (bound - 1) · 2^62 wraps int64 to a small count without the overflow check.
                r.as<abi::GatherParams>().src_index_stride = std::int64_t(1) << 62;
              }),
       false, "the input reaches past 2^63 elements"},
      {"a gather index stride near 2^62 (no wrap)",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                r.as<abi::GatherParams>().index_strides[0] = (std::int64_t(1) << 62) + 1;
              }),
       false, "the index reaches past 2^63 elements"},
      {"a gather output offset near 2^62",
       mutate(index_select_rows,
              [](RawLaunch& r) { r.as<abi::GatherParams>().out_offset = std::int64_t(1) << 62; }),
       false, "the output reaches element"},
      {"a gather with a negative index position stride",
       mutate(index_select_rows,
              [](RawLaunch& r) { r.as<abi::GatherParams>().index_positions[0] = -1; }),
       false, "an index position stride is negative"},
      {"a gather with a negative src stride",
       mutate(index_select_rows,
              [](RawLaunch& r) { r.as<abi::GatherParams>().src_strides[1] = -1; }),
       false, "the input has a negative stride"},
      // The rows variant's contract (gather_family.cpp), refused on every backend alike
      // (whether or not it offers the variant): contiguous rows the index does not vary along.
      {"a gather rows variant on an input that does not run along the row",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                auto& p = r.as<abi::GatherParams>();
                p.variant = abi::kGatherRows;
                p.src_strides[1] = 0;  // a well-formed view: element 0 of each picked row
              }),
       false, "gather.rows variant does not serve it (the output and the input do not run"},
      {"a gather rows variant whose index varies along the row",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                auto& p = r.as<abi::GatherParams>();
                p.variant = abi::kGatherRows;
                p.sizes[1] = 4;  // 4 × 4, so the index view [0, 1, 2, 3] stays inside its 4
                p.numel = 16;
                p.index_strides[0] = 0;
                p.index_strides[1] = 1;
              }),
       false, "gather.rows variant does not serve it (the index varies along the last dim)"},
      {"a gather rows variant with no dims",
       mutate(index_select_rows,
              [](RawLaunch& r) {
                auto& p = r.as<abi::GatherParams>();
                p.variant = abi::kGatherRows;
                p.ndim = 0;
                p.numel = 1;
              }),
       false, "gather.rows variant does not serve it (there is no row)"},
      {"a rotary q one element past its allocation",
       mutate(rotary_q,
              [](RawLaunch& r) {
                const auto elements = std::int64_t(r.buffers[0].memory.bytes / 4);
                r.as<abi::RotaryParams>().q_offset = elements - 63;
              }),
       false, "q reaches element"},
      {"a rotary cache with fewer rows than max_position",
       mutate(rotary_q,
              [](RawLaunch& r) {
                const auto rows = std::int64_t(r.buffers[3].memory.bytes / 32);
                r.as<abi::RotaryParams>().max_position = rows + 1;
              }),
       false, "the cache reaches element"},
      {"a rotary launch with an odd rotary_dim",
       mutate(rotary_q, [](RawLaunch& r) { r.as<abi::RotaryParams>().rotary_dim = 7; }), false,
       "rotary_dim 7 is not even and positive"},
      {"rotary positions of a float dtype",
       mutate(rotary_q, [](RawLaunch& r) { r.as<abi::RotaryParams>().pos_dtype = kF32; }), false,
       "is not int32 or int64"},
      {"rotary k heads without k",
       mutate(rotary_q, [](RawLaunch& r) { r.as<abi::RotaryParams>().k_heads = 1; }), false,
       "k_heads is not 0 without k"},
      {"grouped_matmul offsets one element past their allocation",
       mutate(grouped,
              [](RawLaunch& r) {
                const auto elements = std::int64_t(r.buffers[3].memory.bytes / 8);
                r.as<abi::GroupedMatmulParams>().offsets_offset = elements - 2;
              }),
       false, "the offset array reaches element"},
      {"grouped_matmul b with more groups than its allocation holds",
       mutate(grouped,
              [](RawLaunch& r) {
                const auto groups = std::int64_t(r.buffers[2].memory.bytes / 128);
                r.as<abi::GroupedMatmulParams>().b_group_stride = 32 * groups;
              }),
       false, "b reaches element"},
      {"grouped_matmul of int32 operands",
       mutate(grouped,
              [](RawLaunch& r) {
                auto& p = r.as<abi::GroupedMatmulParams>();
                p.dtype = p.out_dtype = std::int32_t(DType::kInt32);
              }),
       false, "is not float16, bfloat16 or float32"},
      {"the timestamp family on a device without it",
       [](const Operands& o) { return raw(abi::TimestampParams{-1}, {o.w(o.idx)}); }, false,
       "negative offset"},
  };
}

// The message without the device's name and numbers (allocation sizes differ between
// backends), so backends can be compared word for word.
std::string without_device(std::string m, const Device& d) {
  const std::string name = d.display_name();
  for (auto at = m.find(name); at != std::string::npos; at = m.find(name))
    m.replace(at, name.size(), "<device>");
  for (char& c : m)
    if (c >= '0' && c <= '9') c = '#';
  return m;
}

}  // namespace

TEST_CASE("well-formed raw launches of every family run on every backend") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Operands o(d);
    for (auto make :
         {reduce_sum, softmax_rows, layer_norm, cummax, tril, add, matmul, index_select_rows})
      CHECK_NOTHROW(run(d, make(o)));
    // Two of them checked by value: sum of row 0 and the tril's zero above the diagonal.
    run(d, reduce_sum(o));
    const std::vector<float> sums = o.rows_out.to_host<float>();
    const std::vector<float> x = o.x.to_host<float>();
    float want = 0;
    for (int k = 0; k < 8; ++k) want += x[std::size_t(k)];
    CHECK(sums[0] == doctest::Approx(want));
    run(d, tril(o));
    const std::vector<float> t = o.out.to_host<float>();
    CHECK(t[1] == 0.0f);
    CHECK(t[8] == x[8]);
    // The rotary launch: token 0 (position 1), head 1, pair 2 is elements (10, 14) of q
    // rotated by cache row 1's cos[2] and sin[2] (elements 10 and 14).
    const std::vector<float> q0 = o.rot_q.to_host<float>(), c = o.rot_cache.to_host<float>();
    run(d, rotary_q(o));
    const std::vector<float> q1 = o.rot_q.to_host<float>();
    CHECK(q1[10] == doctest::Approx(q0[10] * c[10] - q0[14] * c[14]));
    CHECK(q1[14] == doctest::Approx(q0[14] * c[10] + q0[10] * c[14]));
    CHECK(q1[10] != q0[10]);
    // The grouped launch: row 0 times b[0], rows 1-3 times b[1] (rot_q's second half).
    run(d, grouped(o));
    const std::vector<float> g = o.out.to_host<float>();
    for (int r = 0; r < 4; ++r)
      for (int n = 0; n < 4; ++n) {
        float want_g = 0;
        for (int k = 0; k < 8; ++k)
          want_g += x[std::size_t(r * 8 + k)] * q1[std::size_t((r == 0 ? 0 : 32) + n * 8 + k)];
        CHECK(g[std::size_t(r * 8 + n)] == doctest::Approx(want_g));
      }
    // The gather launch: output row r is x's row rows_picked[r] (3, 0, 2, 0).
    run(d, index_select_rows(o));
    const std::vector<float> picked = o.out.to_host<float>();
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 8; ++c)
        CHECK(picked[std::size_t(r * 8 + c)] == x[std::size_t((r == 0   ? 3
                                                               : r == 2 ? 2
                                                                        : 0) *
                                                                  8 +
                                                              c)]);
  }
}

TEST_CASE("every backend refuses the same malformed launches with the same typed error") {
  const std::vector<Device> devices = present_devices();
  for (const Misuse& m : misuses()) {
    const std::string what = m.what;
    CAPTURE(what);
    std::optional<std::string> first;  // the first device's message, device name removed
    for (const Device& d : devices) {
      CAPTURE(d.str());
      const Operands o(d);
      const RawLaunch r = m.make(o);
      std::string message;
      try {
        run(d, r);
        FAIL("accepted");
      } catch (const Unsupported& e) {
        CHECK(m.unsupported);
        message = e.what();
      } catch (const InvalidArgument& e) {
        CHECK_FALSE(m.unsupported);
        message = e.what();
      }
      CHECK_MESSAGE(message.find(m.expected) != std::string::npos, message);
      const std::string plain = without_device(message, d);
      if (!first) first = plain;
      CHECK(plain == *first);
      // The device stays usable after the refusal.
      CHECK_NOTHROW(run(d, reduce_sum(o)));
    }
  }
}

TEST_CASE("a variant or family a device does not offer is refused by name") {
  for (const Device& d : present_devices()) {
    CAPTURE(d.str());
    const Operands o(d);
    const BackendDevice& bd = d.context().backend_device();
    // What a device offers never exceeds what its backend's kernels implement.
    for (const FamilySpec& f : all_families())
      for (int v = 0; v < int(f.variants.size()); ++v)
        if (bd.offers(f.family, v))
          CHECK_MESSAGE(
              (implemented_variants(backend_kind(d.id().backend), f.family) & variant_bit(v)) != 0,
              variant_name(f.family, v));
    RawLaunch r = reduce_sum(o);
    r.as<abi::ReduceParams>().variant = abi::kReduceRows;
    if (bd.offers(KernelFamily::kReduce, abi::kReduceRows)) {
      CHECK_NOTHROW(run(d, r));
      CHECK(bd.last_launch().variant == abi::kReduceRows);
    } else {
      try {
        run(d, r);
        FAIL("accepted");
      } catch (const Unsupported& e) {
        CHECK(e.capability() == "reduce.rows");
        CHECK(std::string(e.what()).find("does not offer reduce.rows") != std::string::npos);
      }
    }
    // The gather rows variant (CUDA/HIP): the same launch, rows picked as the strided one does.
    RawLaunch g = index_select_rows(o);
    g.as<abi::GatherParams>().variant = abi::kGatherRows;
    if (bd.offers(KernelFamily::kGather, abi::kGatherRows)) {
      CHECK_NOTHROW(run(d, g));
      CHECK(bd.last_launch().variant == abi::kGatherRows);
      const std::vector<float> picked = o.out.to_host<float>(), x = o.x.to_host<float>();
      const int from[4] = {3, 0, 2, 0};  // rows_picked
      for (int r = 0; r < 4; ++r)
        for (int c = 0; c < 8; ++c)
          CHECK(picked[std::size_t(r * 8 + c)] == x[std::size_t(from[r] * 8 + c)]);
    } else {
      try {
        run(d, g);
        FAIL("accepted");
      } catch (const Unsupported& e) {
        CHECK(e.capability() == "gather.rows");
        CHECK(std::string(e.what()).find("does not offer gather.rows") != std::string::npos);
      }
    }
    if (!bd.offers(KernelFamily::kTimestamp)) {
      const RawLaunch t = raw(abi::TimestampParams{0}, {o.w(o.idx)});
      CHECK_THROWS_AS(run(d, t), Unsupported);
    }
  }
}

TEST_CASE("the elementwise validator names what is wrong, with no device at all") {
  // validate() reads only the block and the buffers' sizes: fake handles are enough.
  alignas(64) static std::byte arena[64];
  abi::ElementwiseParams p{};
  p.op = abi::kOp_add;
  p.num_inputs = 2;
  p.ndim = 1;
  p.numel = 16;
  p.sizes[0] = 16;
  p.compute_dtype = kF32;
  for (abi::ElementwiseOperand* e : {&p.out, &p.in[0], &p.in[1]}) {
    e->dtype = kF32;
    e->strides[0] = 1;
  }
  std::vector<KernelBuffer> b = {{{arena, 64}, true}, {{arena, 64}, false}, {{arena, 64}, false}};
  const FamilySpec& spec = family_spec(KernelFamily::kElementwise);
  auto validate = [&](const abi::ElementwiseParams& q, std::size_t buffers) {
    const LaunchCheck check(KernelFamily::kElementwise, q.op, nullptr);
    spec.validate(reinterpret_cast<const std::byte*>(&q),
                  std::span<const KernelBuffer>(b.data(), buffers), check);
  };
  CHECK_NOTHROW(validate(p, 3));
  b[1].memory.bytes = 60;  // one float short
  CHECK_THROWS_WITH_AS(validate(p, 3),
                       doctest::Contains("add launch on a device: input 0 reaches element 15"),
                       InvalidArgument);
  b[1].memory.bytes = 64;
  CHECK_THROWS_WITH_AS(validate(p, 2), doctest::Contains("2 buffers bound; the launch takes 3"),
                       InvalidArgument);
  abi::ElementwiseParams q = p;
  q.num_inputs = 1;
  CHECK_THROWS_WITH_AS(validate(q, 2), doctest::Contains("the op takes 2 inputs"), InvalidArgument);
  q = p;
  q.op = abi::kOp_bitwise_xor;
  CHECK_THROWS_WITH_AS(validate(q, 3), doctest::Contains("bitwise_xor launch"), InvalidArgument);
  q.op = 9999;
  CHECK_THROWS_WITH_AS(validate(q, 3), doctest::Contains("unknown op code 9999"), InvalidArgument);
}
