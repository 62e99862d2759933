#version 450
// Kernel "vk_copy_probe": the plainest copy a compute shader can do, one 16-byte load and
// store per invocation in a grid-stride loop. Benchmarks time it beside the elementwise
// kernel as the bandwidth ceiling the driver gives a shader (bench/vk_elementwise_bench.cpp).
// Same descriptor layout as elementwise.comp: binding 0 parameters, 1 destination, 2 source.
layout(local_size_x_id = 0) in;

layout(std140, set = 0, binding = 0) uniform Params {
  uvec4 head;  // x uvec4 count, y invocations in the grid
} P;
layout(set = 0, binding = 1) writeonly buffer Dst { uvec4 v[]; } dst;
layout(set = 0, binding = 2) readonly buffer Src { uvec4 v[]; } src;

void main() {
  const uint n = P.head.x, step = P.head.y;
  for (uint i = gl_GlobalInvocationID.x; i < n; i += step) dst.v[i] = src.v[i];
}
