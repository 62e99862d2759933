// Helpers of vk_test_util.hpp.
#include "vk_test_util.hpp"

#include <cmath>
#include <limits>
#include <sstream>

#include "core/half.hpp"
#include "core/registry.hpp"
#include "tests/common/raw_elements.hpp"

namespace nbx::vktest {

BackendDevice& vulkan_device() {
  static std::unique_ptr<BackendDevice> dev = backend_by_name("vulkan").open(0);
  return *dev;
}
// The host device an nbx::Device owns: host kernels take their scratch rows from that
// Device's caching allocator (BackendDevice::scratch), which a raw device has none of.
BackendDevice& host_device() {
  return nbx::open("host").context().backend_device();
}

const Device& vk() {
  static const Device d = open("vulkan:0");
  return d;
}

bool device_holds(DType t) {
  const Capabilities& c = vk().capabilities();
  if (t == DType::kFloat64) return c.fp64.value;
  if (t == DType::kInt64) return c.int64.value;
  if (t == DType::kFloat16) return c.fp16.value;
  return true;
}

template <typename T>
static T get(const Raw& r, std::size_t i) {
  T v;
  std::memcpy(&v, r.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}
double element_as_double(const Raw& r, std::size_t i) {
  switch (r.dtype) {
    case DType::kFloat16:
      return half_bits_to_double(get<std::uint16_t>(r, i));
    case DType::kBFloat16:
      return bf16_bits_to_double(get<std::uint16_t>(r, i));
    case DType::kFloat32:
      return get<float>(r, i);
    case DType::kFloat64:
      return get<double>(r, i);
    default:
      return static_cast<double>(element_as_int(r, i));
  }
}

std::int64_t element_as_int(const Raw& r, std::size_t i) {
  switch (r.dtype) {
    case DType::kBool:
      return get<std::uint8_t>(r, i);
    case DType::kInt8:
      return get<std::int8_t>(r, i);
    case DType::kUInt8:
      return get<std::uint8_t>(r, i);
    case DType::kInt16:
      return get<std::int16_t>(r, i);
    case DType::kInt32:
      return get<std::int32_t>(r, i);
    case DType::kInt64:
      return get<std::int64_t>(r, i);
    default:
      return static_cast<std::int64_t>(element_as_double(r, i));
  }
}

void set_element(Raw& r, std::size_t i, double v, std::int64_t iv) {
  testing::store_element(r.bytes.data(), r.dtype, std::int64_t(i), v, iv);
}

Raw random_raw(DType t, std::size_t n, Values kind, std::mt19937_64& rng) {
  Raw r{t, std::vector<std::byte>(n * dtype_size(t))};
  const bool fl = is_floating(t);
  const double sigma = kind == Values::kSmall ? 1.5 : 3.0;
  std::normal_distribution<double> normal(0.0, sigma);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double specials[] = {0.0, -0.0, NAN, INFINITY, -INFINITY, 0.5, -2.5, 1e30, -1e-30};
  const int bits = t == DType::kBool ? 1 : static_cast<int>(dtype_size(t)) * 8;
  for (std::size_t i = 0; i < n; ++i) {
    double v = normal(rng);
    if (kind == Values::kCast) v = std::ldexp(normal(rng), static_cast<int>(unit(rng) * 70) - 6);
    if (fl && kind != Values::kSmall && unit(rng) < 0.12) v = specials[rng() % std::size(specials)];
    std::int64_t iv = static_cast<std::int64_t>(rng());
    if (t == DType::kBool)
      iv &= 1;
    else if (t == DType::kUInt8)
      iv &= 0xff;
    else if (bits < 64)
      iv = (iv << (64 - bits)) >> (64 - bits);  // sign-extend low bits
    const bool unsigned_t = t == DType::kUInt8 || t == DType::kBool;
    if (kind == Values::kSmall) iv = static_cast<std::int64_t>(rng() % 41) - (unsigned_t ? 0 : 20);
    if (kind == Values::kShift) iv = static_cast<std::int64_t>(rng() % 74) - (unsigned_t ? 0 : 3);
    if (kind == Values::kExponent)
      iv = static_cast<std::int64_t>(rng() % 15) - (unsigned_t ? 0 : 2);
    if (kind == Values::kNonZero && iv == 0) iv = t == DType::kBool ? 1 : -1;
    if (t == DType::kBool && kind == Values::kSmall) iv &= 1;
    set_element(r, i, v, iv);
  }
  return r;
}

Launch make_launch(std::int32_t op, DType out, DType compute, std::vector<std::int64_t> sizes) {
  Launch l;
  abi::ElementwiseParams& p = l.params;
  p.op = op;
  p.ndim = static_cast<std::int32_t>(sizes.size());
  p.compute_dtype = static_cast<std::int32_t>(compute);
  p.numel = 1;
  std::int64_t stride = 1;
  for (int d = p.ndim - 1; d >= 0; --d) {
    p.sizes[d] = sizes[std::size_t(d)];
    p.out.strides[d] = stride;
    stride *= sizes[std::size_t(d)];
  }
  p.numel = stride;
  p.out.dtype = static_cast<std::int32_t>(out);
  l.out = Raw{out, std::vector<std::byte>(std::size_t(p.numel) * dtype_size(out), std::byte{0x5a})};
  return l;
}

Raw run_on(BackendDevice& dev, const Launch& l) {
  abi::ElementwiseParams p = l.params;
  p.num_inputs = static_cast<std::int32_t>(l.inputs.size());
  std::vector<KernelBuffer> buffers;
  auto upload = [&dev](const Raw& r) {
    DeviceMemory m = dev.allocate(r.bytes.size());
    dev.copy_from_host(m, 0, r.bytes.data(), r.bytes.size());
    return m;
  };
  buffers.push_back({upload(l.out), true});
  bool contiguous = true;
  for (std::size_t k = 0; k < l.inputs.size(); ++k) {
    const Input& in = l.inputs[k];
    abi::ElementwiseOperand& o = p.in[k];
    o.dtype = static_cast<std::int32_t>(in.raw.dtype);
    o.is_scalar = in.scalar;
    o.scalar = in.value;
    o.offset = in.offset;
    for (int d = 0; d < p.ndim; ++d) {
      o.strides[d] = in.scalar ? 0 : in.strides[std::size_t(d)];
      if (!in.scalar && p.sizes[d] > 1 && o.strides[d] != p.out.strides[d]) contiguous = false;
    }
    buffers.push_back({in.scalar ? DeviceMemory{} : upload(in.raw), false});
  }
  p.contiguous = contiguous;
  dev.launch({nbx::KernelFamily::kElementwise, buffers, std::as_bytes(std::span(&p, 1))});
  Raw out = l.out;
  dev.copy_to_host(out.bytes.data(), buffers[0].memory, 0, out.bytes.size());
  dev.synchronize();
  for (KernelBuffer& b : buffers) dev.free(b.memory);
  return out;
}

std::string compare(const Raw& got, const Raw& want, const Raw* input0) {
  double rtol = 0, atol = 0;
  switch (want.dtype) {
    case DType::kFloat16:
      rtol = 1e-3, atol = 1e-5;
      break;
    case DType::kBFloat16:
      rtol = 1.6e-2, atol = 1e-5;
      break;
    case DType::kFloat32:
      rtol = 1.3e-6, atol = 1e-5;
      break;
    case DType::kFloat64:
      rtol = 1e-7, atol = 1e-7;
      break;
    default:
      break;
  }
  for (std::size_t i = 0; i < want.count(); ++i) {
    bool ok;
    double g = 0, w = 0;
    if (is_floating(want.dtype)) {
      g = element_as_double(got, i);
      w = element_as_double(want, i);
      ok = (std::isnan(g) && std::isnan(w)) || g == w ||
           (std::isfinite(g) && std::isfinite(w) && std::fabs(g - w) <= atol + rtol * std::fabs(w));
    } else {
      ok = element_as_int(got, i) == element_as_int(want, i);
      g = double(element_as_int(got, i));
      w = double(element_as_int(want, i));
    }
    if (!ok) {
      std::ostringstream s;
      s.precision(17);
      s << "element " << i << " (" << dtype_name(want.dtype) << "): vulkan " << g << ", host " << w;
      if (input0 && i < input0->count()) s << ", input0 " << element_as_double(*input0, i);
      s << ".";
      return s.str();
    }
  }
  return {};
}

}  // namespace nbx::vktest
