// `nbx devices [-v] [--json]`: every compiled-in backend's devices, or why a backend has none.
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/cli_main_commands.hpp"
#include "core/errors.hpp"

namespace nbx::cli {
namespace {

std::string gib(std::uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / (1ull << 30));
  return buf;
}

// `devices --json` (schema "nbx.devices/1", README's "JSON output"): every device with its
// properties and extra facts, and every backend that has none, with the reason.
void print_devices_json() {
  using Json = nlohmann::ordered_json;
  Json out = {
      {"schema", "nbx.devices/1"}, {"devices", Json::array()}, {"unavailable", Json::array()}};
  for_each_device(
      [&](const DeviceId& id, const DeviceProperties& p) {
        Json extra = Json::object();
        for (const auto& [k, v] : p.extra) extra[k] = v;
        out["devices"].push_back({{"id", id.str()},
                                  {"backend", id.backend},
                                  {"name", p.name},
                                  {"arch", p.arch},
                                  {"total_memory_bytes", p.total_memory},
                                  {"compute_units", p.compute_units},
                                  {"driver", p.driver},
                                  {"extra", std::move(extra)}});
      },
      [&](const std::string& backend, const char*, const std::string& reason) {
        out["unavailable"].push_back({{"backend", backend}, {"reason", reason}});
      });
  std::cout << out.dump(2, ' ', false, Json::error_handler_t::replace) << "\n";
}

void print_devices(bool verbose) {
  for_each_device(
      [&](const DeviceId& id, const DeviceProperties& p) {
        std::cout << id.str() << ": " << p.name << " [" << p.arch << "]";
        if (p.total_memory) std::cout << ", " << gib(p.total_memory);
        if (p.compute_units) std::cout << ", " << p.compute_units << " compute units";
        if (!p.driver.empty()) std::cout << ", " << p.driver;
        std::cout << "\n";
        if (verbose)
          for (const auto& [k, v] : p.extra) std::cout << "    " << k << ": " << v << "\n";
      },
      [](const std::string& backend, const char* what, const std::string& reason) {
        std::cout << backend << ": " << what << " (" << reason << ")\n";
      });
}

}  // namespace

void register_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "devices", "List every device of every compiled-in backend, or why a backend has none.");
  static bool verbose = false, json = false;
  cmd->add_flag("-v,--verbose", verbose,
                "Also print each device's extra runtime facts (extensions, limits).");
  cmd->add_flag("--json", json, "Machine-readable output (schema nbx.devices/1).");
  cmd->callback([] { json ? print_devices_json() : print_devices(verbose); });
}

}  // namespace nbx::cli
