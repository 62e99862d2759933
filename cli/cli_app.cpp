// What every nbx command-line program shares: parsing with CLI11, errors as one line on stderr,
// and the exit status (cli/exit_status.hpp) an error or the subcommand asked for.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>

#include "cli/cli_main_commands.hpp"
#include "cli/exit_status.hpp"
#include "core/errors.hpp"
#include "core/registry.hpp"

namespace nbx::cli {
namespace {
int g_exit_code = 0;

// "device-files check": the subcommands parsed so far, for the first words of an error.
std::string subcommand_words(const CLI::App& app) {
  std::string words;
  for (const CLI::App* sub : app.get_subcommands()) {
    const std::string inner = subcommand_words(*sub);
    words += sub->get_name() + (inner.empty() ? "" : " " + inner);
  }
  return words;
}

// One line on stderr, the command first: most nbx messages already begin with it
// ("explain: --shape '4,x': …"), and then it is said once.
void print_error(const CLI::App& app, const std::string& what) {
  const std::string words = subcommand_words(app);
  const std::string last = words.substr(words.rfind(' ') + 1);
  if (words.empty() || what.rfind(last + ":", 0) == 0)
    std::cerr << "nbx" << (words.empty() ? ": " : " ") << what << "\n";
  else
    std::cerr << "nbx " << words << ": " << what << "\n";
}

// CLI11 says only "A subcommand is required" for `nbx frob` and `nbx device-files frob`: the
// word it could not place is left in remaining(). Names it and the subcommands there are.
bool print_unknown_subcommand(const CLI::App& app) {
  const CLI::App* at = &app;
  std::string words = "nbx";
  while (!at->get_subcommands().empty()) {
    at = at->get_subcommands().front();
    words += " " + at->get_name();
  }
  if (at->get_require_subcommand_min() == 0) return false;
  for (const std::string& word : at->remaining()) {
    if (word.empty() || word[0] == '-') continue;
    std::string names;
    for (const CLI::App* sub : at->get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + sub->get_name();
    std::cerr << words << ": unknown subcommand '" << word << "' (the subcommands: " << names
              << "); run " << words << " --help.\n";
    return true;
  }
  return false;
}

}  // namespace

int exit_code() {
  return g_exit_code;
}
void set_exit_code(int code) {
  g_exit_code = code;
}

void require_writable(const std::string& path, const char* command) {
  if (path.empty()) return;
  std::error_code ec;
  const bool existed = std::filesystem::exists(path, ec);
  if (!std::ofstream(path, std::ios::app))
    throw InvalidArgument(command, std::string(command) + ": cannot write --json '" + path +
                                       "' (no such folder, a folder, or no permission).");
  // A run that fails later leaves no empty report behind.
  if (!existed) std::filesystem::remove(path, ec);
}

int run_app(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RequiredError& e) {
    if (print_unknown_subcommand(app)) return kExitUsage;
    app.exit(e);
    return kExitUsage;
  } catch (const CLI::ParseError& e) {
    // CLI11 prints its message (or the help, or the version) and names its own codes 100-115;
    // every one of those is a command line it could not read.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  } catch (const std::exception& e) {  // nbx::Error, or the standard library's: no abort
    print_error(app, e.what());
    return exit_status_of(e);
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
