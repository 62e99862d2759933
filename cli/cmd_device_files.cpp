// `nbx device-files check [DIR]`: validates every device file in a directory (the schema,
// file:line:key on each error, <vendor>/<arch>.yml layout, one generic file per vendor).
// Without DIR: $NBX_DEVICE_FILES if set, else the source tree's device_files/ when it is
// still there, else the copy embedded in libnbx.
//
// `nbx device-files list` shows which files are in use and what each one claims.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli/cli_commands.hpp"
#include "cli/cli_main_commands.hpp"
#include "cli/exit_status.hpp"
#include "core/capability_resolver.hpp"
#include "core/errors.hpp"
#include "nbx_config.h"

namespace nbx::cli {
namespace {

std::string default_dir() {
  if (const char* env = std::getenv("NBX_DEVICE_FILES"); env && *env) return env;
  std::error_code ec;
  if (std::filesystem::is_directory(NBX_SOURCE_DEVICE_FILES_DIR, ec))
    return NBX_SOURCE_DEVICE_FILES_DIR;
  return "";  // the embedded copy
}

int run_check(const std::string& dir_arg) {
  std::string dir = dir_arg.empty() ? default_dir() : dir_arg;
  if (dir.empty()) {
    // Parsing the embedded copy validates it; a malformed one throws with file:line:key.
    const DeviceFileSet& set = embedded_device_files();
    for (const auto& f : set.files) std::printf("ok      %s\n", f.path.c_str());
    std::printf("%zu device files (embedded in libnbx) are valid.\n", set.files.size());
    return 0;
  }
  DeviceFileCheckReport report = check_device_file_dir(dir);
  for (const auto& path : report.checked) std::printf("ok      %s\n", path.c_str());
  for (const auto& error : report.errors) std::fprintf(stderr, "error   %s\n", error.c_str());
  if (report.ok()) {
    std::printf("%zu device files in %s are valid.\n", report.checked.size(), dir.c_str());
    return kExitOk;
  }
  std::fprintf(stderr, "%zu error(s) in %s (%zu file(s) valid).\n", report.errors.size(),
               dir.c_str(), report.checked.size());
  return kExitCheckFailed;
}

void run_list() {
  const DeviceFileSet& set = device_files();
  std::printf("device files in use: %s\n", set.origin.c_str());
  for (const auto& f : set.files) {
    std::string claims;
    for (const auto& c : f.match.cuda) claims += " cuda:" + c;
    for (const auto& h : f.match.hip) claims += " hip:" + h;
    if (!f.match.vulkan.empty())
      claims += " vulkan(" + std::to_string(f.match.vulkan.size()) + " rule(s))";
    if (f.match.host) claims += " host";
    std::printf("  %-22s %-9s %s;%s\n", f.name().c_str(), f.generic ? "generic" : "",
                f.description.c_str(), claims.c_str());
  }
}

}  // namespace

void register_device_files_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("device-files", "Validate or list the device files");
  cmd->require_subcommand(1);
  auto dir = std::make_shared<std::string>();
  CLI::App* check =
      cmd->add_subcommand("check", "Validate every <vendor>/<arch>.yml in a directory");
  check->add_option(
      "dir", *dir,
      "Directory (default: $NBX_DEVICE_FILES, the source tree's, or the embedded copy)");
  // A malformed embedded copy throws (file:line:key): run_app prints it, exit status 2.
  check->callback([dir] { set_exit_code(run_check(*dir)); });
  CLI::App* list =
      cmd->add_subcommand("list", "Show the device files in use and what each one claims");
  list->callback([] { run_list(); });
}

}  // namespace nbx::cli
