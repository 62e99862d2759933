// The two forms of a conformance report: the console table and JSON (with its reader).
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>

#include "core/errors.hpp"
#include "tests/conformance/conformance.hpp"

namespace nbx::conformance {
namespace {

using nlohmann::json;

// The report's schema (README, "JSON output"); a new version whenever a key changes meaning.
constexpr const char* kReportSchema = "nbx.conformance/1";

constexpr CellStatus kAllStatuses[] = {CellStatus::kPass,         CellStatus::kFail,
                                       CellStatus::kRefused,      CellStatus::kNotApplicable,
                                       CellStatus::kExpectedFail, CellStatus::kUnexpectedPass};

std::string short_dtype(DType t) {
  switch (t) {
    case DType::kBool:
      return "b";
    case DType::kInt8:
      return "i8";
    case DType::kUInt8:
      return "u8";
    case DType::kInt16:
      return "i16";
    case DType::kInt32:
      return "i32";
    case DType::kInt64:
      return "i64";
    case DType::kFloat16:
      return "f16";
    case DType::kBFloat16:
      return "bf16";
    case DType::kFloat32:
      return "f32";
    case DType::kFloat64:
      return "f64";
  }
  return "?";
}

std::string row_name(const CellResult& c) {
  return c.to ? c.op + ">" + std::string(dtype_name(*c.to)) : c.op;
}

std::string reproducer(const DeviceReport& d, const CellResult& c, std::uint64_t seed, bool quick) {
  return "nbx conformance --device " + d.device + " --ops " + c.op + " --dtypes " +
         std::string(dtype_name(c.dtype)) + " --seed " + std::to_string(seed) +
         (quick ? " --quick" : "");
}

// JSON numbers cannot be inf or NaN; those errors are written as strings.
json number(double v) {
  if (std::isfinite(v)) return v;
  return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
}
double from_number(const json& j) {
  if (j.is_number()) return j.get<double>();
  const std::string s = j.get<std::string>();
  return s == "nan" ? NAN : (s == "inf" ? INFINITY : -INFINITY);
}

void print_device(const DeviceReport& d, std::uint64_t seed, bool quick, std::ostream& out) {
  out << d.name << "\n";
  if (!d.note.empty()) out << "  (" << d.note << ")\n";
  std::vector<DType> cols;
  std::vector<std::string> rows;
  for (const CellResult& c : d.cells) {
    if (std::find(cols.begin(), cols.end(), c.dtype) == cols.end()) cols.push_back(c.dtype);
    if (std::find(rows.begin(), rows.end(), row_name(c)) == rows.end()) rows.push_back(row_name(c));
  }
  std::sort(cols.begin(), cols.end());
  // 28 columns, wider where a name needs it (binary_cross_entropy_with_logits).
  int width = 28;
  for (const std::string& row : rows) width = std::max(width, static_cast<int>(row.size()) + 1);
  out << "  " << std::left << std::setw(width) << "op \\ input dtype";
  for (DType t : cols) out << std::setw(5) << short_dtype(t);
  out << "\n";
  for (const std::string& row : rows) {
    out << "  " << std::setw(width) << row;
    for (DType t : cols) {
      char mark = ' ';
      for (const CellResult& c : d.cells)
        if (c.dtype == t && row_name(c) == row) mark = status_mark(c.status);
      out << std::setw(5) << mark;
    }
    out << "\n";
  }
  out << std::right;
  int refused = 0;
  const CellResult* first_refusal = nullptr;
  for (const CellResult& c : d.cells) {
    if (c.status == CellStatus::kRefused && !refused++) first_refusal = &c;
    if (c.status != CellStatus::kFail && c.status != CellStatus::kUnexpectedPass) continue;
    out << "  " << status_name(c.status) << " " << row_name(c) << " " << dtype_name(c.dtype);
    if (!c.failed_case.empty()) out << " [" << c.failed_case << "]";
    out << ": " << c.reason;
    if (c.worst) {
      out << " Max abs error " << c.max_abs_error << ", max rel error " << c.max_rel_error
          << "; worst at [";
      for (std::size_t k = 0; k < c.worst->index.size(); ++k)
        out << (k ? ", " : "") << c.worst->index[k];
      out << "]: expected " << c.worst->expected << ", got " << c.worst->actual << " (inputs";
      for (const std::string& v : c.worst->inputs) out << " " << v;
      out << ").";
    }
    out << " Seed " << seed << "; reproduce: " << reproducer(d, c, seed, quick) << "\n";
  }
  for (const std::string& e : d.errors) out << "  FAIL (device): " << e << "\n";
  if (first_refusal)
    out << "  refused: " << refused << " cells by name, e.g. " << row_name(*first_refusal) << " "
        << dtype_name(first_refusal->dtype) << ": " << first_refusal->reason << "\n";
  out << "  " << summary_line(d.counts) << " (" << d.counts.not_applicable << " n/a)\n";
}

}  // namespace

std::string_view status_name(CellStatus s) {
  switch (s) {
    case CellStatus::kPass:
      return "pass";
    case CellStatus::kFail:
      return "FAIL";
    case CellStatus::kRefused:
      return "refused";
    case CellStatus::kNotApplicable:
      return "n/a";
    case CellStatus::kExpectedFail:
      return "xfail";
    case CellStatus::kUnexpectedPass:
      return "XPASS";
  }
  return "?";
}

char status_mark(CellStatus s) {
  switch (s) {
    case CellStatus::kPass:
      return '.';
    case CellStatus::kFail:
      return 'F';
    case CellStatus::kRefused:
      return 'r';
    case CellStatus::kNotApplicable:
      return '-';
    case CellStatus::kExpectedFail:
      return 'x';
    case CellStatus::kUnexpectedPass:
      return '!';
  }
  return '?';
}

void Counts::add(CellStatus s) {
  switch (s) {
    case CellStatus::kPass:
      ++passed;
      break;
    case CellStatus::kFail:
    case CellStatus::kUnexpectedPass:  // the expected-fail list is wrong: make it visible
      ++failed;
      break;
    case CellStatus::kRefused:
    case CellStatus::kExpectedFail:
      ++skipped;
      break;
    case CellStatus::kNotApplicable:
      ++not_applicable;
      break;
  }
}

void Counts::add(const Counts& c) {
  passed += c.passed;
  failed += c.failed;
  skipped += c.skipped;
  not_applicable += c.not_applicable;
}

std::string summary_line(const Counts& c) {
  return "conformance: " + std::to_string(c.passed) + " passed, " + std::to_string(c.failed) +
         " failed, " + std::to_string(c.skipped) + " skipped";
}

void print_report(const Report& report, std::ostream& out) {
  out << "conformance: seed " << report.seed;
  if (report.quick) out << ", quick (views and scalars for float32 and int32 only)";
  if (report.shard_count > 1)
    out << ", ops shard " << report.shard_index + 1 << " of " << report.shard_count;
  out << "; marks: . pass, F FAIL, r refused by name, - n/a (op undefined for the dtype), "
         "x expected failure, ! unexpected pass\n";
  for (const std::string& u : report.unavailable) out << "  " << u << "\n";
  for (const DeviceReport& d : report.devices) print_device(d, report.seed, report.quick, out);
  out << summary_line(report.counts) << "\n";
}

std::string report_to_json(const Report& report) {
  json devices = json::array();
  for (const DeviceReport& d : report.devices) {
    json cells = json::array();
    for (const CellResult& c : d.cells) {
      json j = {{"op", c.op},
                {"dtype", dtype_name(c.dtype)},
                {"status", status_name(c.status)},
                {"cases_run", c.cases_run}};
      if (c.to) j["to"] = dtype_name(*c.to);
      if (!c.failed_case.empty()) j["case"] = c.failed_case;
      if (!c.reason.empty()) j["reason"] = c.reason;
      if (c.status == CellStatus::kFail) {
        j["max_abs_error"] = number(c.max_abs_error);
        j["max_rel_error"] = number(c.max_rel_error);
        j["seed"] = c.seed;
      }
      if (c.worst)
        j["worst"] = {{"index", c.worst->index},
                      {"expected", c.worst->expected},
                      {"actual", c.worst->actual},
                      {"inputs", c.worst->inputs}};
      cells.push_back(std::move(j));
    }
    devices.push_back({{"device", d.device},
                       {"name", d.name},
                       {"backend", d.backend},
                       {"note", d.note},
                       {"passed", d.counts.passed},
                       {"failed", d.counts.failed},
                       {"skipped", d.counts.skipped},
                       {"not_applicable", d.counts.not_applicable},
                       {"errors", d.errors},
                       {"cells", std::move(cells)}});
  }
  const json root = {{"schema", kReportSchema},
                     {"seed", report.seed},
                     {"quick", report.quick},
                     {"shard", {report.shard_index + 1, report.shard_count}},
                     {"passed", report.counts.passed},
                     {"failed", report.counts.failed},
                     {"skipped", report.counts.skipped},
                     {"not_applicable", report.counts.not_applicable},
                     {"unavailable", report.unavailable},
                     {"devices", std::move(devices)}};
  return root.dump(1, ' ', false, json::error_handler_t::replace);
}

Report report_from_json(const std::string& text) {
  try {
    const json root = json::parse(text);
    if (const auto schema = root.at("schema").get<std::string>(); schema != kReportSchema)
      throw InvalidArgument("conformance", "a conformance report of schema " + schema + ", not " +
                                               kReportSchema + ".");
    Report r;
    r.seed = root.at("seed").get<std::uint64_t>();
    r.quick = root.at("quick").get<bool>();
    const auto shard = root.at("shard").get<std::vector<int>>();
    r.shard_index = shard.at(0) - 1;
    r.shard_count = shard.at(1);
    r.unavailable = root.at("unavailable").get<std::vector<std::string>>();
    for (const json& jd : root.at("devices")) {
      DeviceReport d;
      d.device = jd.at("device").get<std::string>();
      d.name = jd.at("name").get<std::string>();
      d.backend = jd.at("backend").get<std::string>();
      d.note = jd.at("note").get<std::string>();
      d.errors = jd.at("errors").get<std::vector<std::string>>();
      d.counts.failed += int(d.errors.size());
      for (const json& jc : jd.at("cells")) {
        CellResult c;
        c.op = jc.at("op").get<std::string>();
        c.dtype = parse_dtype(jc.at("dtype").get<std::string>());
        if (jc.contains("to")) c.to = parse_dtype(jc.at("to").get<std::string>());
        const std::string status = jc.at("status").get<std::string>();
        for (CellStatus s : kAllStatuses)
          if (status_name(s) == status) c.status = s;
        c.cases_run = jc.at("cases_run").get<int>();
        c.failed_case = jc.value("case", "");
        c.reason = jc.value("reason", "");
        if (jc.contains("max_abs_error")) c.max_abs_error = from_number(jc.at("max_abs_error"));
        if (jc.contains("max_rel_error")) c.max_rel_error = from_number(jc.at("max_rel_error"));
        c.seed = jc.value("seed", r.seed);
        if (jc.contains("worst")) {
          const json& w = jc.at("worst");
          c.worst = WorstElement{
              w.at("index").get<std::vector<std::int64_t>>(), w.at("expected").get<std::string>(),
              w.at("actual").get<std::string>(), w.at("inputs").get<std::vector<std::string>>()};
        }
        d.counts.add(c.status);
        d.cells.push_back(std::move(c));
      }
      r.counts.add(d.counts);
      r.devices.push_back(std::move(d));
    }
    return r;
  } catch (const json::exception& e) {
    throw InvalidArgument("conformance",
                          std::string("conformance: malformed report JSON (") + e.what() + ").");
  }
}

}  // namespace nbx::conformance
