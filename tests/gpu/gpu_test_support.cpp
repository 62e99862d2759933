// Helpers of the CUDA/HIP tests (see the header).
#include "tests/gpu/gpu_test_support.hpp"

#include "core/ops/variant_plan.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <span>

#include "core/device.hpp"
#include "core/half.hpp"
#include "core/registry.hpp"
#include "tests/common/raw_elements.hpp"

namespace nbx::gputest {
namespace {

// Tolerances per output dtype (rtol, atol), as in the conformance suite.
struct Tolerance {
  double rtol, atol;
};
Tolerance tolerance_for(DType t) {
  switch (t) {
    case DType::kFloat16:
      return {1e-3, 1e-5};
    case DType::kBFloat16:
      return {1.6e-2, 1e-5};
    case DType::kFloat32:
      return {1.3e-6, 1e-5};
    case DType::kFloat64:
      return {1e-7, 1e-7};
    default:
      return {0, 0};
  }
}

// Opens device 0 with launch options set through the environment. Batching is off unless
// `batch`: with it on, every small case would take the batch kernel, and the per-path
// variants would no longer test their paths. The batching device takes a threshold given
// in NBX_GPU_BATCH (to test larger batched ops), the default otherwise.
std::unique_ptr<BackendDevice> open_with(const char* var, const char* value, bool batch = false) {
  const char* given = std::getenv("NBX_GPU_BATCH");
  const std::string saved = given ? given : "";
  if (var) setenv(var, value, 1);
  if (!batch)
    setenv("NBX_GPU_BATCH", "0", 1);
  else if (saved.empty() || saved == "0")
    setenv("NBX_GPU_BATCH", "1", 1);
  auto dev = backend_by_name(backend_under_test()).open(0);
  if (var) unsetenv(var);
  if (given)
    setenv("NBX_GPU_BATCH", saved.c_str(), 1);
  else
    unsetenv("NBX_GPU_BATCH");
  return dev;
}

template <class T>
T load_raw(const std::vector<std::byte>& buf, std::int64_t index) {
  T v;
  std::memcpy(&v, buf.data() + index * std::int64_t(sizeof(T)), sizeof(T));
  return v;
}

// int64 extremes come out of value() as ±2^63 (doubles cannot hold 2^63 - 1): clamp them.
std::int64_t to_int(double v) {
  if (!std::isfinite(v)) return 0;
  if (v >= 9.2e18) return std::numeric_limits<std::int64_t>::max();
  if (v <= -9.2e18) return std::numeric_limits<std::int64_t>::min();
  return std::int64_t(v);
}

std::string describe_value(const std::vector<std::byte>& buf, DType t, std::int64_t i) {
  return is_floating(t) ? std::to_string(element_as_double(buf, t, i))
                        : std::to_string(element_as_int(buf, t, i));
}

}  // namespace

std::string backend_under_test() {
  const char* b = std::getenv("NBX_TEST_GPU_BACKEND");
  return b && *b ? b : "cuda";
}

Devices& devices() {
  static Devices d = [] {
    Devices out;
    out.host = &nbx::open("host").context().backend_device();
    out.gpu.push_back({"default", open_with(nullptr, nullptr)});
    out.gpu.push_back({"generic", open_with("NBX_GPU_ELEMENTWISE", "generic")});
    out.gpu.push_back({"tile64", open_with("NBX_GPU_TILE", "64")});
    out.batched = open_with(nullptr, nullptr, true);
    return out;
  }();
  return d;
}

DType reduce_accumulate_dtype(int op, DType t) {
  if (is_half_type(t)) return DType::kFloat32;
  if ((op == abi::kReduce_sum || op == abi::kReduce_prod) && !is_floating(t)) return DType::kInt64;
  return t;
}

DType reduce_out_dtype(int op, DType t) {
  switch (op) {
    case abi::kReduce_argmax:
    case abi::kReduce_argmin:
    case abi::kReduce_count_nonzero:
      return DType::kInt64;
    case abi::kReduce_any:
    case abi::kReduce_all:
      return DType::kBool;
    case abi::kReduce_sum:
    case abi::kReduce_prod:
      return is_floating(t) ? t : DType::kInt64;
    default:
      return t;
  }
}

std::unique_ptr<BackendDevice> open_with_rows(const char* value) {
  const char* given = std::getenv("NBX_GPU_ROWS");
  const std::string saved = given ? given : "";
  setenv("NBX_GPU_ROWS", value, 1);
  std::unique_ptr<BackendDevice> d;
  try {
    d = backend_by_name(backend_under_test()).open(0);
  } catch (...) {
    given ? (void)setenv("NBX_GPU_ROWS", saved.c_str(), 1) : (void)unsetenv("NBX_GPU_ROWS");
    throw;
  }
  given ? (void)setenv("NBX_GPU_ROWS", saved.c_str(), 1) : (void)unsetenv("NBX_GPU_ROWS");
  return d;
}

RowKernelDevices& row_kernel_devices() {
  static RowKernelDevices d{open_with_rows("general"), open_with_rows("fast"),
                            open_with_rows("fast-only")};
  return d;
}

abi::ElementwiseParams make_params(const Case& c) {
  abi::ElementwiseParams p{};
  p.op = c.op;
  p.num_inputs = static_cast<std::int32_t>(c.in.size());
  p.ndim = static_cast<std::int32_t>(c.sizes.size());
  p.compute_dtype = static_cast<std::int32_t>(c.compute);
  p.numel = 1;
  for (std::size_t d = 0; d < c.sizes.size(); ++d) {
    p.sizes[d] = c.sizes[d];
    p.numel *= c.sizes[d];
  }
  for (int k = 0; k < 3; ++k) p.attrs[k] = c.attrs[k];
  auto fill = [&](abi::ElementwiseOperand& o, const Operand& src) {
    o.offset = src.offset;
    o.dtype = static_cast<std::int32_t>(src.dtype);
    o.is_scalar = src.scalar ? 1 : 0;
    o.scalar = src.value;
    for (std::size_t d = 0; d < src.strides.size(); ++d) o.strides[d] = src.strides[d];
  };
  fill(p.out, c.out);
  bool contiguous = true;
  for (std::size_t k = 0; k < c.in.size(); ++k) {
    fill(p.in[k], c.in[k]);
    if (!c.in[k].scalar && c.in[k].strides != c.out.strides) contiguous = false;
  }
  p.contiguous = contiguous ? 1 : 0;
  return p;
}

std::vector<std::vector<std::byte>> run_cases_queued(BackendDevice& device,
                                                     const std::vector<Case>& cases) {
  std::vector<abi::ElementwiseParams> params;
  std::vector<std::vector<KernelBuffer>> buffers(cases.size());
  auto release = [&] {
    for (auto& bs : buffers)
      for (KernelBuffer& b : bs) device.free(b.memory);
  };
  std::vector<std::vector<std::byte>> results;
  try {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      params.push_back(make_params(c));
      params.back().variant = ops::elementwise_variant_for(device, params.back().numel);
      auto upload = [&](const Operand& o, bool written) {
        DeviceMemory m = device.allocate(o.storage.size());
        buffers[i].push_back({m, written});
        device.copy_from_host(m, 0, o.storage.data(), o.storage.size());
      };
      upload(c.out, true);
      for (const Operand& o : c.in) {
        if (o.scalar)
          buffers[i].push_back({});
        else
          upload(o, false);
      }
    }
    // Back to back, with nothing in between that would flush a batch.
    for (std::size_t i = 0; i < cases.size(); ++i) {
      KernelLaunch launch;
      launch.family = nbx::KernelFamily::kElementwise;
      launch.buffers = buffers[i];
      launch.params = std::as_bytes(std::span<const abi::ElementwiseParams>(&params[i], 1));
      device.launch(launch);
    }
    device.synchronize();
    for (std::size_t i = 0; i < cases.size(); ++i) {
      results.emplace_back(cases[i].out.storage.size());
      device.copy_to_host(results.back().data(), buffers[i][0].memory, 0, results.back().size());
    }
  } catch (...) {
    release();
    throw;
  }
  release();
  return results;
}

std::vector<std::byte> run_case(BackendDevice& device, const Case& c) {
  abi::ElementwiseParams p = make_params(c);
  p.variant = ops::elementwise_variant_for(device, p.numel);  // as the wrappers plan it
  std::vector<KernelBuffer> buffers;
  auto upload = [&](const Operand& o, bool written) {
    DeviceMemory m = device.allocate(o.storage.size());
    device.copy_from_host(m, 0, o.storage.data(), o.storage.size());
    buffers.push_back({m, written});
  };
  upload(c.out, true);
  for (const Operand& o : c.in) {
    if (o.scalar) {
      buffers.push_back({});
    } else {
      upload(o, false);
    }
  }
  std::vector<std::byte> result(c.out.storage.size());
  auto release = [&] {
    for (KernelBuffer& b : buffers) device.free(b.memory);
  };
  try {
    KernelLaunch launch;
    launch.family = nbx::KernelFamily::kElementwise;
    launch.buffers = buffers;
    launch.params = std::as_bytes(std::span<const abi::ElementwiseParams>(&p, 1));
    device.launch(launch);
    device.synchronize();
    device.copy_to_host(result.data(), buffers[0].memory, 0, result.size());
  } catch (...) {
    release();
    throw;
  }
  release();
  return result;
}

void put_element(std::vector<std::byte>& buf, DType t, std::int64_t index, double f,
                 std::int64_t i) {
  testing::store_element(buf.data(), t, index, f, i);
}

double element_as_double(const std::vector<std::byte>& buf, DType t, std::int64_t index) {
  switch (t) {
    case DType::kFloat16:
      return half_bits_to_double(load_raw<std::uint16_t>(buf, index));
    case DType::kBFloat16:
      return bf16_bits_to_double(load_raw<std::uint16_t>(buf, index));
    case DType::kFloat32:
      return load_raw<float>(buf, index);
    case DType::kFloat64:
      return load_raw<double>(buf, index);
    default:
      return double(element_as_int(buf, t, index));
  }
}

std::int64_t element_as_int(const std::vector<std::byte>& buf, DType t, std::int64_t index) {
  switch (t) {
    case DType::kBool:
      return load_raw<std::uint8_t>(buf, index);
    case DType::kInt8:
      return load_raw<std::int8_t>(buf, index);
    case DType::kUInt8:
      return load_raw<std::uint8_t>(buf, index);
    case DType::kInt16:
      return load_raw<std::int16_t>(buf, index);
    case DType::kInt32:
      return load_raw<std::int32_t>(buf, index);
    case DType::kInt64:
      return load_raw<std::int64_t>(buf, index);
    default:
      return std::int64_t(element_as_double(buf, t, index));
  }
}

std::string compare_outputs(const Case& c, const std::vector<std::byte>& expected,
                            const std::vector<std::byte>& got) {
  const DType t = c.out.dtype;
  const std::int64_t n = std::int64_t(expected.size() / dtype_size(t));
  if (got.size() != expected.size()) return "output sizes differ";
  const Tolerance tol = tolerance_for(t);
  for (std::int64_t i = 0; i < n; ++i) {
    bool ok;
    if (is_floating(t)) {
      const double e = element_as_double(expected, t, i), g = element_as_double(got, t, i);
      if (std::isnan(e) || std::isnan(g)) {
        ok = std::isnan(e) && std::isnan(g);
      } else if (std::isinf(e) || std::isinf(g)) {
        ok = e == g;
      } else {
        ok = std::fabs(g - e) <= tol.atol + tol.rtol * std::fabs(e);
      }
    } else {
      ok = element_as_int(expected, t, i) == element_as_int(got, t, i);
    }
    if (!ok)
      return "buffer element " + std::to_string(i) + ": host " + describe_value(expected, t, i) +
             ", gpu " + describe_value(got, t, i);
  }
  return "";
}

double Generator::value(DType t, Role role) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double u = unit(rng_);
  if (t == DType::kBool || role == Role::kCondition) return u < 0.5 ? 0 : 1;
  if (role == Role::kPositive)
    return is_floating(t) ? 0.25 + 1.75 * unit(rng_) : double(rng_() % 101);
  const bool special = u < 0.12;
  if (is_floating(t)) {
    if (special && role != Role::kExponent) {
      static constexpr double kSpecials[] = {0.0,  -0.0, NAN, INFINITY, -INFINITY, 2.5,
                                             -2.5, 0.5,  1e4, -1e4,     1e-3};
      return kSpecials[rng_() % std::size(kSpecials)];
    }
    const double lo = role == Role::kExponent ? -3.0 : -4.0;
    return lo + (-2.0 * lo) * unit(rng_);
  }
  const int bits = int(dtype_size(t)) * 8;
  const bool is_unsigned = t == DType::kUInt8;
  if (role == Role::kShift) return double(std::int64_t(rng_() % (bits + 3)) - 1);
  if (role == Role::kExponent) return double(std::int64_t(rng_() % 11) - 2);
  std::int64_t v;
  if (special) {
    const std::int64_t hi = is_unsigned ? 255
                                        : (bits == 64 ? std::numeric_limits<std::int64_t>::max()
                                                      : (std::int64_t(1) << (bits - 1)) - 1);
    const std::int64_t lo = is_unsigned ? 0 : -hi - 1;
    const std::int64_t picks[] = {lo, hi, -1, 0, 1, lo + 1, hi - 1};
    v = picks[rng_() % std::size(picks)];
    if (is_unsigned && v < 0) v = 255;
  } else {
    v = std::int64_t(rng_() % 201) - (is_unsigned ? 0 : 100);
  }
  if (role == Role::kDivisor && v == 0) v = 7;
  return double(v);
}

void Generator::fill(std::vector<std::byte>& buf, DType t, std::int64_t count, Role role) {
  buf.assign(std::size_t(count) * dtype_size(t), std::byte{0});
  for (std::int64_t i = 0; i < count; ++i) {
    const double v = value(t, role);
    put_element(buf, t, i, v, to_int(v));
  }
}

abi::ScalarValue Generator::scalar(DType compute, Role role) {
  double v = value(compute, role);
  // A GPU computing in float32 computes with the scalar rounded to float32 (as PyTorch
  // does); the host reference would use all of the double. Give both the same value.
  if (compute == DType::kFloat32) v = double(float(v));
  return {v, to_int(v)};
}

}  // namespace nbx::gputest
