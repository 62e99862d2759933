// The conformance suite (library `nbx_conformance`): every elementwise op x dtype, cast
// between every dtype pair, and the reduction, scan, softmax, normalization, matmul and
// creation ops x dtype, run on a device and on the host reference with the same seeded
// inputs, compared within the tolerance table of conformance_compare.hpp.
//
// Written against the public API only (nbx::open, nbx::Tensor, nbx::ops). Used by
// `nbx conformance` (cli/cmd_conformance.cpp) and by the meson tests in this folder.
// Not thread-safe: one run at a time.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/dtype.hpp"

namespace nbx::conformance {

// How one cell (op x input dtype [x target dtype for cast]) ended.
enum class CellStatus {
  kPass,
  kFail,            // a result differed, or the device threw what the host did not
  kRefused,         // the device refused by name (nbx::Unsupported) what the host ran
  kNotApplicable,   // the op is not defined for the dtype (InvalidArgument on the host too)
  kExpectedFail,    // failed, and listed in conformance_expected.cpp with a reason
  kUnexpectedPass,  // listed as an expected failure, yet passed: the list is stale
};
std::string_view status_name(CellStatus s);  // "pass", "FAIL", "refused", "n/a", "xfail", "XPASS"
char status_mark(CellStatus s);              // '.', 'F', 'r', '-', 'x', '!'

// The worst element of a failing comparison.
struct WorstElement {
  std::vector<std::int64_t> index;  // in the output shape
  std::string expected, actual;     // formatted values
  std::vector<std::string> inputs;  // the operands' values at that element
};

struct CellResult {
  std::string op;  // a name of suite_op_names(): "add", "gelu_tanh", "cast", "sum", "matmul"
  DType dtype = DType::kFloat32;  // input dtype
  std::optional<DType> to;        // cast only: the target dtype
  CellStatus status = CellStatus::kPass;
  int cases_run = 0;        // input layouts compared (contiguous, 0-d, transposed, …)
  std::string failed_case;  // the layout that failed or was refused
  std::string reason;       // refusal message, failure description, or expected-fail reason
  double max_abs_error = 0, max_rel_error = 0;
  std::optional<WorstElement> worst;
  std::uint64_t seed = 0;  // the run's seed (reproduces with --seed and --ops/--dtypes)
};

struct Counts {
  int passed = 0, failed = 0, skipped = 0, not_applicable = 0;
  void add(CellStatus s);
  void add(const Counts& c);
};

struct DeviceReport {
  std::string device;  // "vulkan:0", "host"
  std::string name;    // "vulkan:0 (llvmpipe (LLVM 15.0.6, 256 bits))"
  std::string backend;
  std::string note;  // e.g. "host against itself: strided views vs contiguous copies"
  std::vector<CellResult> cells;
  // Device-level errors outside any cell (e.g. validation messages at the final
  // synchronisation); each counts as a failure.
  std::vector<std::string> errors;
  Counts counts;
};

struct Report {
  std::uint64_t seed = 0;
  bool quick = false;
  int shard_index = 0, shard_count = 1;
  std::vector<DeviceReport> devices;
  std::vector<std::string> unavailable;  // "hip: no device (hipErrorNoDevice)"
  Counts counts;
};

struct Options {
  std::optional<std::string> backend;  // only this backend's devices
  std::optional<std::string> device;   // only this device ("vulkan:0")
  std::vector<std::string> ops;        // empty: every op of `families`
  // "elementwise", "reduce", "scan", "softmax", "norm", "linalg", "creation"; empty: all.
  std::vector<std::string> families;
  std::vector<DType> dtypes;  // empty: every dtype
  std::uint64_t seed = 20261130;
  // The CI subset: every cell runs contiguous, 0-d and 0-size inputs, but the views,
  // broadcasts, 0-d operands and host scalars only for float32 and int32. Each new
  // layout is a new pipeline on Vulkan, ~0.1 s to compile on llvmpipe.
  bool quick = false;
  // Runs only ops whose position in the op list is shard_index modulo shard_count, so a
  // slow device can be checked by several processes at once.
  int shard_index = 0, shard_count = 1;
  std::string overlay;               // capability overlay file for the devices under test
  std::ostream* progress = nullptr;  // one line per device while running, when set
  // A terminal: `progress` also gets a status line rewritten in place ('\r') as each op
  // starts — the op, how many of the device's ops are done, failures so far.
  bool progress_live = false;
};

// Every op name the suite covers: the elementwise ops (ops::elementwise_op_names(), cast
// included), then the other families' (conformance_families.hpp).
std::vector<std::string> suite_op_names();
// The ops of one family ("elementwise", "reduce", …), in suite order; InvalidArgument for a
// name that is no family.
std::vector<std::string> family_op_names(const std::string& family);

// Runs the suite. Throws nbx::InvalidArgument for an unknown op, backend or device name.
// A requested backend or device that is absent is not an error: it is listed in
// `Report::unavailable` and has no DeviceReport.
Report run_conformance(const Options& options);

// The console form: an op x dtype table per device, then failures in full, then the line
// "conformance: N passed, N failed, N skipped".
void print_report(const Report& report, std::ostream& out);
std::string summary_line(const Counts& counts);

// The JSON form (schema in README.md) and its reader, used by the tests to check it.
std::string report_to_json(const Report& report);
Report report_from_json(const std::string& text);

}  // namespace nbx::conformance
