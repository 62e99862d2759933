// A small program that uses nbxtensor the way another project would (through <nbx/nbx.hpp>
// only): open a device, print some of its capabilities, run softmax and matmul there, and
// check both against plain loops. Exit 0 when they agree, 1 on a mismatch or an nbx error.
//
//   nbx-example [DEVICE]      DEVICE: "vulkan:0", "cuda:0", "host" …; default: $NBX_DEVICE,
//                             else the first GPU, else the host
#include <nbx/nbx.hpp>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// Values that are neither zero nor a pattern a wrong kernel could reproduce by accident.
std::vector<float> sample(int count, float phase) {
  std::vector<float> v(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) v[i] = 2.5f * std::sin(0.7f * static_cast<float>(i) + phase);
  return v;
}

// The largest |got - want| / (1 + |want|); float32 results on any device stay far below 1e-5.
double max_error(const std::vector<float>& got, const std::vector<double>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    worst = std::fmax(worst, std::fabs(got[i] - want[i]) / (1 + std::fabs(want[i])));
  return worst;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const nbx::Device device = argc > 1 ? nbx::open(argv[1]) : nbx::default_device();
    const nbx::Capabilities& caps = device.capabilities();
    std::printf("device   %s\n", caps.device.c_str());
    std::printf("fp64     %s (%s)\n", caps.fp64.value ? "yes" : "no", caps.fp64.source.c_str());
    std::printf("bf16     %s (%s)\n", std::string(nbx::to_string(caps.bf16.value)).c_str(),
                caps.bf16.source.c_str());
    std::printf("subgroup %d (%s)\n", caps.subgroup_size.value, caps.subgroup_size.source.c_str());

    constexpr int kRows = 3, kInner = 5, kCols = 4;
    const std::vector<float> a = sample(kRows * kInner, 0.0f);
    const std::vector<float> b = sample(kInner * kCols, 1.3f);
    const nbx::Tensor ta = nbx::Tensor::from_host(a, {kRows, kInner}).to(device);
    const nbx::Tensor tb = nbx::Tensor::from_host(b, {kInner, kCols}).to(device);

    const std::vector<float> soft = nbx::ops::softmax(ta, 1).to_host<float>();
    const std::vector<float> prod = nbx::ops::matmul(ta, tb).to_host<float>();

    std::vector<double> soft_want(a.size()), prod_want(static_cast<std::size_t>(kRows * kCols));
    for (int r = 0; r < kRows; ++r) {
      double peak = a[r * kInner], sum = 0;
      for (int k = 0; k < kInner; ++k) peak = std::fmax(peak, a[r * kInner + k]);
      for (int k = 0; k < kInner; ++k) sum += std::exp(a[r * kInner + k] - peak);
      for (int k = 0; k < kInner; ++k)
        soft_want[r * kInner + k] = std::exp(a[r * kInner + k] - peak) / sum;
      for (int c = 0; c < kCols; ++c)
        for (int k = 0; k < kInner; ++k)
          prod_want[r * kCols + c] += double(a[r * kInner + k]) * b[k * kCols + c];
    }
    const double soft_error = max_error(soft, soft_want), prod_error = max_error(prod, prod_want);
    std::printf("softmax  [%d, %d] over dim 1: max error %.2e\n", kRows, kInner, soft_error);
    std::printf("matmul   [%d, %d] @ [%d, %d]: max error %.2e\n", kRows, kInner, kInner, kCols,
                prod_error);
    if (soft_error > 1e-5 || prod_error > 1e-5) {
      std::fprintf(stderr, "nbx-example: results differ from the loops above.\n");
      return 1;
    }
    std::printf("ok\n");
    return 0;
  } catch (const nbx::Error& e) {
    std::fprintf(stderr, "nbx-example: %s\n", e.what());
    return 1;
  }
}
