// The `nbx` subcommands, each registered on the top-level CLI11 app by cli/main.cpp.
// A command's callback throws its errors (run_app prints them and picks the exit status,
// cli/exit_status.hpp) and sets the status of a check that found faults with set_exit_code.
#pragma once

#include <CLI/CLI.hpp>

namespace nbx::cli {

// `nbx caps [DEVICE] [--json] [--overlay FILE] [--arch A [--backend B]] [--diff A B]`
// (cli/cmd_caps.cpp).
void register_caps_command(CLI::App& app);
// `nbx device-files check [DIR]` (cli/cmd_device_files.cpp).
void register_device_files_command(CLI::App& app);

}  // namespace nbx::cli
