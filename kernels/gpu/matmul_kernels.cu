// The "matmul" kernel family on CUDA and HIP (kernel ABI: abi::MatmulParams, semantics
// backends/host/host_matmul.cpp): the launch, dispatching on the operands' dtype to the tiled
// kernel (matmul_kernels.cuh; float32, float16 and bfloat16 instantiate it here, the other
// types in matmul_*_kernels.cu), the addend copy and the HIP module's vendor-BLAS stubs.
#include <string>

#include "kernels/gpu/matmul_kernels.cuh"

namespace nbx::gpu {

NBX_MATMUL_TILED_DEFINE(float)
NBX_MATMUL_TILED_DEFINE(half_t)
NBX_MATMUL_TILED_DEFINE(bfloat16_t)

namespace {

constexpr int kAddendBlock = 256;

// out = scale * addend, or 0, over every output element (grid-stride, 64-bit indices).
__global__ void __launch_bounds__(kAddendBlock)
    matmul_addend_kernel(const NBX_GPU_GRID_CONSTANT abi::MatmulParams p, void* out,
                         const void* addend, double scale, bool use_addend) {
  const i64 total = p.batch * p.m * p.n;
  for (i64 e = i64(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += i64(gridDim.x) * blockDim.x) {
    const i64 col = e % p.n, row = (e / p.n) % p.m, bz = e / (p.n * p.m);
    const i64 o = batch_offset(p, bz, p.out_offset, p.out_batch_strides) + row * p.out_row_stride +
                  col * p.out_col_stride;
    double v = 0;
    if (use_addend)
      v = scale * load_as<double>(addend, p.addend_dtype,
                                  batch_offset(p, bz, p.addend_offset, p.addend_batch_strides) +
                                      row * p.addend_row_stride + col * p.addend_col_stride);
    store_as<double>(out, p.out_dtype, o, v);
  }
}

bool floating(int dtype) {
  return dtype == kFloat16 || dtype == kBFloat16 || dtype == kFloat32 || dtype == kFloat64;
}

}  // namespace

bool matmul_has_work(const abi::MatmulParams& p) {
  return p.batch != 0 && p.m != 0 && p.n != 0;
}

ElementwiseLaunchResult launch_matmul(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                      int num_buffers, const MatmulDevice& device, void* stream) {
  if (!matmul_has_work(p)) return {};
  if (p.a_dtype == kFloat16 || p.a_dtype == kBFloat16 || p.a_dtype == kFloat32) {
    if (p.accumulate_dtype != kFloat32) reject("16/32-bit floats accumulate in float32");
  } else if (p.accumulate_dtype != p.a_dtype) {
    reject("the accumulate dtype must be the operands' dtype");
  }
  const Stream s = static_cast<Stream>(stream);
  switch (p.a_dtype) {
    case kFloat32:
      return launch_tiled<float>(p, buffers, device, s);
    case kFloat64:
      return launch_tiled<double>(p, buffers, device, s);
    case kFloat16:
      return launch_tiled<half_t>(p, buffers, device, s);
    case kBFloat16:
      return launch_tiled<bfloat16_t>(p, buffers, device, s);
    case kInt8:
      return launch_tiled<std::int8_t>(p, buffers, device, s);
    case kUInt8:
      return launch_tiled<std::uint8_t>(p, buffers, device, s);
    case kInt16:
      return launch_tiled<std::int16_t>(p, buffers, device, s);
    case kInt32:
      return launch_tiled<std::int32_t>(p, buffers, device, s);
    default:
      return launch_tiled<i64>(p, buffers, device, s);
  }
}

ElementwiseLaunchResult launch_matmul_addend(const abi::MatmulParams& p, const BoundBuffer* buffers,
                                             int num_buffers, double scale, void* stream) {
  if (!matmul_has_work(p)) return {};
  if (!floating(p.out_dtype)) reject("the addend copy takes floating outputs only");
  const i64 total = p.batch * p.m * p.n;
  const i64 blocks = (total + kAddendBlock - 1) / kAddendBlock;
  const unsigned grid = unsigned(blocks < 65535 * 16 ? blocks : 65535 * 16);
  const bool use_addend = p.has_addend && p.beta != 0;
  matmul_addend_kernel<<<grid, kAddendBlock, 0, static_cast<Stream>(stream)>>>(
      p, buffers[0].address, use_addend ? buffers[3].address : nullptr, scale, use_addend);
  ElementwiseLaunchResult r;
  r.error = int(last_launch_error());
  r.call = "matmul addend launch";
  r.path = ElementwisePath::kGeneric;
  return r;
}

// The variant in the block runs: the own tiled kernel or the vendor BLAS (cuBLASLt, offered
// only where it loaded).
ElementwiseLaunchResult launch_family(const abi::MatmulParams& p, const GpuLaunch& l) {
  const MatmulDevice device{l.device_index, *l.device_name, l.shared_memory_per_block};
  return p.variant == abi::kMatmulVendorBlas
             ? launch_matmul_vendor_blas(p, l.buffers, l.num_buffers, device, l.stream)
             : launch_matmul(p, l.buffers, l.num_buffers, device, l.stream);
}

#if NBX_GPU_HIP
// The HIP module's vendor BLAS: none. hipBLAS is not a dependency; the tiled kernel above is
// HIP's matmul, and the H200 runs it too (NBX_MATMUL=tiled) so it is verified.
std::string vendor_blas_status() {
  return "none: the HIP backend runs the own tiled kernel (hipBLAS is not used)";
}
bool vendor_blas_available() {
  return false;
}
ElementwiseLaunchResult launch_matmul_vendor_blas(const abi::MatmulParams&, const BoundBuffer*, int,
                                                  const MatmulDevice& device, void*) {
  throw Unsupported("matmul", device.name, "matmul.blas",
                    "matmul on " + device.name + ": the HIP backend has no vendor BLAS (" +
                        vendor_blas_status() + "); refused.");
}
void release_vendor_blas(int) {}
#endif

}  // namespace nbx::gpu
