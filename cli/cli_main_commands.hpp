// Subcommands owned by cli/ itself. Each registers its options and a callback on `app`.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "core/backend.hpp"
#include "core/device_id.hpp"

namespace nbx::cli {

void register_devices_command(CLI::App& app);
// `nbx bench` (cmd_bench.cpp).
void register_bench_command(CLI::App& app);
// `nbx explain` (cmd_explain.cpp).
void register_explain_command(CLI::App& app);

// Parses and runs the chosen subcommand; returns the process exit status (exit_status.hpp):
// 2 for arguments CLI11 cannot read, exit_status_of(an error the command threw, printed on one
// line), else what the subcommand asked for.
int run_app(CLI::App& app, int argc, char** argv);

// Throws InvalidArgument naming `command` when `path` (a --json file) cannot be written, so a
// bad path is reported before a long run, not after it. Leaves the file as it was: absent, or
// untouched until the run writes it.
void require_writable(const std::string& path, const char* command);

// Every device of every compiled-in backend, in the registry's order: `on_device` for each,
// `on_absent(backend, what, reason)` for a backend that has none — `what` is "unavailable"
// (not compiled in, or its module or runtime would not load) or "no device".
void for_each_device(
    const std::function<void(const DeviceId&, const DeviceProperties&)>& on_device,
    const std::function<void(const std::string&, const char*, const std::string&)>& on_absent);

// The exit status the chosen subcommand asked for (0 unless it set one).
int exit_code();
void set_exit_code(int code);

}  // namespace nbx::cli
