// The two pieces of zlib a .npz needs, written out (RFC 1951 and the zip CRC) so libnbx
// depends on no compression library: numpy.savez_compressed deflates its members.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace nbx {

// Decodes a raw DEFLATE stream that holds exactly `size` bytes. Throws InvalidArgument
// naming `what` for a malformed or truncated stream or a size other than `size`.
std::vector<std::byte> inflate_raw(std::span<const std::byte> in, std::size_t size,
                                   const std::string& what);

// The CRC-32 zip, gzip and PNG use (polynomial 0xEDB88320).
std::uint32_t crc32(std::span<const std::byte> data);

}  // namespace nbx
