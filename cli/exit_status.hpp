// The exit statuses of every nbx command, one table (README's CLI section, cli/README.md), so
// that a script can tell a failed check from a wrong command line from a device that cannot.
#pragma once

#include <exception>

namespace nbx::cli {

enum ExitStatus : int {
  kExitOk = 0,
  // A check found faults: a conformance cell FAILed (or passed where a failure was listed),
  // `device-files check` found an error.
  kExitCheckFailed = 1,
  // The input is wrong: the command line (an unknown subcommand or option, a value it does not
  // read, a --json path that cannot be written) or a file it names (a malformed device file or
  // overlay) — CLI11's parse errors and nbx::InvalidArgument.
  kExitUsage = 2,
  // The device cannot do it (nbx::Unsupported), or `explain`'s plan is a refusal.
  kExitRefused = 3,
  // The run itself failed: out of memory, a device fault, a lost device, an internal error,
  // an output that could not be written.
  kExitRunFailed = 4,
  // The backend or device asked for is not here (nbx::Unavailable); meson counts it as SKIP.
  kExitAbsent = 77,
};

// The status for an error that ended a command: by its nbx::Error type (above), else
// kExitRunFailed.
int exit_status_of(const std::exception& e);

}  // namespace nbx::cli
