// .npz files: a zip archive (PKWARE's APPNOTE) of .npy members. Written stored, with zip64
// records only where a size or an offset passes 4 GiB (numpy.load reads both); read from the
// central directory, zip64 included (numpy.savez writes every local header with a zip64
// field), members stored or deflated (numpy.savez_compressed). Archives are built and read
// whole in memory.
#include <set>
#include <string_view>

#include "core/errors.hpp"
#include "core/file_bytes.hpp"
#include "core/inflate.hpp"
#include "core/npy.hpp"

namespace nbx {
namespace {

constexpr std::uint32_t kLocalSig = 0x04034b50, kCentralSig = 0x02014b50, kEndSig = 0x06054b50;
constexpr std::uint32_t kZip64EndSig = 0x06064b50, kZip64LocatorSig = 0x07064b50;
constexpr std::uint64_t k32 = 0xffffffffu;  // a 4-byte field's sentinel: the value is in zip64
constexpr std::uint16_t kDosDate = (0 << 9) | (1 << 5) | 1;  // 1980-01-01: reproducible files

class Writer {
 public:
  void u16(std::uint64_t v) { le(v, 2); }
  void u32(std::uint64_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void text(std::string_view s) {
    for (char c : s) out.push_back(std::byte(c));
  }
  void bytes(std::span<const std::byte> b) { out.insert(out.end(), b.begin(), b.end()); }
  std::vector<std::byte> out;

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out.push_back(std::byte((v >> (8 * i)) & 0xff));
  }
};

class Reader {
 public:
  Reader(std::span<const std::byte> in, const std::string& path) : in_(in), path_(path) {}
  std::uint64_t le(std::uint64_t at, int n) const {
    if (at > in_.size() || std::uint64_t(n) > in_.size() - at) fail("a record past its end");
    std::uint64_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(in_[at + i]);
    return v;
  }
  std::span<const std::byte> span(std::uint64_t at, std::uint64_t n) const {
    if (at > in_.size() || n > in_.size() - at) fail("a member past the archive's end");
    return in_.subspan(at, n);
  }
  std::size_t size() const { return in_.size(); }
  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument(
        "load_npz", "load_npz: '" + path_ + "' is not a .npz archive nbx reads (" + why + ").");
  }

 private:
  std::span<const std::byte> in_;
  const std::string& path_;
};

struct Member {
  std::string name;
  std::uint16_t method = 0, flags = 0;
  std::uint32_t crc = 0;
  std::uint64_t compressed = 0, size = 0, local_offset = 0;
};

// Where the central directory lies and how many entries it has.
struct Directory {
  std::uint64_t entries = 0, offset = 0;
};

Directory find_directory(const Reader& r) {
  if (r.size() < 22) r.fail("no end of central directory");
  // The end record is 22 bytes plus a comment of at most 65535.
  const std::uint64_t lowest = r.size() > 22 + 65535 ? r.size() - 22 - 65535 : 0;
  for (std::uint64_t at = r.size() - 22;; --at) {
    if (r.le(at, 4) == kEndSig) {
      Directory d{r.le(at + 10, 2), r.le(at + 16, 4)};
      if (at >= 20 && r.le(at - 20, 4) == kZip64LocatorSig) {
        const std::uint64_t z = r.le(at - 20 + 8, 8);
        if (r.le(z, 4) != kZip64EndSig) r.fail("a zip64 locator without its record");
        d = {r.le(z + 32, 8), r.le(z + 48, 8)};
      }
      return d;
    }
    if (at == lowest) r.fail("no end of central directory");
  }
}

// The zip64 extended field holds, in this order, those of size, compressed size and local
// offset whose 4-byte fields are the sentinel.
void read_zip64_field(const Reader& r, std::uint64_t extra, std::uint64_t extra_len, Member& m,
                      bool size32, bool compressed32, bool offset32) {
  for (std::uint64_t at = extra; at + 4 <= extra + extra_len;) {
    const std::uint64_t id = r.le(at, 2), len = r.le(at + 2, 2);
    if (id == 1) {
      std::uint64_t f = at + 4;
      if (size32) m.size = r.le(f, 8), f += 8;
      if (compressed32) m.compressed = r.le(f, 8), f += 8;
      if (offset32) m.local_offset = r.le(f, 8);
      return;
    }
    at += 4 + len;
  }
  r.fail("member '" + m.name + "' lacks its zip64 sizes");
}

std::vector<Member> read_members(const Reader& r) {
  const Directory d = find_directory(r);
  std::vector<Member> members;
  std::uint64_t at = d.offset;
  for (std::uint64_t i = 0; i < d.entries; ++i) {
    if (r.le(at, 4) != kCentralSig) r.fail("a broken central directory");
    Member m;
    m.flags = std::uint16_t(r.le(at + 8, 2));
    m.method = std::uint16_t(r.le(at + 10, 2));
    m.crc = std::uint32_t(r.le(at + 16, 4));
    m.compressed = r.le(at + 20, 4);
    m.size = r.le(at + 24, 4);
    const std::uint64_t name_len = r.le(at + 28, 2), extra_len = r.le(at + 30, 2),
                        comment_len = r.le(at + 32, 2);
    m.local_offset = r.le(at + 42, 4);
    const auto name = r.span(at + 46, name_len);
    m.name.assign(reinterpret_cast<const char*>(name.data()), name.size());
    const bool size32 = m.size == k32, compressed32 = m.compressed == k32,
               offset32 = m.local_offset == k32;
    if (size32 || compressed32 || offset32)
      read_zip64_field(r, at + 46 + name_len, extra_len, m, size32, compressed32, offset32);
    members.push_back(std::move(m));
    at += 46 + name_len + extra_len + comment_len;
  }
  return members;
}

std::vector<std::byte> member_bytes(const Reader& r, const Member& m, const std::string& path) {
  const std::string what = "member '" + m.name + "' of '" + path + "'";
  if (m.flags & 1) r.fail(what + " is encrypted");
  if (r.le(m.local_offset, 4) != kLocalSig) r.fail(what + " has no local header");
  const std::uint64_t data =
      m.local_offset + 30 + r.le(m.local_offset + 26, 2) + r.le(m.local_offset + 28, 2);
  const auto raw = r.span(data, m.compressed);
  std::vector<std::byte> out;
  if (m.method == 0) {
    if (m.compressed != m.size) r.fail(what + " is stored with two sizes");
    out.assign(raw.begin(), raw.end());
  } else if (m.method == 8) {
    out = inflate_raw(raw, m.size, what);
  } else {
    throw InvalidArgument("load_npz", "load_npz: " + what + " uses zip compression method " +
                                          std::to_string(m.method) +
                                          "; nbx reads stored (0) and deflated (8) members.");
  }
  if (crc32(out) != m.crc) r.fail(what + " fails its CRC-32 check");
  return out;
}

// A member as the writer records it.
struct Entry {
  std::string name;
  std::uint32_t crc;
  std::uint64_t size, offset;
};

// The fields a local header and a central directory entry share, from the version needed
// to the sizes (stored: both sizes equal; the 4-byte sentinel where zip64 holds them).
void shared_fields(Writer& w, const Entry& e, bool zip64) {
  w.u16(zip64 ? 45 : 20);  // the version needed: 4.5 for zip64
  w.u16(0);                // flags
  w.u16(0);                // stored
  w.u16(0);                // time
  w.u16(kDosDate);
  w.u32(e.crc);
  w.u32(e.size >= k32 ? k32 : e.size);
  w.u32(e.size >= k32 ? k32 : e.size);
}

}  // namespace

NamedTensors load_npz(const std::string& path, const Device& device) {
  const std::vector<std::byte> file = read_file_bytes("load_npz", path);
  const Reader r(file, path);
  NamedTensors out;
  for (const Member& m : read_members(r)) {
    std::string name = m.name;
    if (name.size() > 4 && name.ends_with(".npy")) name.resize(name.size() - 4);
    out.emplace_back(name, npy_decode(member_bytes(r, m, path),
                                      "member '" + m.name + "' of '" + path + "'", device));
  }
  return out;
}

void save_npz(const std::string& path, const NamedTensors& tensors) {
  std::set<std::string> seen;
  std::vector<Entry> entries;
  Writer w;
  for (const auto& [name, tensor] : tensors) {
    if (name.empty() || !seen.insert(name).second)
      throw InvalidArgument("save_npz", "save_npz: member names must be non-empty and distinct ('" +
                                            name + "' is not).");
    const std::vector<std::byte> npy = npy_encode(tensor);
    Entry e{name + ".npy", crc32(npy), npy.size(), w.out.size()};
    const bool big = e.size >= k32;
    w.u32(kLocalSig);
    shared_fields(w, e, big);
    w.u16(e.name.size());
    w.u16(big ? 20 : 0);
    w.text(e.name);
    if (big) {
      w.u16(1);
      w.u16(16);
      w.u64(e.size);
      w.u64(e.size);
    }
    w.bytes(npy);
    entries.push_back(std::move(e));
  }
  const std::uint64_t directory = w.out.size();
  for (const Entry& e : entries) {
    const bool big = e.size >= k32, far = e.offset >= k32;
    w.u32(kCentralSig);
    w.u16(big || far ? 45 : 20);  // made by
    shared_fields(w, e, big || far);
    w.u16(e.name.size());
    w.u16((big ? 16 : 0) + (far ? 8 : 0) + (big || far ? 4 : 0));
    w.u16(0);  // comment
    w.u16(0);  // disk
    w.u16(0);  // internal attributes
    w.u32(0);  // external attributes
    w.u32(far ? k32 : e.offset);
    w.text(e.name);
    if (big || far) {
      w.u16(1);
      w.u16((big ? 16 : 0) + (far ? 8 : 0));
      if (big) {
        w.u64(e.size);
        w.u64(e.size);
      }
      if (far) w.u64(e.offset);
    }
  }
  const std::uint64_t end = w.out.size(), directory_size = end - directory;
  const bool zip64 = entries.size() >= 0xffff || directory >= k32 || directory_size >= k32;
  if (zip64) {
    w.u32(kZip64EndSig);
    w.u64(44);  // the record's size after this field
    w.u16(45);
    w.u16(45);
    w.u32(0);
    w.u32(0);
    w.u64(entries.size());
    w.u64(entries.size());
    w.u64(directory_size);
    w.u64(directory);
    w.u32(kZip64LocatorSig);
    w.u32(0);
    w.u64(end);
    w.u32(1);
  }
  w.u32(kEndSig);
  w.u16(0);
  w.u16(0);
  w.u16(zip64 ? 0xffff : entries.size());
  w.u16(zip64 ? 0xffff : entries.size());
  w.u32(zip64 ? k32 : directory_size);
  w.u32(zip64 ? k32 : directory);
  w.u16(0);
  write_file_bytes("save_npz", path, w.out);
}

}  // namespace nbx
