// The C++ half of the PyTorch differential test: runs every case of a manifest written by
// torch_diff.py through the public API on one device and writes what came back.
//
//   torch_diff_runner --device vulkan:0 --cases DIR/cases.json --out DIR/vulkan [--start N]
//
// Writes OUT.jsonl (a header line with the device, then one line per case: "ok" with each
// output's dtype, shape and place in OUT.bin, or "refused" / "error" with the error's type and
// message; with the case's milliseconds) and OUT.bin (outputs, row-major, little-endian).
// Each line is flushed before the next case starts, so after a crash the driver restarts at
// the case after the last line (--start) and charges the crash to the case that was running.
//
// Exit status: 0 when every case ran (whatever its result), 77 when the device does not open
// here (meson: SKIP), 2 for a malformed command line or manifest.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <string_view>

#include "tests/torch/torch_diff_ops.hpp"

using nlohmann::json;
namespace td = nbx::torch_diff;

namespace {

struct Options {
  std::string device, cases, out;
  std::size_t start = 0;
};

Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view key = argv[i];
    if (key == "--device")
      o.device = argv[i + 1];
    else if (key == "--cases")
      o.cases = argv[i + 1];
    else if (key == "--out")
      o.out = argv[i + 1];
    else if (key == "--start")
      o.start = std::stoul(argv[i + 1]);
    else
      throw std::invalid_argument("unknown option " + std::string(key));
  }
  if (o.device.empty() || o.cases.empty() || o.out.empty())
    throw std::invalid_argument("usage: --device D --cases FILE --out PREFIX [--start N]");
  return o;
}

std::vector<char> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot read " + path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string directory_of(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

json device_header(const nbx::Device& d) {
  const nbx::Capabilities& c = d.capabilities();
  json h = {{"device", d.str()},      {"display_name", d.display_name()},
            {"fp64", c.fp64.value},   {"fp16", c.fp16.value},
            {"int64", c.int64.value}, {"bf16", std::string(nbx::to_string(c.bf16.value))}};
  // Whether the device may flush subnormals to zero (a Vulkan driver without DenormPreserve):
  // the driver then also accepts PyTorch's answer for the flushed operands.
  for (const char* key : {"float32_subnormals", "float64_subnormals"}) {
    const auto& extra = d.properties().extra;
    if (const auto it = extra.find(key); it != extra.end()) h[key] = it->second;
  }
  return h;
}

// The error's type as the driver's lists name it.
template <class E>
json refusal(const char* type, const E& e) {
  return {{"status", "refused"}, {"error", type}, {"message", e.what()}};
}

// Runs one case: its outputs are appended to `bin` (at `bin_offset`) and described in the
// returned line.
json run_case(const json& c, const std::vector<char>& blob, const nbx::Device& device,
              std::ofstream& bin, std::uint64_t& bin_offset) {
  const std::string op = c.at("op").get<std::string>();
  const td::OpCall* call = nullptr;
  for (const auto* table :
       {&td::op_table(), &td::inplace_op_table(), &td::shape_op_table(), &td::sort_op_table(),
        &td::index_write_op_table(), &td::attention_op_table(), &td::rotary_op_table(),
        &td::loss_op_table(), &td::moe_op_table()})
    if (const auto it = table->find(op); it != table->end()) call = &it->second;
  if (call == nullptr) return {{"status", "unknown-op"}};
  try {
    std::vector<td::Operand> operands;
    for (const auto& spec : c.at("inputs"))
      operands.push_back(td::build_operand(spec, blob, device));
    const td::CaseArgs args(std::move(operands), c.at("attrs"));
    const td::Outputs outs = (*call)(args, device);
    json described = json::array();
    std::vector<char> bytes;
    for (const nbx::Tensor& t : outs) {
      bytes.resize(static_cast<std::size_t>(t.numel()) * t.itemsize());
      t.copy_to_host(bytes.data());  // synchronises: a device fault is raised here
      json shape = json::array();
      for (std::int64_t s : t.shape()) shape.push_back(s);
      described.push_back({{"dtype", std::string(nbx::dtype_name(t.dtype()))},
                           {"shape", shape},
                           {"offset", bin_offset},
                           {"nbytes", bytes.size()}});
      bin.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
      bin_offset += bytes.size();
    }
    return {{"status", "ok"}, {"outputs", described}};
  } catch (const nbx::InvalidArgument& e) {
    return refusal("InvalidArgument", e);
  } catch (const nbx::Unsupported& e) {
    json r = refusal("Unsupported", e);
    r["capability"] = e.capability();
    return r;
  } catch (const nbx::DeviceFault& e) {
    return refusal("DeviceFault", e);
  } catch (const nbx::Error& e) {  // Internal, OutOfMemory, DeviceLost: never an agreement
    return {{"status", "error"}, {"error", "nbx::Error"}, {"message", e.what()}};
  } catch (const std::exception& e) {
    return {{"status", "error"}, {"error", "std::exception"}, {"message", e.what()}};
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  json manifest;
  std::vector<char> blob;
  try {
    opt = parse_options(argc, argv);
    manifest = json::parse(read_file(opt.cases));
    blob = read_file(directory_of(opt.cases) + "/" + manifest.at("blob").get<std::string>());
  } catch (const std::exception& e) {
    std::cerr << "torch_diff_runner: " << e.what() << "\n";
    return 2;
  }
  nbx::Device device;
  try {
    device = nbx::open(opt.device);
  } catch (const nbx::Error& e) {
    std::cout << "torch_diff_runner: " << opt.device << " does not open here: " << e.what() << "\n";
    return 77;
  }
  const bool resume = opt.start > 0;
  const auto mode = resume ? std::ios::app : std::ios::trunc;
  std::ofstream lines(opt.out + ".jsonl", mode);
  std::ofstream bin(opt.out + ".bin", std::ios::binary | mode);
  std::uint64_t bin_offset = resume ? static_cast<std::uint64_t>(bin.tellp()) : 0;
  if (!resume) lines << device_header(device).dump() << "\n" << std::flush;
  const json& cases = manifest.at("cases");
  for (std::size_t i = opt.start; i < cases.size(); ++i) {
    const auto started = std::chrono::steady_clock::now();
    json line = run_case(cases[i], blob, device, bin, bin_offset);
    line["id"] = cases[i].at("id");
    line["ms"] =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count();
    bin.flush();
    lines << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n" << std::flush;
  }
  return 0;
}
