// A DEFLATE decoder after Mark Adler's puff.c (zlib's contrib/puff, the RFC's reference in
// C): canonical Huffman codes decoded a bit at a time. Slower than zlib's tables (~100 MB/s),
// which is plenty for reading arrays once.
#include "core/inflate.hpp"

#include <array>

#include "core/errors.hpp"

namespace nbx {
namespace {

constexpr int kMaxBits = 15;
constexpr int kMaxLengthCodes = 286, kMaxDistCodes = 30, kFixedLengthCodes = 288;

class Inflater {
 public:
  Inflater(std::span<const std::byte> in, std::size_t size, const std::string& what)
      : in_(in), size_(size), what_(what) {
    out_.reserve(size);
  }

  std::vector<std::byte> run() {
    for (bool last = false; !last;) {
      last = bits(1) != 0;
      switch (bits(2)) {
        case 0:
          stored();
          break;
        case 1:
          fixed();
          break;
        case 2:
          dynamic();
          break;
        default:
          fail("a block of reserved type 3");
      }
    }
    if (out_.size() != size_)
      fail("it holds " + std::to_string(out_.size()) + " bytes, not " + std::to_string(size_));
    return std::move(out_);
  }

 private:
  struct Huffman {
    std::array<short, kMaxBits + 1> count{};        // codes of each length
    std::array<short, kFixedLengthCodes> symbol{};  // symbols by code
  };

  [[noreturn]] void fail(const std::string& why) const {
    throw InvalidArgument("load_npz",
                          "load_npz: " + what_ + " is not a valid deflate stream (" + why + ").");
  }

  int bits(int need) {
    std::uint64_t v = bitbuf_;
    while (bitcnt_ < need) {
      if (pos_ >= in_.size()) fail("it ends early");
      v |= std::uint64_t(std::to_integer<unsigned>(in_[pos_++])) << bitcnt_;
      bitcnt_ += 8;
    }
    bitbuf_ = v >> need;
    bitcnt_ -= need;
    return int(v & ((std::uint64_t(1) << need) - 1));
  }

  void put(std::byte b) {
    if (out_.size() == size_) fail("it holds more than " + std::to_string(size_) + " bytes");
    out_.push_back(b);
  }

  void stored() {
    bitbuf_ = 0;  // to a byte boundary
    bitcnt_ = 0;
    if (pos_ + 4 > in_.size()) fail("it ends early");
    const unsigned len =
        std::to_integer<unsigned>(in_[pos_]) | (std::to_integer<unsigned>(in_[pos_ + 1]) << 8);
    const unsigned nlen =
        std::to_integer<unsigned>(in_[pos_ + 2]) | (std::to_integer<unsigned>(in_[pos_ + 3]) << 8);
    if (len != (~nlen & 0xffff)) fail("a stored block's length does not match its complement");
    pos_ += 4;
    if (pos_ + len > in_.size()) fail("it ends early");
    for (unsigned i = 0; i < len; ++i) put(in_[pos_++]);
  }

  int decode(const Huffman& h) {
    int code = 0, first = 0, index = 0;
    for (int len = 1; len <= kMaxBits; ++len) {
      code |= bits(1);
      const int count = h.count[len];
      if (code - count < first) return h.symbol[index + (code - first)];
      index += count;
      first = (first + count) << 1;
      code <<= 1;
    }
    fail("a code that is not in its table");
  }

  // Builds the canonical code of `lengths`; returns how many codes it lacks to be complete
  // (0 complete, > 0 incomplete) or < 0 when over-subscribed.
  static int construct(Huffman& h, const short* lengths, int n) {
    h.count.fill(0);
    for (int s = 0; s < n; ++s) ++h.count[lengths[s]];
    if (h.count[0] == n) return 0;
    int left = 1;
    for (int len = 1; len <= kMaxBits; ++len) {
      left = (left << 1) - h.count[len];
      if (left < 0) return left;
    }
    std::array<short, kMaxBits + 1> offs{};
    for (int len = 1; len < kMaxBits; ++len) offs[len + 1] = short(offs[len] + h.count[len]);
    for (int s = 0; s < n; ++s)
      if (lengths[s] != 0) h.symbol[offs[lengths[s]]++] = short(s);
    return left;
  }

  void codes(const Huffman& lengths, const Huffman& distances) {
    static constexpr short kLengthBase[29] = {3,  4,  5,  6,   7,   8,   9,   10,  11, 13,
                                              15, 17, 19, 23,  27,  31,  35,  43,  51, 59,
                                              67, 83, 99, 115, 131, 163, 195, 227, 258};
    static constexpr short kLengthExtra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                               2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
    static constexpr int kDistBase[30] = {
        1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,   49,   65,    97,    129,
        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
    static constexpr short kDistExtra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                             6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
    for (;;) {
      int symbol = decode(lengths);
      if (symbol < 256) {
        put(std::byte(symbol));
        continue;
      }
      if (symbol == 256) return;
      symbol -= 257;
      if (symbol >= 29) fail("a length code past 285");
      const int len = kLengthBase[symbol] + bits(kLengthExtra[symbol]);
      symbol = decode(distances);
      if (symbol >= 30) fail("a distance code past 29");
      const std::size_t dist = std::size_t(kDistBase[symbol] + bits(kDistExtra[symbol]));
      if (dist > out_.size()) fail("a distance back past the start");
      for (int i = 0; i < len; ++i) put(out_[out_.size() - dist]);
    }
  }

  void fixed() {
    static const auto tables = [] {
      std::pair<Huffman, Huffman> t;
      short lengths[kFixedLengthCodes];
      int s = 0;
      for (; s < 144; ++s) lengths[s] = 8;
      for (; s < 256; ++s) lengths[s] = 9;
      for (; s < 280; ++s) lengths[s] = 7;
      for (; s < kFixedLengthCodes; ++s) lengths[s] = 8;
      construct(t.first, lengths, kFixedLengthCodes);
      for (s = 0; s < kMaxDistCodes; ++s) lengths[s] = 5;
      construct(t.second, lengths, kMaxDistCodes);
      return t;
    }();
    codes(tables.first, tables.second);
  }

  void dynamic() {
    static constexpr short kOrder[19] = {16, 17, 18, 0, 8,  7, 9,  6, 10, 5,
                                         11, 4,  12, 3, 13, 2, 14, 1, 15};
    const int nlen = bits(5) + 257, ndist = bits(5) + 1, ncode = bits(4) + 4;
    if (nlen > kMaxLengthCodes || ndist > kMaxDistCodes) fail("too many length or distance codes");
    short lengths[kMaxLengthCodes + kMaxDistCodes] = {};
    for (int i = 0; i < ncode; ++i) lengths[kOrder[i]] = short(bits(3));
    Huffman lencode, distcode;
    if (construct(lencode, lengths, 19) != 0) fail("an incomplete code-length code");
    for (int i = 0; i < nlen + ndist;) {
      int symbol = decode(lencode);
      if (symbol < 16) {
        lengths[i++] = short(symbol);
        continue;
      }
      short repeat = 0;
      int times = 0;
      if (symbol == 16) {
        if (i == 0) fail("a repeat with no previous length");
        repeat = lengths[i - 1];
        times = 3 + bits(2);
      } else {
        times = symbol == 17 ? 3 + bits(3) : 11 + bits(7);
      }
      if (i + times > nlen + ndist) fail("lengths repeated past the table");
      while (times--) lengths[i++] = repeat;
    }
    if (lengths[256] == 0) fail("no end-of-block code");
    // An incomplete code is allowed only for a single length code (RFC 1951 §3.2.7).
    int err = construct(lencode, lengths, nlen);
    if (err < 0 || (err > 0 && nlen != lencode.count[0] + lencode.count[1]))
      fail("an over-subscribed or incomplete literal/length code");
    err = construct(distcode, lengths + nlen, ndist);
    if (err < 0 || (err > 0 && ndist != distcode.count[0] + distcode.count[1]))
      fail("an over-subscribed or incomplete distance code");
    codes(lencode, distcode);
  }

  std::span<const std::byte> in_;
  std::size_t pos_ = 0;
  std::uint64_t bitbuf_ = 0;
  int bitcnt_ = 0;
  std::size_t size_;
  std::vector<std::byte> out_;
  const std::string& what_;
};

}  // namespace

std::vector<std::byte> inflate_raw(std::span<const std::byte> in, std::size_t size,
                                   const std::string& what) {
  return Inflater(in, size, what).run();
}

std::uint32_t crc32(std::span<const std::byte> data) {
  static const auto table = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t n = 0; n < 256; ++n) {
      std::uint32_t c = n;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[n] = c;
    }
    return t;
  }();
  std::uint32_t c = 0xffffffffu;
  for (std::byte b : data) c = table[(c ^ std::to_integer<std::uint32_t>(b)) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

}  // namespace nbx
