// .npy and .npz (core/npy.hpp) and the deflate decoder under them (core/inflate.hpp). NumPy's
// own files are read and written by python/tests/test_data.py; here: round trips of every
// dtype, hand-made headers (Fortran order, big-endian), refusals, and deflate streams zlib
// wrote (stored, fixed and dynamic Huffman blocks).
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/file_bytes.hpp"
#include "core/inflate.hpp"
#include "core/npy.hpp"
#include "core/ops/elementwise.hpp"

using namespace nbx;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("nbx_test_npy_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

std::vector<std::byte> bytes_of(std::initializer_list<int> values) {
  std::vector<std::byte> out;
  for (int v : values) out.push_back(std::byte(v));
  return out;
}

std::vector<std::byte> npy_file(const std::string& dict, const std::vector<std::byte>& data) {
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::vector<std::byte> out = bytes_of({0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0});
  out.push_back(std::byte(header.size() & 0xff));
  out.push_back(std::byte(header.size() >> 8));
  for (char c : header) out.push_back(std::byte(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

}  // namespace

TEST_CASE("save_npy / load_npy round-trip every dtype NumPy has, views written in C order") {
  const std::string path = temp_path("all.npy");
  const Tensor values = ops::sub(Tensor::arange(0, 24, 1, int64), 7);
  for (DType t : kAllDTypes) {
    if (t == DType::kBFloat16) continue;
    CAPTURE(dtype_name(t));
    const Tensor x = values.to(t).reshape({2, 3, 4}).transpose(0, 2);  // not contiguous
    save_npy(path, x);
    const Tensor back = load_npy(path);
    CHECK(back.dtype() == t);
    CHECK(back.shape() == Shape{4, 3, 2});
    CHECK(back.is_contiguous());
    CHECK(ops::allclose(back.to(float64), x.to(float64), 0, 0));
  }
  save_npy(path, Tensor::full({}, 2.5, float64));
  CHECK(load_npy(path).dim() == 0);
  CHECK(load_npy(path).item().to_double() == 2.5);
  save_npy(path, Tensor::empty({0, 3}, int32));
  CHECK(load_npy(path).shape() == Shape{0, 3});
  CHECK_THROWS_AS(save_npy(path, Tensor::ones({2}, bfloat16)), InvalidArgument);
  std::remove(path.c_str());
}

TEST_CASE("npy_encode writes NumPy's header: version 1.0, the dict, the data 64-byte aligned") {
  const std::vector<std::byte> b = npy_encode(Tensor::ones({2, 3}, float32));
  const std::string text(reinterpret_cast<const char*>(b.data()), 128);
  CHECK(text.substr(1, 5) == "NUMPY");
  CHECK(b[6] == std::byte(1));
  CHECK(b.size() == 128 + 24);
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  CHECK(text.substr(10, dict.size()) == dict);
  CHECK(text.find_first_not_of(' ', 10 + dict.size()) == 127);  // spaces, then the newline
  CHECK(text[127] == '\n');
  const std::vector<std::byte> u = npy_encode(Tensor::ones({5}, uint8));
  const std::string u8_dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (5,), }";
  CHECK(std::string(reinterpret_cast<const char*>(u.data()) + 10, u8_dict.size()) == u8_dict);
  CHECK(u.size() == 128 + 5);
}

TEST_CASE("load_npy reads Fortran order and big-endian data") {
  // int32 [2, 3] = [[1, 2, 3], [4, 5, 6]], column-major, big-endian.
  std::vector<std::byte> data;
  for (int v : {1, 4, 2, 5, 3, 6}) {
    const auto more = bytes_of({0, 0, 0, v});
    data.insert(data.end(), more.begin(), more.end());
  }
  const std::vector<std::byte> file =
      npy_file("{'descr': '>i4', 'fortran_order': True, 'shape': (2, 3), }", data);
  const Tensor t = npy_decode(file, "test");
  CHECK(t.shape() == Shape{2, 3});
  CHECK(t.to_host<std::int32_t>() == std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("load_npy refuses what it cannot read, by name") {
  const auto refused = [](const std::vector<std::byte>& file, const std::string& words) {
    try {
      (void)npy_decode(file, "'x.npy'");
      FAIL("decoded");
    } catch (const InvalidArgument& e) {
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  refused(bytes_of({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}), "magic");
  refused(npy_file("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", bytes_of({})),
          "'<c8'");
  refused(npy_file("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", bytes_of({})),
          "'<u2'");
  refused(
      npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", bytes_of({0, 0, 0, 0})),
      "shorter than 3 elements");
  refused(npy_file("{'descr': '<f4', 'shape': (3,), }", bytes_of({})), "'fortran_order'");
  CHECK_THROWS_AS(load_npy(temp_path("absent.npy")), InvalidArgument);
}

TEST_CASE("save_npz / load_npz: members in order, names without .npy, values exact") {
  const std::string path = temp_path("pair.npz");
  const Tensor a = ops::mul(Tensor::arange(0, 6, 1, float32).reshape({2, 3}), 0.25);
  const Tensor b = Tensor::from_host(std::vector<bool>{true, false}, {2});
  save_npz(path, {{"weights", a}, {"mask", b}});
  const NamedTensors back = load_npz(path);
  REQUIRE(back.size() == 2);
  CHECK(back[0].first == "weights");
  CHECK(back[1].first == "mask");
  CHECK(back[0].second.to_host<float>() == a.to_host<float>());
  CHECK(back[1].second.to_host<bool>() == std::vector<bool>{true, false});
  CHECK_THROWS_AS(save_npz(path, {{"x", a}, {"x", b}}), InvalidArgument);
  CHECK_THROWS_AS(save_npz(path, {{"", a}}), InvalidArgument);
  // A flipped data byte (the first member's data: 30 + 11 header bytes, then 128 of .npy
  // header) fails the member's CRC.
  std::vector<std::byte> file = read_file_bytes("test", path);
  file[30 + 11 + 128 + 5] ^= std::byte(1);
  write_file_bytes("test", path, file);
  try {
    (void)load_npz(path);
    FAIL("a corrupt member was read");
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).find("CRC-32") != std::string::npos);
  }
  std::remove(path.c_str());
}

TEST_CASE("inflate_raw decodes zlib's stored, fixed and dynamic blocks; crc32 is zip's") {
  const auto text = [](const std::vector<std::byte>& b) {
    return std::string(reinterpret_cast<const char*>(b.data()), b.size());
  };
  CHECK(text(inflate_raw(bytes_of({0x1, 0x3, 0x0, 0xfc, 0xff, 0x61, 0x62, 0x63}), 3, "s")) ==
        "abc");
  CHECK(text(inflate_raw(bytes_of({0xcb, 0x4b, 0xaa, 0x50, 0xc8, 0x43, 0x60, 0x0}), 15, "f")) ==
        "nbx nbx nbx nbx");
  const std::vector<std::byte> dynamic =
      bytes_of({0xe5, 0xcc, 0x1,  0x11, 0xc0, 0x20, 0x8,  0x0,  0xc0, 0x6c, 0x6c, 0x22, 0x70,
                0xa,  0xe2, 0xa1, 0xd0, 0xbf, 0xc9, 0x82, 0xec, 0x3,  0x3c, 0x70, 0x8f, 0xf4,
                0x7,  0x2c, 0xac, 0x60, 0x9d, 0xdd, 0xf0, 0x36, 0xd0, 0xc5, 0x6e, 0x2f, 0x81,
                0x48, 0xbe, 0xc9, 0x5c, 0x8,  0x53, 0x71, 0xca, 0x29, 0xaf, 0x1c, 0x26, 0xdb,
                0x69, 0x74, 0x77, 0x52, 0x89, 0xab, 0xb1, 0x91, 0xe0, 0x1f, 0xc9, 0x7});
  std::string expected;  // what Python's zlib compressed
  for (int i = 0; i < 300; ++i) expected += char((i * i * 7 + i / 3) % 23 + 65);
  CHECK(text(inflate_raw(dynamic, 300, "d")) == expected);
  CHECK_THROWS_AS(inflate_raw(dynamic, 299, "d"), InvalidArgument);  // longer than promised
  CHECK_THROWS_AS(inflate_raw(std::span(dynamic).first(30), 300, "d"), InvalidArgument);
  CHECK_THROWS_AS(inflate_raw(bytes_of({0x07}), 1, "r"), InvalidArgument);  // reserved type 3
  const std::string check = "123456789";
  CHECK(crc32(std::as_bytes(std::span(check.data(), check.size()))) == 0xCBF43926u);
}
