// Which exit status an error ends a command with (exit_status.hpp).
#include "cli/exit_status.hpp"

#include "core/errors.hpp"

namespace nbx::cli {

int exit_status_of(const std::exception& e) {
  if (dynamic_cast<const InvalidArgument*>(&e)) return kExitUsage;
  if (dynamic_cast<const Unsupported*>(&e)) return kExitRefused;
  if (dynamic_cast<const Unavailable*>(&e)) return kExitAbsent;
  return kExitRunFailed;
}

}  // namespace nbx::cli
