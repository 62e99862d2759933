// What every nbx command-line program shares: parsing with CLI11, nbx errors as one line on
// stderr, and the exit status a subcommand asked for.
#include <fstream>
#include <iostream>
#include <string>

#include "cli/cli_main_commands.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nbx::cli {
namespace {
int g_exit_code = 0;
}  // namespace

int exit_code() {
  return g_exit_code;
}
void set_exit_code(int code) {
  g_exit_code = code;
}

void require_writable(const std::string& path, const char* command) {
  if (path.empty()) return;
  std::ofstream f(path, std::ios::app);
  if (!f)
    throw InvalidArgument(command, std::string(command) + ": cannot write --json " + path +
                                       " (no such folder, or no permission).");
}

int run_app(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {  // nbx::Error, or the standard library's: no abort
    std::cerr << "nbx: " << e.what() << "\n";
    return 1;
  }
  return exit_code();
}

void for_each_device(
    const std::function<void(const DeviceId&, const DeviceProperties&)>& on_device,
    const std::function<void(const std::string&, const char*, const std::string&)>& on_absent) {
  for (const BackendStatus& s : backend_statuses()) {
    if (!s.backend) {
      on_absent(s.name, "unavailable", s.unavailable_reason);
      continue;
    }
    const DeviceListing listing = s.backend->list_devices();
    if (listing.devices.empty()) on_absent(s.name, "no device", listing.unavailable_reason);
    for (std::size_t i = 0; i < listing.devices.size(); ++i)
      on_device(DeviceId{s.name, static_cast<int>(i)}, listing.devices[i]);
  }
}

}  // namespace nbx::cli
