// Whole files as bytes, for the .npy/.npz readers and writers. Errors are InvalidArgument
// naming the op, the path and the system's reason.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace nbx {

std::vector<std::byte> read_file_bytes(const char* op, const std::string& path);
void write_file_bytes(const char* op, const std::string& path, std::span<const std::byte> bytes);

}  // namespace nbx
