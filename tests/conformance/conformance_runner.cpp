// Runs the suite: finds the devices, and for each cell runs every layout on the device and
// on the host reference with the same inputs, then classifies the cell.
#include <cstdlib>
#include <ostream>

#include "core/errors.hpp"
#include "core/registry.hpp"
#include "tests/conformance/conformance.hpp"
#include "tests/conformance/conformance_cases.hpp"
#include "tests/conformance/conformance_compare.hpp"
#include "tests/conformance/conformance_expected.hpp"
#include "tests/conformance/conformance_families.hpp"

namespace nbx::conformance {
namespace {

struct Cell {
  const OpSpec* spec;
  const FamilySpec* family;  // set for the ops of the other families
  std::string op;            // the name asked for (a spec may be missing for a new op)
  DType dtype;
  std::optional<DType> to;
};

std::vector<std::byte> read_back(const Tensor& t) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(t.numel()) * t.itemsize());
  t.copy_to_host(bytes.data());
  return bytes;
}

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(static_cast<std::size_t>(shape.size()));
  for (int d = shape.size() - 1; d >= 0; --d) {
    idx[static_cast<std::size_t>(d)] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  return idx;
}

// The operands' values at output element `flat`, read from the host reference inputs.
std::vector<std::string> inputs_at(const std::vector<ops::TensorOrScalar>& operands,
                                   const Shape& out_shape, std::int64_t flat) {
  std::vector<std::string> out;
  for (const ops::TensorOrScalar& o : operands) {
    if (!o.is_tensor()) {
      out.push_back(o.scalar().str());
      continue;
    }
    const Tensor full = o.tensor().expand(out_shape).contiguous();
    const std::vector<std::byte> bytes = read_back(full);
    out.push_back(format_element(load_element(bytes.data(), full.dtype(), flat)));
  }
  return out;
}

// One cell on `dut`. Stops at the first failing layout; a refusal is remembered and the
// other layouts still run (a failure outranks a refusal).
CellResult run_cell(const Device& dut, const Cell& cell, std::uint64_t seed, bool quick) {
  CellResult r;
  r.op = cell.op;
  r.dtype = cell.dtype;
  r.to = cell.to;
  r.seed = seed;
  auto fail = [&](std::string_view layout, std::string why) {
    r.status = CellStatus::kFail;
    r.failed_case = layout;
    r.reason = std::move(why);
    return r;
  };
  if (!cell.spec) return fail("", "the conformance suite has no entry for this op; add one.");
  const OpSpec& spec = *cell.spec;
  const DType to = cell.to.value_or(cell.dtype);
  const Device host = host_device();
  bool refused = false;
  for (Layout layout : layouts_for(spec, cell.dtype, quick)) {
    const std::string_view lname = layout_name(layout);
    Rng rng = Rng::for_case(seed, spec.name, cell.dtype, cell.to ? int(*cell.to) : -1, int(layout));
    CaseInputs in;
    try {
      in = make_inputs(spec, cell.dtype, layout, rng, dut);
    } catch (const Unsupported& e) {
      refused = true;
      if (r.reason.empty()) r.failed_case = lname, r.reason = e.what();
      continue;
    } catch (const Error& e) {
      return fail(lname, std::string("could not place the inputs on the device: ") + e.what());
    }
    Tensor ref;
    bool ref_fault = false;
    try {
      ref = spec.call(in.reference, cell.dtype, to);
      host.synchronize();
    } catch (const InvalidArgument& e) {
      if (r.cases_run || refused)
        return fail(lname, std::string("the host rejected this layout after accepting others: ") +
                               e.what());
      // Not defined for the dtype: n/a, provided the device rejects it the same way.
      try {
        spec.call(in.device, cell.dtype, to);
      } catch (const InvalidArgument&) {
        r.status = CellStatus::kNotApplicable;
        r.reason = e.what();
        return r;
      } catch (const Error& d) {
        return fail(lname, std::string("the host rejects the dtype (") + e.what() +
                               ") but the device threw another error: " + d.what());
      }
      return fail(lname, std::string("the host rejects the dtype (") + e.what() +
                             ") but the device gave a result.");
    } catch (const DeviceFault&) {
      ref_fault = true;
    } catch (const Error& e) {
      return fail(lname, std::string("the host reference itself failed: ") + e.what());
    }
    if (layout == Layout::kDivisionByZero && !ref_fault)
      return fail(lname,
                  "the host reference gave a result for an integer division by zero "
                  "instead of raising DeviceFault.");
    Tensor out;
    std::vector<std::byte> got;
    try {
      out = spec.call(in.device, cell.dtype, to);
      dut.synchronize();
      got = read_back(out);
    } catch (const Unsupported& e) {
      refused = true;
      if (r.reason.empty()) r.failed_case = lname, r.reason = e.what();
      continue;
    } catch (const DeviceFault& e) {
      if (ref_fault) {
        ++r.cases_run;
        continue;
      }
      return fail(lname, std::string("unexpected DeviceFault: ") + e.what());
    } catch (const Error& e) {
      return fail(lname, std::string("the device threw where the host did not: ") + e.what());
    }
    ++r.cases_run;
    if (ref_fault)
      return fail(lname, "expected DeviceFault (integer division by zero), got a result.");
    if (out.dtype() != ref.dtype() || !(out.shape() == ref.shape()))
      return fail(lname, "result " + out.str() + " differs in dtype or shape from the host's " +
                             ref.str() + ".");
    const std::vector<std::byte> want = read_back(ref);
    const Tolerance tol = tolerance_for(spec.name, ref.dtype());
    const Comparison c = compare_buffers(ref.dtype(), tol, want.data(), got.data(), ref.numel());
    if (c.ok) continue;
    r.max_abs_error = c.max_abs_error;
    r.max_rel_error = c.max_rel_error;
    r.worst = WorstElement{unravel(c.worst_index, ref.shape()), format_element(c.worst_expected),
                           format_element(c.worst_actual),
                           inputs_at(in.reference, ref.shape(), c.worst_index)};
    return fail(lname, std::to_string(c.mismatches) + " of " + std::to_string(ref.numel()) +
                           " elements outside the tolerance.");
  }
  if (refused) r.status = CellStatus::kRefused;
  return r;
}

// The op names of the families asked for (all when none is), in suite order.
std::vector<std::string> ops_of_families(const std::vector<std::string>& families) {
  const std::vector<std::string> known = family_names();
  for (const std::string& f : families)
    if (std::find(known.begin(), known.end(), f) == known.end()) {
      std::string names;
      for (const std::string& k : known) names += (names.empty() ? "" : ", ") + k;
      throw InvalidArgument(
          "conformance", "conformance: '" + f + "' is not a family of the suite (" + names + ").");
    }
  auto wanted = [&](std::string_view f) {
    return families.empty() || std::find(families.begin(), families.end(), f) != families.end();
  };
  std::vector<std::string> names;
  if (wanted("elementwise")) names = ops::elementwise_op_names();
  for (const FamilySpec& s : family_specs())
    if (wanted(s.family)) names.emplace_back(s.name);
  return names;
}

std::vector<Cell> cells_for(const Options& o) {
  std::vector<std::string> names = o.ops.empty() ? ops_of_families(o.families) : o.ops;
  const std::vector<std::string> known = suite_op_names();
  for (const std::string& n : names)
    if (std::find(known.begin(), known.end(), n) == known.end())
      throw InvalidArgument("conformance", "conformance: '" + n +
                                               "' is not an op of the suite (see "
                                               "`nbx conformance --help` for the list).");
  std::vector<DType> dtypes(std::begin(kAllDTypes), std::end(kAllDTypes));
  if (!o.dtypes.empty()) dtypes = o.dtypes;
  if (o.shard_count < 1 || o.shard_index < 0 || o.shard_index >= o.shard_count)
    throw InvalidArgument("conformance", "conformance: shard " + std::to_string(o.shard_index) +
                                             " of " + std::to_string(o.shard_count) +
                                             " does not exist.");
  std::vector<Cell> cells;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (int(i % std::size_t(o.shard_count)) != o.shard_index) continue;
    const std::string& n = names[i];
    if (n == "cast") {
      for (DType to : kAllDTypes)
        for (DType d : dtypes) cells.push_back({find_op_spec(n), nullptr, n, d, to});
      continue;
    }
    for (DType d : dtypes)
      cells.push_back({find_op_spec(n), find_family_spec(n), n, d, std::nullopt});
  }
  return cells;
}

// Whether cell c is its op's first (cells run op by op).
bool starts_op(const std::vector<Cell>& cells, std::size_t c) {
  return c == 0 || cells[c - 1].op != cells[c].op;
}

constexpr const char* kClearLine = "\r\033[K";  // back to the line's start, erase it

// The terminal's status line, rewritten in place: "  vulkan:0: op 12/97 softmax, 340 passed,
// 0 failed".
void live_status(std::ostream& out, const DeviceReport& rep, const std::string& op,
                 std::size_t started, std::size_t ops) {
  out << kClearLine << "  " << rep.device << ": op " << started << "/" << ops << " " << op << ", "
      << rep.counts.passed << " passed, " << rep.counts.failed << " failed" << std::flush;
}

DeviceReport run_device(const Device& dut, const std::vector<Cell>& cells, const Options& o) {
  DeviceReport rep;
  rep.device = dut.str();
  rep.name = dut.display_name();
  rep.backend = dut.id().backend;
  if (dut.is_host())
    rep.note = "the host against itself: views, broadcasts and scalars vs contiguous copies";
  if (!o.overlay.empty() && dut.capabilities().overlay.empty() && !dut.is_host())
    rep.note = "overlay " + o.overlay + " was not applied by this build's capability resolver";
  if (o.progress) *o.progress << "conformance: " << rep.name << ", " << cells.size() << " cells\n";
  const bool live = o.progress && o.progress_live;
  std::size_t op_count = 0, ops_started = 0;
  for (std::size_t c = 0; c < cells.size(); ++c) op_count += starts_op(cells, c);
  for (std::size_t c = 0; c < cells.size(); ++c) {
    const Cell& cell = cells[c];
    if (live && starts_op(cells, c))
      live_status(*o.progress, rep, cell.op, ++ops_started, op_count);
    CellResult r = cell.family ? run_family_cell(dut, *cell.family, cell.dtype, o.seed, o.quick)
                               : run_cell(dut, cell, o.seed, o.quick);
    if (auto why = expected_failure(rep.backend, r.op, r.dtype, r.to)) {
      if (r.status == CellStatus::kFail) {
        r.status = CellStatus::kExpectedFail;
        r.reason = std::string(*why) + " (" + r.reason + ")";
      } else if (r.status == CellStatus::kPass) {
        r.status = CellStatus::kUnexpectedPass;
        r.reason = "listed as an expected failure (" + std::string(*why) + ") but passed.";
      }
    }
    rep.counts.add(r.status);
    rep.cells.push_back(std::move(r));
  }
  if (live && !cells.empty()) *o.progress << kClearLine << std::flush;
  // Anything the device reports only at a synchronisation (validation messages, a late
  // fault) must not slip out after the last cell.
  try {
    dut.synchronize();
  } catch (const Error& e) {
    rep.errors.push_back(e.what());
    ++rep.counts.failed;
  }
  return rep;
}

}  // namespace

std::vector<std::string> suite_op_names() {
  return ops_of_families({});
}

std::vector<std::string> family_op_names(const std::string& family) {
  return ops_of_families({family});
}

Report run_conformance(const Options& o) {
  Report report;
  report.seed = o.seed;
  report.quick = o.quick;
  report.shard_index = o.shard_index;
  report.shard_count = o.shard_count;
  const std::vector<Cell> cells = cells_for(o);
  std::optional<DeviceId> want_device;
  if (o.device) want_device = DeviceId::parse(*o.device);
  const std::string want_backend = o.backend ? *o.backend : want_device ? want_device->backend : "";
  const auto& statuses = backend_statuses();
  if (!want_backend.empty() &&
      std::none_of(statuses.begin(), statuses.end(),
                   [&](const BackendStatus& s) { return s.name == want_backend; }))
    throw InvalidArgument("conformance", "conformance: '" + want_backend +
                                             "' is not a backend (host, cuda, hip or vulkan).");
  // The reference is opened before the overlay is set, so the overlay restricts only the
  // devices under test ($NBX_DEVICE_OVERLAY applies to devices opened after it is set).
  host_device();
  if (!o.overlay.empty()) setenv("NBX_DEVICE_OVERLAY", o.overlay.c_str(), 1);
  for (const BackendStatus& s : statuses) {
    if (!want_backend.empty() && s.name != want_backend) continue;
    if (!s.backend) {
      report.unavailable.push_back(s.name + ": unavailable (" + s.unavailable_reason + ")");
      continue;
    }
    const DeviceListing listing = s.backend->list_devices();
    if (listing.devices.empty())
      report.unavailable.push_back(s.name + ": no device (" + listing.unavailable_reason + ")");
    bool found = !want_device;
    for (std::size_t i = 0; i < listing.devices.size(); ++i) {
      const DeviceId id = s.name == "host" ? DeviceId::host() : DeviceId{s.name, int(i)};
      if (want_device && !(id == *want_device)) continue;
      found = true;
      report.devices.push_back(run_device(open(id), cells, o));
      report.counts.add(report.devices.back().counts);
    }
    if (!found && !listing.devices.empty())
      report.unavailable.push_back(want_device->str() + ": no such device (" + s.name + " has " +
                                   std::to_string(listing.devices.size()) + ")");
  }
  return report;
}

}  // namespace nbx::conformance
