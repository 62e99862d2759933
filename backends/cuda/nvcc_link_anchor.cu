// The CUDA module's one .cu that meson compiles as a source (the kernels come as objects from
// the nvcc generator in meson.build, which writes depfiles): a target with a CUDA source is
// linked by nvcc, which links the CUDA runtime statically (-cudart static). No code.
