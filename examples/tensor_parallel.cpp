// A tensor-parallel MLP block, Megatron style, against <nbx/nbx.hpp> only: the first linear
// layer split by output columns across the ranks (column-parallel: each rank holds h/W rows
// of W1 and computes its slice of the hidden activation, no communication), the second split
// by input columns (row-parallel: each rank's partial product covers its hidden slice), and
// one all_reduce (sum) that adds the partials. The result is checked against the same block
// on one device.
//
//   nbx-tensor-parallel [DEVICES]      DEVICES: "cuda:0,cuda:1" (NCCL), "host,vulkan:0"
//                                      (staged through host memory); default: every CUDA
//                                      device when there are two or more, else host,vulkan:0
//                                      where Vulkan opens, else the host alone.
// Exits 0 when the ranks' result matches, 1 when it does not, 77 when a device is absent.
#include <cmath>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nbx/nbx.hpp>

namespace {

std::vector<nbx::Device> pick_devices(int argc, char** argv) {
  std::vector<std::string> names;
  if (argc > 1) {
    std::stringstream list(argv[1]);
    for (std::string name; std::getline(list, name, ',');) names.push_back(name);
  } else {
    for (int i = 0;; ++i) {
      try {
        nbx::open("cuda:" + std::to_string(i));
        names.push_back("cuda:" + std::to_string(i));
      } catch (const nbx::Error&) {
        break;
      }
    }
    if (names.size() < 2) {
      names = {"host"};
      try {
        nbx::open("vulkan:0");
        names.push_back("vulkan:0");
      } catch (const nbx::Error&) {
      }
    }
  }
  std::vector<nbx::Device> devices;
  for (const std::string& name : names) devices.push_back(nbx::open(name));
  return devices;
}

// A [rows, cols] float32 tensor of uniform values in [-scale, scale) on the host.
nbx::Tensor uniform(std::int64_t rows, std::int64_t cols, float scale, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<std::size_t>(rows * cols));
  for (float& x : v) x = dist(rng);
  return nbx::Tensor::from_host(v.data(), {rows, cols}, nbx::float32);
}

std::vector<float> values(const nbx::Tensor& t) {
  std::vector<float> v(static_cast<std::size_t>(t.numel()));
  t.contiguous().copy_to_host(v.data());
  return v;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<nbx::Device> devices;
  try {
    devices = pick_devices(argc, argv);
  } catch (const nbx::Error& e) {
    std::fprintf(stderr, "nbx-tensor-parallel: %s\n", e.what());
    return 77;
  }
  const auto W = static_cast<std::int64_t>(devices.size());
  const std::int64_t batch = 8, d = 64, h = 256;  // h divides by the ranks
  if (h % W != 0) {
    std::fprintf(stderr, "nbx-tensor-parallel: %lld ranks do not divide h = %lld\n",
                 static_cast<long long>(W), static_cast<long long>(h));
    return 1;
  }
  std::mt19937 rng(16);
  const nbx::Tensor x = uniform(batch, d, 1.0f, rng);
  const nbx::Tensor w1 = uniform(h, d, 1.0f / std::sqrt(float(d)), rng);  // [h, d]
  const nbx::Tensor w2 = uniform(d, h, 1.0f / std::sqrt(float(h)), rng);  // [d, h]

  try {
    // One device: y = gelu(x W1ᵀ) W2ᵀ.
    const nbx::Device& one = devices[0];
    const nbx::Tensor reference =
        nbx::ops::linear(nbx::ops::gelu(nbx::ops::linear(x.to(one), w1.to(one))), w2.to(one));

    // W ranks: rank r holds rows [r·h/W, (r+1)·h/W) of W1 and the same columns of W2.
    const nbx::Communicator comm = nbx::Communicator::create(devices);
    const std::int64_t slice = h / W;
    std::vector<nbx::Tensor> partial;
    for (std::int64_t r = 0; r < W; ++r) {
      const nbx::Device& dev = devices[static_cast<std::size_t>(r)];
      const nbx::Tensor w1_r = w1.narrow(0, r * slice, slice).to(dev);  // column-parallel
      const nbx::Tensor w2_r = w2.narrow(1, r * slice, slice).contiguous().to(dev);  // row-parallel
      const nbx::Tensor hidden = nbx::ops::gelu(nbx::ops::linear(x.to(dev), w1_r));
      partial.push_back(nbx::ops::linear(hidden, w2_r).contiguous());
    }
    comm.all_reduce(partial, nbx::ReduceOp::kSum).wait();

    // Every rank now holds the whole result; float32 sums in another order differ by
    // rounding only.
    const std::vector<float> want = values(reference);
    double worst = 0;
    for (const nbx::Tensor& y : partial) {
      const std::vector<float> got = values(y);
      for (std::size_t i = 0; i < want.size(); ++i)
        worst = std::max(worst, std::fabs(double(got[i]) - want[i]) / (1e-3 + std::fabs(want[i])));
    }
    std::printf("tensor-parallel MLP over %lld rank(s) (%s), %s: worst relative error %.2e\n",
                static_cast<long long>(W), comm.library().c_str(),
                worst <= 1e-4 ? "matches one device" : "DIFFERS from one device", worst);
    return worst <= 1e-4 ? 0 : 1;
  } catch (const nbx::Error& e) {
    std::fprintf(stderr, "nbx-tensor-parallel: %s\n", e.what());
    return 1;
  }
}
