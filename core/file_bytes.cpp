#include "core/file_bytes.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/errors.hpp"

namespace nbx {
namespace {

using File = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

[[noreturn]] void fail(const char* op, const std::string& path, const char* doing) {
  throw InvalidArgument(op, std::string(op) + ": cannot " + doing + " '" + path + "' (" +
                                std::strerror(errno) + ").");
}

}  // namespace

std::vector<std::byte> read_file_bytes(const char* op, const std::string& path) {
  File f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) fail(op, path, "open");
  std::vector<std::byte> out;
  std::byte buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f.get())) > 0;)
    out.insert(out.end(), buf, buf + n);
  if (std::ferror(f.get())) fail(op, path, "read");
  return out;
}

void write_file_bytes(const char* op, const std::string& path, std::span<const std::byte> bytes) {
  File f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) fail(op, path, "open for writing");
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size()) fail(op, path, "write");
  if (std::fflush(f.get()) != 0) fail(op, path, "write");
}

}  // namespace nbx
