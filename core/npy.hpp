// Tensors to and from NumPy's files: .npy (one array) and .npz (a zip of .npy members, as
// numpy.savez writes). Values are copied through the host.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace nbx {

// ---- .npy (format versions 1.0, 2.0 and 3.0) ----
// Writes `t` (any device, any strides) as a C-ordered little-endian .npy file. bfloat16 has
// no NumPy dtype and is refused (InvalidArgument: convert it first); a file that cannot be
// written throws InvalidArgument naming the path and the system's reason.
void save_npy(const std::string& path, const Tensor& t);
// Reads a .npy file into a new contiguous tensor on `device`: bool, int8–64, uint8,
// float16/32/64, either byte order, C or Fortran order. Throws InvalidArgument naming the
// path for a missing or malformed file and for dtypes nbx lacks (complex, uint16, strings,
// objects).
Tensor load_npy(const std::string& path, const Device& device = host_device());

// The bytes of a .npy file, and a tensor from them (`what` names the source in messages).
std::vector<std::byte> npy_encode(const Tensor& t);
Tensor npy_decode(std::span<const std::byte> bytes, const std::string& what,
                  const Device& device = host_device());

// ---- .npz ----
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;
// Writes each tensor as member "<name>.npy" of an uncompressed zip (zip64 where a member or
// the archive passes 4 GiB), which numpy.load reads. Throws InvalidArgument for an empty or
// repeated name, and what save_npy throws.
void save_npz(const std::string& path, const NamedTensors& tensors);
// Reads every member of a .npz file (numpy.savez's stored members and savez_compressed's
// deflated ones), in the archive's order, names without ".npy", onto `device`. Throws
// InvalidArgument naming the path and the member for a malformed archive, a compression
// method other than stored or deflate, encryption, or a CRC mismatch.
NamedTensors load_npz(const std::string& path, const Device& device = host_device());

}  // namespace nbx
