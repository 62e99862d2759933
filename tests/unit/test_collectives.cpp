// nbx::Communicator (issue 16) where CI can run it: collectives staged through host memory
// over the host and vulkan:0 (two ranks of one process), every call against values worked
// out here, bool's PyTorch meaning (sum = or, prod = and), integer wrap, every argument check
// and refusal by name, and what the CUDA and HIP modules say of NCCL/RCCL. Where cuda:0 opens
// (the H200 run, bench/run_h200_issue16.sh), NCCL with one rank: every call and dtype, both
// ways of making the communicator, ordering with the device's queue.
#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "core/collective_seam.hpp"
#include "core/collectives.hpp"
#include "core/errors.hpp"
#include "core/ops/elementwise.hpp"
#include "core/registry.hpp"
#include "tests/unit/elementwise_test_util.hpp"

using namespace nbx;
using test::check_floats;
using test::check_ints;
using test::make;

namespace {

// The host and, where it opens, vulkan:0: two ranks that stage. One rank where there is no
// Vulkan device (the calls then still run, with world 1).
std::vector<Device> staged_devices() {
  std::vector<Device> out{nbx::open("host")};
  try {
    out.push_back(nbx::open("vulkan:0"));
  } catch (const Error&) {
  }
  return out;
}

// Rank r's tensor: `values[r]` of `dtype` on device r.
std::vector<Tensor> per_rank(const std::vector<Device>& devices, DType dtype,
                             const std::vector<std::vector<double>>& values) {
  std::vector<Tensor> out;
  for (std::size_t r = 0; r < devices.size(); ++r)
    out.push_back(make(dtype, values[r]).to(devices[r]));
  return out;
}

template <class E>
std::string refusal(auto&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  FAIL("no refusal");
  return {};
}

}  // namespace

TEST_CASE("staged communicator: library, world and ranks") {
  const auto devices = staged_devices();
  const Communicator comm = Communicator::create(devices);
  CHECK(comm.world_size() == int(devices.size()));
  CHECK(comm.library().find("host staging") != std::string::npos);
  CHECK(comm.ranks().size() == devices.size());
}

TEST_CASE("staged all_reduce: every op over float32, int32, float16, bool") {
  const auto devices = staged_devices();
  const Communicator comm = Communicator::create(devices);
  const std::vector<std::vector<double>> v = {{1, -2, 3.5, 8}, {4, 5, -0.5, 2}};
  const std::size_t W = devices.size();
  // What every rank holds afterwards, worked out over the first W ranks.
  auto expect = [&](ReduceOp op) {
    std::vector<double> r = v[0];
    for (std::size_t k = 1; k < W; ++k)
      for (std::size_t i = 0; i < r.size(); ++i) {
        const double x = v[k][i];
        r[i] = op == ReduceOp::kSum || op == ReduceOp::kAvg ? r[i] + x
               : op == ReduceOp::kProd                      ? r[i] * x
               : op == ReduceOp::kMin                       ? std::min(r[i], x)
                                                            : std::max(r[i], x);
      }
    if (op == ReduceOp::kAvg)
      for (double& x : r) x /= double(W);
    return r;
  };
  for (DType dtype : {DType::kFloat32, DType::kFloat16}) {
    for (ReduceOp op :
         {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAvg}) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(reduce_op_name(op));
      auto ts = per_rank(devices, dtype, v);
      comm.all_reduce(ts, op).wait();
      for (const Tensor& t : ts) check_floats(t, dtype, expect(op));
    }
  }
  const std::vector<std::vector<double>> iv = {{7, -3, 100, 0}, {-9, 4, 100, 5}};
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax}) {
    auto ts = per_rank(devices, DType::kInt32, iv);
    comm.all_reduce(ts, op).wait();
    std::vector<std::int64_t> want;
    for (std::size_t i = 0; i < 4; ++i) {
      std::int64_t r = std::int64_t(iv[0][i]);
      for (std::size_t k = 1; k < W; ++k) {
        const auto x = std::int64_t(iv[k][i]);
        r = op == ReduceOp::kSum    ? r + x
            : op == ReduceOp::kProd ? r * x
            : op == ReduceOp::kMin  ? std::min(r, x)
                                    : std::max(r, x);
      }
      want.push_back(r);
    }
    for (const Tensor& t : ts) check_ints(t, DType::kInt32, want);
  }
  // bool: sum is or, prod is and (PyTorch's process groups), min and max alike.
  const std::vector<std::vector<double>> bv = {{1, 0, 1, 0}, {1, 1, 0, 0}};
  auto or_and = [&](bool any) {
    std::vector<std::int64_t> r;
    for (std::size_t i = 0; i < 4; ++i) {
      bool x = bv[0][i] != 0;
      for (std::size_t k = 1; k < W; ++k) x = any ? (x || bv[k][i] != 0) : (x && bv[k][i] != 0);
      r.push_back(x);
    }
    return r;
  };
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin}) {
    auto ts = per_rank(devices, DType::kBool, bv);
    comm.all_reduce(ts, op).wait();
    const bool any = op == ReduceOp::kSum || op == ReduceOp::kMax;
    for (const Tensor& t : ts) check_ints(t, DType::kBool, or_and(any));
  }
  // int8 sums wrap in the dtype, as NCCL's do.
  if (W == 2) {
    auto ts = per_rank(devices, DType::kInt8, {{100, -100}, {100, -100}});
    comm.all_reduce(ts).wait();
    for (const Tensor& t : ts) check_ints(t, DType::kInt8, {-56, 56});
  }
}

TEST_CASE("staged broadcast, reduce, all_gather, reduce_scatter, all_to_all") {
  const auto devices = staged_devices();
  const Communicator comm = Communicator::create(devices);
  const int W = comm.world_size();
  if (W < 2) return;  // the moves below need two ranks (vulkan:0 absent)
  {
    auto ts = per_rank(devices, DType::kFloat32, {{1, 2, 3}, {4, 5, 6}});
    comm.broadcast(ts, 1).wait();
    for (const Tensor& t : ts) check_floats(t, DType::kFloat32, {4, 5, 6});
  }
  {
    auto ts = per_rank(devices, DType::kInt64, {{1, 2, 3}, {4, 5, 6}});
    comm.reduce(ts, 0, ReduceOp::kMax).wait();
    check_ints(ts[0], DType::kInt64, {4, 5, 6});
    check_ints(ts[1], DType::kInt64, {4, 5, 6});  // its own values: max left them
    auto us = per_rank(devices, DType::kInt64, {{1, 2, 3}, {4, 5, 6}});
    comm.reduce(us, 1, ReduceOp::kSum).wait();
    check_ints(us[0], DType::kInt64, {1, 2, 3});  // not the root: untouched
    check_ints(us[1], DType::kInt64, {5, 7, 9});
  }
  {
    auto in = per_rank(devices, DType::kBFloat16, {{1, 2}, {3, 4}});
    std::vector<Tensor> out = per_rank(devices, DType::kBFloat16, {{0, 0, 0, 0}, {9, 9, 9, 9}});
    comm.all_gather(out, in).wait();
    for (const Tensor& t : out) check_floats(t, DType::kBFloat16, {1, 2, 3, 4});
  }
  {
    auto in = per_rank(devices, DType::kFloat64, {{1, 2, 3, 4}, {10, 20, 30, 40}});
    std::vector<Tensor> out = per_rank(devices, DType::kFloat64, {{0, 0}, {0, 0}});
    comm.reduce_scatter(out, in).wait();
    check_floats(out[0], DType::kFloat64, {11, 22});
    check_floats(out[1], DType::kFloat64, {33, 44});
  }
  {
    auto in = per_rank(devices, DType::kInt16, {{1, 2, 3, 4}, {5, 6, 7, 8}});
    std::vector<Tensor> out = per_rank(devices, DType::kInt16, {{0, 0, 0, 0}, {0, 0, 0, 0}});
    comm.all_to_all(out, in).wait();
    check_ints(out[0], DType::kInt16, {1, 2, 5, 6});
    check_ints(out[1], DType::kInt16, {3, 4, 7, 8});
    // In place: outputs that are the inputs.
    comm.all_to_all(in, in).wait();
    check_ints(in[0], DType::kInt16, {1, 2, 5, 6});
    check_ints(in[1], DType::kInt16, {3, 4, 7, 8});
  }
}

TEST_CASE("communicator argument checks") {
  const auto devices = staged_devices();
  const Communicator comm = Communicator::create(devices);
  const std::size_t W = devices.size();
  std::vector<std::vector<double>> v(W, std::vector<double>{1, 2, 3, 4});
  auto ts = per_rank(devices, DType::kFloat32, v);

  CHECK(refusal<InvalidArgument>([] {
          Communicator::create(std::vector<Device>{});
        }).find("no devices") != std::string::npos);
  CHECK(refusal<InvalidArgument>([&] {
          Communicator::create({devices[0], devices[0]});
        }).find("given twice") != std::string::npos);
  // One tensor a local device.
  CHECK(refusal<InvalidArgument>([&] { comm.all_reduce({}); }).find("takes one tensor") !=
        std::string::npos);
  CHECK(refusal<InvalidArgument>([&] {
          auto more = ts;
          more.push_back(ts[0]);
          comm.all_reduce(more);
        }).find("takes one tensor") != std::string::npos);
  CHECK(refusal<InvalidArgument>([&] {
          auto u = ts;
          u[0] = Tensor();
          comm.all_reduce(u);
        }).find("undefined") != std::string::npos);
  // On the wrong device, not contiguous, another dtype, another size.
  if (W == 2)
    CHECK(refusal<InvalidArgument>([&] {
            comm.all_reduce({ts[1], ts[0]});
          }).find("not on rank") != std::string::npos);
  CHECK(
      refusal<InvalidArgument>([&] {
        auto u = ts;
        u[0] =
            make(DType::kFloat32, {1, 2, 3, 4, 5, 6, 7, 8}, {4, 2}).to(devices[0]).narrow(1, 0, 1);
        comm.all_reduce(u);
      }).find("not contiguous") != std::string::npos);
  if (W == 2) {
    CHECK(refusal<InvalidArgument>([&] {
            auto u = ts;
            u[1] = ts[1].to(DType::kFloat64);
            comm.all_reduce(u);
          }).find("float64, not float32") != std::string::npos);
    CHECK(refusal<InvalidArgument>([&] {
            auto u = ts;
            u[1] = make(DType::kFloat32, {1, 2}).to(devices[1]);
            comm.all_reduce(u);
          }).find("has 2 elements, not 4") != std::string::npos);
  }
  // Roots and peers in range; avg only for floating dtypes.
  CHECK(refusal<InvalidArgument>([&] { comm.broadcast(ts, int(W)); }).find("root") !=
        std::string::npos);
  CHECK(refusal<InvalidArgument>([&] { comm.reduce(ts, -1); }).find("root -1 is outside") !=
        std::string::npos);
  auto ints = per_rank(devices, DType::kInt32, v);
  CHECK(refusal<Unsupported>([&] {
          comm.all_reduce(ints, ReduceOp::kAvg);
        }).find("avg needs a floating dtype") != std::string::npos);
  // all_gather's output holds world inputs; reduce_scatter's input world outputs.
  CHECK(refusal<InvalidArgument>([&] { comm.all_gather(ts, ts); }).find("output") !=
        std::string::npos);
  if (W == 2)
    CHECK(refusal<InvalidArgument>([&] { comm.reduce_scatter(ts, ts); }).find("input") !=
          std::string::npos);
  if (W == 2) {
    auto odd = per_rank(devices, DType::kFloat32, {{1, 2, 3}, {4, 5, 6}});
    CHECK(refusal<InvalidArgument>([&] {
            comm.all_to_all(odd, odd);
          }).find("not a multiple of 2 ranks") != std::string::npos);
    // Point to point takes one local rank.
    CHECK(refusal<InvalidArgument>([&] { comm.send(ts[0], 1); }).find("one local rank") !=
          std::string::npos);
  }
  // A refused call left the tensors as they were.
  for (const Tensor& t : ts) check_floats(t, DType::kFloat32, {1, 2, 3, 4});
}

TEST_CASE("staging joins no other process: unique_id and rank creation refused by name") {
  const Device host = nbx::open("host");
  const std::string why = refusal<Unsupported>([&] { Communicator::unique_id(host); });
  CHECK(why.find("Communicator::unique_id on") != std::string::npos);
  CHECK(why.find("no library to join ranks of other processes") != std::string::npos);
  const CommUniqueId id{"host", {}};
  CHECK(refusal<InvalidArgument>([&] {
          Communicator::create(host, 2, 2, id);
        }).find("rank 2 is outside [0, 2)") != std::string::npos);
  CHECK(refusal<InvalidArgument>([&] {
          Communicator::create(host, 0, 0, id);
        }).find("world_size must be at least 1") != std::string::npos);
  CHECK_THROWS_AS(Communicator::create(host, 0, 1, id), Unsupported);
  CHECK(refusal<InvalidArgument>([&] {
          Communicator::create(host, 0, 1, CommUniqueId{"cuda", {}});
        }).find("made for backend 'cuda'") != std::string::npos);
}

TEST_CASE("CUDA and HIP modules: NCCL or a named reason, RCCL refused, never staged") {
  for (const BackendStatus& s : backend_statuses()) {
    if (!s.backend || (s.name != "cuda" && s.name != "hip")) continue;
    CAPTURE(s.name);
    std::string why;
    CollectiveLibrary* lib = s.backend->collectives(why);
    CHECK_FALSE(s.backend->stages_collectives_through_host());
    if (s.name == "hip") {
      CHECK(lib == nullptr);
      CHECK(why.find("RCCL") != std::string::npos);
    } else if (lib) {
      CHECK(lib->name().rfind("NCCL ", 0) == 0);
      CHECK(lib->reduces(DType::kBFloat16));
      CHECK_FALSE(lib->reduces(DType::kInt16));
    } else {
      CHECK(why.find("NCCL") != std::string::npos);
    }
  }
}

// ---- NCCL on cuda:0 (the H200 run; skipped where cuda:0 does not open) ----

namespace {

std::optional<Device> cuda0() {
  try {
    return nbx::open("cuda:0");
  } catch (const Error&) {
    return std::nullopt;
  }
}

}  // namespace

TEST_CASE("NCCL, one rank on cuda:0: every call, both ways of making the communicator") {
  const auto gpu = cuda0();
  if (!gpu) return;
  const CommUniqueId id = Communicator::unique_id(*gpu);
  CHECK(id.bytes.size() == 128);
  for (const Communicator& comm :
       {Communicator::create({*gpu}), Communicator::create(*gpu, 0, 1, id)}) {
    CHECK(comm.library().rfind("NCCL ", 0) == 0);
    CHECK(comm.world_size() == 1);
    // One rank: reductions leave the values, avg divides by 1; an op queued after the
    // collective on the device sees its result (ordered with the device's queue).
    for (DType t : {DType::kFloat32, DType::kBFloat16, DType::kFloat16, DType::kFloat64}) {
      for (ReduceOp op :
           {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMin, ReduceOp::kMax, ReduceOp::kAvg}) {
        CAPTURE(dtype_name(t));
        CAPTURE(reduce_op_name(op));
        Tensor x = make(t, {1.5, -2, 3, 0.25}).to(*gpu);
        const Work w = comm.all_reduce({x}, op);
        const Tensor y = ops::mul(x, 2.0);  // after the collective on the stream
        w.wait();
        CHECK(w.done());
        check_floats(y, t, {3, -4, 6, 0.5});
      }
    }
    for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64, DType::kBool}) {
      Tensor x = make(t, {1, 0, 1, 1}).to(*gpu);
      comm.all_reduce({x}, ReduceOp::kSum).wait();
      check_ints(x, t, {1, 0, 1, 1});
    }
    CHECK_THROWS_AS(comm.all_reduce({make(DType::kInt16, {1, 2}).to(*gpu)}), Unsupported);
    // Data movement as bytes: any dtype, int16 included.
    Tensor b = make(DType::kInt16, {7, -8, 9}).to(*gpu);
    comm.broadcast({b}, 0).wait();
    check_ints(b, DType::kInt16, {7, -8, 9});
    Tensor in = make(DType::kBFloat16, {1, 2, 3, 4}).to(*gpu);
    Tensor out = make(DType::kBFloat16, {0, 0, 0, 0}).to(*gpu);
    comm.all_gather({out}, {in}).wait();
    check_floats(out, DType::kBFloat16, {1, 2, 3, 4});
    Tensor rs = make(DType::kFloat32, {0, 0, 0, 0}).to(*gpu);
    comm.reduce_scatter({rs}, {in.to(DType::kFloat32)}, ReduceOp::kMax).wait();
    check_floats(rs, DType::kFloat32, {1, 2, 3, 4});
    Tensor a2a = make(DType::kFloat16, {0, 0, 0, 0}).to(*gpu);
    comm.all_to_all({a2a}, {in.to(DType::kFloat16)}).wait();
    check_floats(a2a, DType::kFloat16, {1, 2, 3, 4});
    Tensor r = make(DType::kInt64, {5, 6}).to(*gpu);
    comm.reduce({r}, 0, ReduceOp::kSum).wait();
    check_ints(r, DType::kInt64, {5, 6});
    // Point to point needs a peer: rank 0 of 1 has none.
    CHECK_THROWS_AS(comm.send(r, 0), InvalidArgument);
    // A large all_reduce in flight: the Work keeps its tensor alive until waited on.
    Work big;
    {
      Tensor t = ops::mul(Tensor::ones({1 << 24}, DType::kFloat32, *gpu), 3.0);
      big = comm.all_reduce({t}, ReduceOp::kSum);
    }
    big.wait();
  }
  // The host and cuda:0 together: a library spans its own backend only.
  CHECK_THROWS_AS(Communicator::create({*gpu, nbx::open("host")}), InvalidArgument);
  CHECK_THROWS_AS(Communicator::create({nbx::open("host"), *gpu}), InvalidArgument);
}
