// The scatter mode a test or conformance cell runs in — `nbx::set_deterministic_algorithms`
// and $NBX_SCATTER — for the length of a scope; both come back as they were when it ends.
#pragma once

#include <cstdlib>
#include <string>

#include "core/ops/index_write.hpp"

namespace nbx::testing {

class ScatterModeScope {
 public:
  // Only saves the flag and $NBX_SCATTER: the scope's body sets them as it needs.
  ScatterModeScope() : was_(deterministic_algorithms()) {
    if (const char* v = std::getenv("NBX_SCATTER")) env_ = v, had_env_ = true;
  }
  // "atomic" or "sorted" (deterministic algorithms on), forced through $NBX_SCATTER.
  explicit ScatterModeScope(const std::string& mode) : ScatterModeScope() { set(mode); }
  ~ScatterModeScope() {
    set_deterministic_algorithms(was_);
    if (had_env_)
      setenv("NBX_SCATTER", env_.c_str(), 1);
    else
      unsetenv("NBX_SCATTER");
  }
  ScatterModeScope(const ScatterModeScope&) = delete;
  ScatterModeScope& operator=(const ScatterModeScope&) = delete;

  static void set(const std::string& mode) {
    set_deterministic_algorithms(mode == "sorted");
    setenv("NBX_SCATTER", mode.c_str(), 1);
  }

 private:
  bool was_;
  bool had_env_ = false;
  std::string env_;
};

}  // namespace nbx::testing
