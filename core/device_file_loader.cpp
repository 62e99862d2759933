// Device-file parsing: YAML → checked DeviceFile records, and loading directories of them.
// The schema itself (keys, kinds, overlay rules) is data in device_file_schema.cpp.
#include "core/device_file_loader.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <bit>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/device_file_yaml.hpp"
#include "core/dtype.hpp"
#include "core/errors.hpp"

namespace nbx {
namespace {

using K = CapabilityKind;

constexpr std::string_view kBf16Values[] = {"none", "emulated", "native"};
constexpr std::string_view kMatrixUnits[] = {"none", "mma",     "wgmma",   "mfma",
                                             "wmma", "coopmat", "coopmat2"};

// Reads one file; every failure names the file, line and key.
class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(int line, std::string_view key, const std::string& what) const {
    std::string msg = path_ + ":" + std::to_string(line) + ": ";
    if (!key.empty()) msg += "key '" + std::string(key) + "' ";
    msg += what;
    throw InvalidArgument("device file", msg);
  }
  static int line_of(const YAML::Node& n, int fallback) {
    int l = n.Mark().line;
    return l >= 0 ? l + 1 : fallback;
  }
  // 1073741824 as "2^30", 65536 as "65536", 1e9 as "1e+09".
  static std::string format_bound(double max) {
    const auto i = static_cast<std::int64_t>(max);
    if (i >= (1 << 20) && (i & (i - 1)) == 0)
      return "2^" + std::to_string(std::countr_zero(static_cast<std::uint64_t>(i)));
    std::ostringstream os;
    os << max;
    return os.str();
  }
  static std::string show(const YAML::Node& n) {
    if (n.IsScalar()) return "'" + n.Scalar() + "'";
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a mapping";
    return "nothing";
  }

  // Iterates a mapping, refusing duplicate keys and non-scalar keys.
  template <class F>
  void each(const YAML::Node& map, std::string_view where, int line, F&& f) const {
    if (!map.IsMap()) fail(line_of(map, line), where, "must be a mapping, got " + show(map) + ".");
    std::set<std::string> seen;
    for (auto it = map.begin(); it != map.end(); ++it) {
      int kl = line_of(it->first, line);
      if (!it->first.IsScalar())
        fail(kl, where, "has " + show(it->first) + " as a key; keys are plain words.");
      std::string k = it->first.Scalar();
      std::string full = where.empty() ? k : std::string(where) + "." + k;
      if (!seen.insert(k).second) fail(kl, full, "appears twice.");
      f(k, full, it->second, kl);
    }
  }

  bool to_bool(const YAML::Node& n, std::string_view key, int line) const {
    if (n.IsScalar() && (n.Scalar() == "true" || n.Scalar() == "false"))
      return n.Scalar() == "true";
    fail(line, key, "has the wrong type: expected true or false, got " + show(n) + ".");
  }
  std::int64_t to_int(const YAML::Node& n, std::string_view key, int line) const {
    if (n.IsScalar()) {
      std::string_view s = n.Scalar();
      bool neg = !s.empty() && s[0] == '-';
      if (neg) s.remove_prefix(1);
      int base = 10;
      if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s.remove_prefix(2);
      // A digit must follow the sign and prefix: from_chars takes a sign of its own, which
      // read "--1024" as 1024 and "-0x-40" as 64.
      const auto digit = [base](char c) {
        return (c >= '0' && c <= '9') ||
               (base == 16 && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
      };
      if (s.empty() || !digit(s[0]))
        fail(line, key, "has the wrong type: expected an integer, got " + show(n) + ".");
      std::int64_t v = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
      if (ec == std::errc::result_out_of_range &&
          std::all_of(s.begin(), s.end(), [&](char c) { return digit(c); }))
        fail(line, key, "is " + show(n) + ", beyond any value it may take (2^63 and more).");
      if (ec == std::errc() && p == s.data() + s.size()) return neg ? -v : v;
    }
    fail(line, key, "has the wrong type: expected an integer, got " + show(n) + ".");
  }
  // A 32-bit identifier (vendor_id, driver_id): 0x100010005 was truncated to 0x10005.
  std::uint32_t to_u32(const YAML::Node& n, std::string_view key, int line) const {
    const std::int64_t v = to_int(n, key, line);
    if (v < 0 || v > std::int64_t(0xffffffffu))
      fail(line, key, "must lie in [0, 0xffffffff], got " + show(n) + ".");
    return static_cast<std::uint32_t>(v);
  }
  // Decimal only, finite: strtod also took "inf", "nan", "0x1p3" and leading blanks, and
  // followed the locale's decimal point.
  double to_float(const YAML::Node& n, std::string_view key, int line) const {
    if (n.IsScalar() && !n.Scalar().empty()) {
      const std::string& s = n.Scalar();
      const bool decimal = std::all_of(s.begin(), s.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
               c == 'e' || c == 'E';
      });
      double v = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
      if (decimal && ec == std::errc::result_out_of_range)
        fail(line, key, "is " + show(n) + ", beyond the range of a double.");
      if (decimal && ec == std::errc() && p == s.data() + s.size()) return v;
    }
    fail(line, key, "has the wrong type: expected a number, got " + show(n) + ".");
  }
  std::string to_string(const YAML::Node& n, std::string_view key, int line) const {
    if (n.IsScalar()) return n.Scalar();
    fail(line, key, "has the wrong type: expected a string, got " + show(n) + ".");
  }
  // A string or a list of strings.
  std::vector<std::string> to_strings(const YAML::Node& n, std::string_view key, int line) const {
    if (n.IsScalar()) return {n.Scalar()};
    if (!n.IsSequence())
      fail(line, key, "has the wrong type: expected a list of strings, got " + show(n) + ".");
    std::vector<std::string> out;
    for (const auto& e : n) out.push_back(to_string(e, key, line_of(e, line)));
    return out;
  }
  std::string to_choice(const YAML::Node& n, std::string_view key, int line,
                        std::span<const std::string_view> allowed) const {
    std::string s = n.IsScalar() ? n.Scalar() : "";
    for (auto a : allowed)
      if (s == a) return s;
    std::string list;
    for (auto a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    fail(line, key, "has the value " + show(n) + ", which is not one of: " + list + ".");
  }
  // "9.0": what CUDA reports, major and minor in at most three digits each.
  std::string to_compute_capability(const YAML::Node& n, std::string_view key, int line) const {
    const std::string s = to_string(n, key, line);
    const auto dot = s.find('.');
    const auto digits = [](std::string_view part) {
      return !part.empty() && part.size() <= 3 && std::all_of(part.begin(), part.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      });
    };
    if (dot == std::string::npos || !digits(std::string_view(s).substr(0, dot)) ||
        !digits(std::string_view(s).substr(dot + 1)))
      fail(line, key, "is " + show(n) + "; expected major.minor, such as 9.0.");
    return s;
  }
  std::uint32_t to_driver_id(const YAML::Node& n, std::string_view key, int line) const {
    if (n.IsScalar()) {
      if (auto id = detail::vulkan_driver_id_from_name(n.Scalar())) return id;
      if (!n.Scalar().empty() && std::isdigit(static_cast<unsigned char>(n.Scalar()[0])))
        return to_u32(n, key, line);
    }
    fail(line, key,
         "has the value " + show(n) +
             ", which is neither a VkDriverId number nor a name such as MESA_LLVMPIPE.");
  }

  std::string range_of(const CapabilityKeySpec& spec) const {
    return "(0, " + format_bound(spec.max) + "]";
  }
  std::int64_t in_range(const CapabilityKeySpec& spec, std::int64_t v, std::string_view key,
                        int line) const {
    if (v <= 0 || static_cast<double>(v) > spec.max)
      fail(line, key,
           "must be an integer in " + range_of(spec) + ", got " + std::to_string(v) + ".");
    return v;
  }

  DeviceFileValue value(const CapabilityKeySpec& spec, const YAML::Node& n, std::string_view key,
                        int line) const {
    switch (spec.kind) {
      case K::kBool:
        return to_bool(n, key, line);
      case K::kInt:
        return in_range(spec, to_int(n, key, line), key, line);
      case K::kFloat: {
        const double v = to_float(n, key, line);
        if (!(v > 0 && v <= spec.max))
          fail(line, key, "must be a number in " + range_of(spec) + ", got " + show(n) + ".");
        return v;
      }
      case K::kBf16:
        return to_choice(n, key, line, kBf16Values);
      case K::kMatrixUnit:
        return to_choice(n, key, line, kMatrixUnits);
      case K::kIntList: {
        if (!n.IsSequence() || n.size() == 0)
          fail(line, key,
               "has the wrong type: expected a non-empty list of integers, got " + show(n) + ".");
        std::vector<std::int64_t> v;
        for (const auto& e : n) {
          const int el = line_of(e, line);
          v.push_back(in_range(spec, to_int(e, key, el), key, el));
          if ((v.back() & (v.back() - 1)) != 0)
            fail(el, key, "must list powers of two, got " + std::to_string(v.back()) + ".");
          if (v.size() > 1 && v.back() <= v[v.size() - 2])
            fail(el, key, "must list sizes in increasing order.");
        }
        return v;
      }
      case K::kDTypeList: {
        if (!n.IsSequence())
          fail(line, key,
               "has the wrong type: expected a list of dtype names, got " + show(n) + ".");
        std::vector<std::string> v;
        for (const auto& e : n) {
          std::string s = to_string(e, key, line_of(e, line));
          try {
            v.emplace_back(dtype_name(parse_dtype(s)));
          } catch (const InvalidArgument&) {
            fail(line_of(e, line), key,
                 "lists '" + s + "', which is not a dtype name (float16, bfloat16, int8, …).");
          }
        }
        return v;
      }
    }
    fail(line, key, "has a kind this build does not know.");
  }

  // Flattens a capabilities mapping into dotted keys, checking each against the schema.
  // `yaml_prefix` is what messages show ("capabilities", "backends.vulkan").
  void capabilities(const YAML::Node& map, const std::string& prefix,
                    const std::string& yaml_prefix, int line, DeviceFileEntries& out) const {
    each(map, yaml_prefix, line,
         [&](const std::string& k, const std::string& full, const YAML::Node& v, int kl) {
           std::string key = prefix.empty() ? k : prefix + "." + k;
           if (const CapabilityKeySpec* spec = find_capability_key(key)) {
             out[key] = DeviceFileEntry{value(*spec, v, full, kl), kl};
             return;
           }
           bool is_section = std::any_of(
               capability_key_specs().begin(), capability_key_specs().end(),
               [&](const auto& s) { return s.key.substr(0, key.size() + 1) == key + "."; });
           if (!is_section)
             fail(kl, full,
                  "is not a capability key this schema knows (device_files/schema.md lists them).");
           capabilities(v, key, full, kl, out);
         });
  }

  // Relations between keys, on the entries as they will be in force (each value's own range
  // was checked where it was read).
  void validate(const DeviceFileEntries& e, const std::string& yaml_prefix) const {
    auto at = [&](const std::string& k) { return e.find(k); };
    auto s = at("subgroup.size"), ss = at("subgroup.sizes");
    if (s != e.end() && ss != e.end()) {
      const auto& sizes = std::get<std::vector<std::int64_t>>(ss->second.value);
      if (std::find(sizes.begin(), sizes.end(), std::get<std::int64_t>(s->second.value)) ==
          sizes.end())
        fail(s->second.line, yaml_prefix + ".subgroup.size", "must be one of subgroup.sizes.");
    }
    auto pb = at("shared_memory.per_block"), po = at("shared_memory.per_block_optin");
    if (pb != e.end() && po != e.end() &&
        std::get<std::int64_t>(pb->second.value) > std::get<std::int64_t>(po->second.value))
      fail(po->second.line, yaml_prefix + ".shared_memory.per_block_optin",
           "must be at least shared_memory.per_block.");
  }

  DeviceFileMatch match(const YAML::Node& map, int line) const {
    DeviceFileMatch m;
    each(map, "match", line,
         [&](const std::string& k, const std::string& full, const YAML::Node& v, int kl) {
           if (k == "cuda")
             m.cuda = to_strings(v, full, kl);
           else if (k == "hip")
             m.hip = to_strings(v, full, kl);
           else if (k == "host")
             m.host = to_bool(v, full, kl);
           else if (k == "vulkan") {
             if (!v.IsSequence())
               fail(kl, full, "has the wrong type: expected a list of rules, got " + show(v) + ".");
             for (const auto& rule : v) {
               VulkanMatchRule r;
               r.line = line_of(rule, kl);
               each(
                   rule, full, r.line,
                   [&](const std::string& rk, const std::string& rf, const YAML::Node& rv, int rl) {
                     if (rk == "vendor_id")
                       r.vendor_id = to_u32(rv, rf, rl);
                     else if (rk == "device_name")
                       r.device_names = to_strings(rv, rf, rl);
                     else if (rk == "driver_id") {
                       if (rv.IsSequence())
                         for (const auto& d : rv)
                           r.driver_ids.push_back(to_driver_id(d, rf, line_of(d, rl)));
                       else
                         r.driver_ids.push_back(to_driver_id(rv, rf, rl));
                     } else
                       fail(rl, rf,
                            "is not a Vulkan match key (vendor_id, driver_id, device_name).");
                   });
               m.vulkan.push_back(std::move(r));
             }
           } else
             fail(kl, full, "is not a match key (cuda, hip, vulkan, host).");
         });
    if (m.cuda.empty() && m.hip.empty() && m.vulkan.empty() && !m.host)
      fail(line, "match", "names no device: give at least one of cuda, hip, vulkan, host.");
    return m;
  }

  std::vector<KnownDevice> known(const YAML::Node& list, int line) const {
    if (!list.IsSequence())
      fail(line, "known_devices", "has the wrong type: expected a list, got " + show(list) + ".");
    std::vector<KnownDevice> out;
    for (const auto& item : list) {
      KnownDevice d;
      d.line = line_of(item, line);
      each(item, "known_devices", d.line,
           [&](const std::string& k, const std::string& full, const YAML::Node& v, int kl) {
             if (k == "backend")
               d.backend = to_choice(v, full, kl, kBackends);
             else if (k == "name")
               d.name = to_string(v, full, kl);
             else if (k == "compute_capability")
               d.compute_capability = to_compute_capability(v, full, kl);
             else if (k == "gcn_arch")
               d.gcn_arch = to_string(v, full, kl);
             else if (k == "vendor_id")
               d.vendor_id = to_u32(v, full, kl);
             else if (k == "driver_id")
               d.driver_id = to_driver_id(v, full, kl);
             else
               fail(kl, full,
                    "is not a known_devices key (backend, name, compute_capability, gcn_arch, "
                    "vendor_id, driver_id).");
           });
      if (d.backend.empty() || d.name.empty())
        fail(d.line, "known_devices.backend", "and known_devices.name are required.");
      if (d.backend == "cuda" && d.compute_capability.empty())
        fail(d.line, "known_devices.compute_capability", "is required for a cuda device.");
      if (d.backend == "hip" && d.gcn_arch.empty())
        fail(d.line, "known_devices.gcn_arch", "is required for a hip device.");
      if (d.backend == "vulkan" && d.vendor_id == 0)
        fail(d.line, "known_devices.vendor_id", "is required for a vulkan device.");
      out.push_back(std::move(d));
    }
    return out;
  }

  static constexpr std::string_view kBackends[] = {"host", "cuda", "hip", "vulkan"};

  YAML::Node load(std::string_view text) const { return load_device_file_yaml(text, path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void check_required(const Reader& r, const DeviceFileEntries& e, int line) {
  for (const auto& spec : capability_key_specs())
    if (spec.required && !e.count(std::string(spec.key)))
      r.fail(line, "capabilities." + std::string(spec.key), "is required but missing.");
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw InvalidArgument("device file",
                          path + ":0: cannot be read (no such file, or no permission).");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

const DeviceFile* DeviceFileSet::find(std::string_view vendor_arch) const {
  for (const auto& f : files)
    if (f.name() == vendor_arch) return &f;
  return nullptr;
}

DeviceFile parse_device_file(std::string_view text, const std::string& display_path) {
  Reader r(display_path);
  YAML::Node root = r.load(text);
  DeviceFile f;
  f.path = display_path;
  int caps_line = 1;
  bool have_schema = false, have_match = false, have_caps = false;
  r.each(
      root, "", 1, [&](const std::string& k, const std::string& full, const YAML::Node& v, int kl) {
        if (k == "schema") {
          if (r.to_int(v, full, kl) != 1)
            r.fail(kl, full, "must be 1 (the only schema version this build reads).");
          have_schema = true;
        } else if (k == "vendor")
          f.vendor = r.to_string(v, full, kl);
        else if (k == "arch")
          f.arch = r.to_string(v, full, kl);
        else if (k == "description")
          f.description = r.to_string(v, full, kl);
        else if (k == "generic")
          f.generic = r.to_bool(v, full, kl);
        else if (k == "match")
          f.match = r.match(v, kl), have_match = true;
        else if (k == "known_devices")
          f.known_devices = r.known(v, kl);
        else if (k == "capabilities") {
          r.capabilities(v, "", "capabilities", kl, f.capabilities);
          caps_line = kl, have_caps = true;
        } else if (k == "backends") {
          r.each(v, "backends", kl,
                 [&](const std::string& b, const std::string& bf, const YAML::Node& bv, int bl) {
                   if (std::find(std::begin(Reader::kBackends), std::end(Reader::kBackends), b) ==
                       std::end(Reader::kBackends))
                     r.fail(bl, bf, "is not a backend (host, cuda, hip, vulkan).");
                   r.capabilities(bv, "", bf, bl, f.backends[b]);
                 });
        } else
          r.fail(kl, full,
                 "is not a top-level key of a device file (schema, vendor, arch, description, "
                 "generic, match, known_devices, capabilities, backends).");
      });
  for (auto [present, key] : {std::pair{have_schema, "schema"},
                              {!f.vendor.empty(), "vendor"},
                              {!f.arch.empty(), "arch"},
                              {!f.description.empty(), "description"},
                              {have_match, "match"},
                              {have_caps, "capabilities"}})
    if (!present) r.fail(1, key, "is required but missing.");
  if (!f.generic && f.known_devices.empty())
    r.fail(1, "known_devices",
           "is required for a non-generic file: name at least one device it is written for.");
  check_required(r, f.capabilities, caps_line);
  r.validate(f.capabilities, "capabilities");
  for (const auto& [b, entries] : f.backends) {
    DeviceFileEntries merged = f.capabilities;
    for (const auto& [k, e] : entries) merged[k] = e;
    r.validate(merged, "backends." + b);
  }
  return f;
}

DeviceFile load_device_file(const std::string& path) {
  return parse_device_file(read_text(path), path);
}

OverlayFile parse_overlay(std::string_view text, const std::string& display_path) {
  Reader r(display_path);
  YAML::Node root = r.load(text);
  OverlayFile o;
  o.path = display_path;
  bool have_caps = false;
  r.each(root, "", 1,
         [&](const std::string& k, const std::string& full, const YAML::Node& v, int kl) {
           if (k == "overlay") {
             if (r.to_int(v, full, kl) != 1)
               r.fail(kl, full, "must be 1 (the only overlay version this build reads).");
           } else if (k == "description")
             o.description = r.to_string(v, full, kl);
           else if (k == "capabilities")
             r.capabilities(v, "", "capabilities", kl, o.capabilities), have_caps = true;
           else
             r.fail(kl, full,
                    "is not a top-level key of an overlay (overlay, description, capabilities).");
         });
  if (!have_caps) r.fail(1, "capabilities", "is required but missing.");
  return o;
}

OverlayFile load_overlay(const std::string& path) {
  return parse_overlay(read_text(path), path);
}

namespace {

// The layout rules a directory adds to the per-file ones.
void check_layout(const DeviceFile& f, const std::string& vendor_dir, const std::string& stem) {
  if (f.vendor != vendor_dir || f.arch != stem)
    throw InvalidArgument("device file", f.path + ":1: key 'vendor' / 'arch' (" + f.vendor + "/" +
                                             f.arch + ") must match the file's place " +
                                             vendor_dir + "/" + stem + ".yml.");
}

std::vector<std::filesystem::path> yml_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InvalidArgument("device file", dir + ":0: is not a directory of device files.");
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file() && e.path().extension() == ".yml") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

void check_generics(const DeviceFileSet& set) {
  std::map<std::string, std::string> seen;
  for (const auto& f : set.files) {
    if (!f.generic) continue;
    auto [it, fresh] = seen.emplace(f.vendor, f.path);
    if (!fresh)
      throw InvalidArgument("device file", f.path + ":1: key 'generic' is set, but " + it->second +
                                               " is already the generic file of vendor '" +
                                               f.vendor + "'.");
  }
}

}  // namespace

DeviceFileSet load_device_file_dir(const std::string& dir, const std::string& display_prefix) {
  namespace fs = std::filesystem;
  DeviceFileSet set;
  set.origin = dir;
  for (const auto& p : yml_files(dir)) {
    fs::path rel = fs::relative(p, dir);
    std::string display = display_prefix + "/" + rel.generic_string();
    if (std::distance(rel.begin(), rel.end()) != 2)
      throw InvalidArgument("device file",
                            display + ":1: device files live at <vendor>/<arch>.yml.");
    DeviceFile f = parse_device_file(read_text(p.string()), display);
    check_layout(f, rel.begin()->string(), p.stem().string());
    set.files.push_back(std::move(f));
  }
  if (set.files.empty())
    throw InvalidArgument("device file", dir + ":0: holds no <vendor>/<arch>.yml files.");
  check_generics(set);
  return set;
}

DeviceFileCheckReport check_device_file_dir(const std::string& dir) {
  namespace fs = std::filesystem;
  DeviceFileCheckReport report;
  DeviceFileSet set;
  try {
    for (const auto& p : yml_files(dir)) {
      fs::path rel = fs::relative(p, dir);
      try {
        DeviceFile f = load_device_file(p.string());  // content errors first: more useful
        if (std::distance(rel.begin(), rel.end()) != 2)
          throw InvalidArgument("device file",
                                p.string() + ":1: device files live at <vendor>/<arch>.yml.");
        check_layout(f, rel.begin()->string(), p.stem().string());
        report.checked.push_back(f.path);
        set.files.push_back(std::move(f));
      } catch (const InvalidArgument& e) {
        report.errors.push_back(e.what());
      }
    }
    check_generics(set);
    if (report.checked.empty() && report.errors.empty())
      report.errors.push_back(dir + ":0: holds no <vendor>/<arch>.yml files.");
  } catch (const InvalidArgument& e) {
    report.errors.push_back(e.what());
  }
  return report;
}

const DeviceFileSet& embedded_device_files() {
  static const DeviceFileSet set = [] {
    DeviceFileSet s;
    s.origin = "embedded";
    for (std::size_t i = 0; i < detail::kEmbeddedDeviceFileCount; ++i) {
      const auto& e = detail::kEmbeddedDeviceFiles[i];
      std::string rel = e.path;
      DeviceFile f = parse_device_file(e.text, "device_files/" + rel);
      auto slash = rel.find('/');
      check_layout(f, rel.substr(0, slash), rel.substr(slash + 1, rel.size() - slash - 5));
      s.files.push_back(std::move(f));
    }
    std::sort(s.files.begin(), s.files.end(),
              [](const auto& a, const auto& b) { return a.path < b.path; });
    check_generics(s);
    return s;
  }();
  return set;
}

const DeviceFileSet& device_files() {
  static const DeviceFileSet& set = []() -> const DeviceFileSet& {
    const char* dir = std::getenv("NBX_DEVICE_FILES");
    if (dir == nullptr || *dir == '\0') return embedded_device_files();
    static const DeviceFileSet from_env = load_device_file_dir(dir, dir);
    return from_env;
  }();
  return set;
}

}  // namespace nbx
