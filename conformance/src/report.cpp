#include <backplane/conformance/report.h>

#include <fmt/format.h>
#include <fmt/ostream.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace bp::conformance {

bool ConformanceReport::passed() const {
  const bool ops_pass = std::none_of(ops.begin(), ops.end(),
                                     [](const OpResult& r) { return r.status == OpStatus::Fail; });
  const bool contract_holds =
      std::none_of(contract.begin(), contract.end(), [](const ContractCheck& c) {
        return c.outcome == ContractCheck::Outcome::Fail;
      });
  return ops_pass && contract_holds;
}

namespace {

std::string op_summary(const OpResult& r) {
  switch (r.status) {
    case OpStatus::Pass: {
      std::string text = fmt::format("{} cases", r.cases - r.unsupported);
      if (!r.unsupported_dtypes.empty())
        text += fmt::format("; refuses {}", fmt::join(r.unsupported_dtypes, ", "));
      return text;
    }
    case OpStatus::Fail:
      return fmt::format("{} of {} cases fail; worst: {}: {}", r.failed, r.cases,
                         r.worst->case_name, r.worst->error);
    case OpStatus::Unsupported: return r.note;
  }
  return "";
}

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string xml_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default:
        // XML 1.0 has no way to write the other control characters.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

std::string json_failure(const CaseFailure& f) {
  return fmt::format("{{\"case\": {}, \"error\": {}}}", json_string(f.case_name),
                     json_string(f.error));
}

}  // namespace

void write_table(std::ostream& out, const ConformanceReport& report) {
  fmt::print(out, "bp-conformance: {} ({}) on {}\n\n", report.backend, report.plugin,
             report.device);
  size_t width = 2;
  for (const OpResult& r : report.ops) width = std::max(width, r.op.size());
  for (const OpResult& r : report.ops) {
    fmt::print(out, "  {:<{}}  {:<11}  {}\n", r.op, width, name_of(r.status), op_summary(r));
    if (r.status != OpStatus::Fail) continue;
    for (const CaseFailure& f : r.failures) {
      if (&f == &r.failures.front() && f.case_name == r.worst->case_name) continue;
      fmt::print(out, "  {:<{}}  {:<11}    also: {}: {}\n", "", width, "", f.case_name, f.error);
    }
  }
  fmt::print(out, "\ncontract:\n");
  for (const ContractCheck& c : report.contract) {
    fmt::print(out, "  {:<{}}  {:<11}  {}\n", c.name, width, name_of(c.outcome), c.detail);
  }
  const auto count = [&](OpStatus status) {
    return std::count_if(report.ops.begin(), report.ops.end(),
                         [&](const OpResult& r) { return r.status == status; });
  };
  fmt::print(out,
             "\ncoverage: {} implements {} of the {} kernel ops in ops.yaml\n"
             "result: {}: {} ops pass, {} fail, {} unsupported; {} contract checks fail "
             "({:.1f} s)\n",
             report.backend, report.implemented, report.total, report.passed() ? "PASS" : "FAIL",
             count(OpStatus::Pass), count(OpStatus::Fail), count(OpStatus::Unsupported),
             std::count_if(
                 report.contract.begin(), report.contract.end(),
                 [](const ContractCheck& c) { return c.outcome == ContractCheck::Outcome::Fail; }),
             report.seconds);
}

void write_json(std::ostream& out, const ConformanceReport& report) {
  std::vector<std::string> ops;
  for (const OpResult& r : report.ops) {
    std::vector<std::string> failures;
    for (const CaseFailure& f : r.failures) failures.push_back(json_failure(f));
    std::vector<std::string> refused;
    for (const std::string& d : r.unsupported_dtypes) refused.push_back(json_string(d));
    ops.push_back(fmt::format(
        "    {{\"op\": {}, \"status\": {}, \"cases\": {}, \"failed\": {}, \"unsupported\": {}, "
        "\"unsupported_dtypes\": [{}], \"seconds\": {:.3f}, \"note\": {}, \"worst\": {}, "
        "\"failures\": [{}]}}",
        json_string(r.op), json_string(name_of(r.status)), r.cases, r.failed, r.unsupported,
        fmt::join(refused, ", "), r.seconds, json_string(r.note),
        r.worst ? json_failure(*r.worst) : "null", fmt::join(failures, ", ")));
  }
  std::vector<std::string> contract;
  for (const ContractCheck& c : report.contract) {
    contract.push_back(fmt::format("    {{\"check\": {}, \"status\": {}, \"detail\": {}}}",
                                   json_string(c.name), json_string(name_of(c.outcome)),
                                   json_string(c.detail)));
  }
  fmt::print(out,
             "{{\n  \"backend\": {},\n  \"plugin\": {},\n  \"device\": {},\n  \"passed\": {},\n"
             "  \"coverage\": {{\"implemented\": {}, \"total\": {}}},\n  \"seconds\": {:.3f},\n"
             "  \"ops\": [\n{}\n  ],\n  \"contract\": [\n{}\n  ]\n}}\n",
             json_string(report.backend), json_string(report.plugin), json_string(report.device),
             report.passed() ? "true" : "false", report.implemented, report.total, report.seconds,
             fmt::join(ops, ",\n"), fmt::join(contract, ",\n"));
}

void write_junit(std::ostream& out, const ConformanceReport& report) {
  const auto failed_ops = std::count_if(report.ops.begin(), report.ops.end(),
                                        [](const auto& r) { return r.status == OpStatus::Fail; });
  const auto skipped_ops = std::count_if(report.ops.begin(), report.ops.end(), [](const auto& r) {
    return r.status == OpStatus::Unsupported;
  });
  const auto failed_checks =
      std::count_if(report.contract.begin(), report.contract.end(),
                    [](const auto& c) { return c.outcome == ContractCheck::Outcome::Fail; });
  const auto skipped_checks =
      std::count_if(report.contract.begin(), report.contract.end(),
                    [](const auto& c) { return c.outcome == ContractCheck::Outcome::Skipped; });
  const std::string suite = xml_text(fmt::format("bp-conformance {}", report.device));
  fmt::print(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\">\n", suite);
  fmt::print(out,
             "  <testsuite name=\"{} ops\" tests=\"{}\" failures=\"{}\" skipped=\"{}\" "
             "time=\"{:.3f}\">\n",
             suite, report.ops.size(), failed_ops, skipped_ops, report.seconds);
  for (const OpResult& r : report.ops) {
    fmt::print(out, "    <testcase classname=\"ops\" name=\"{}\" time=\"{:.3f}\">", xml_text(r.op),
               r.seconds);
    if (r.status == OpStatus::Fail) {
      std::string detail;
      for (const CaseFailure& f : r.failures) detail += f.case_name + ": " + f.error + "\n";
      fmt::print(out, "<failure message=\"{}\">{}</failure>",
                 xml_text(fmt::format("{} of {} cases fail", r.failed, r.cases)), xml_text(detail));
    } else if (r.status == OpStatus::Unsupported) {
      fmt::print(out, "<skipped message=\"{}\"/>", xml_text(r.note));
    }
    fmt::print(out, "</testcase>\n");
  }
  fmt::print(out, "  </testsuite>\n");
  fmt::print(out,
             "  <testsuite name=\"{} contract\" tests=\"{}\" failures=\"{}\" skipped=\"{}\">\n",
             suite, report.contract.size(), failed_checks, skipped_checks);
  for (const ContractCheck& c : report.contract) {
    fmt::print(out, "    <testcase classname=\"contract\" name=\"{}\">", xml_text(c.name));
    if (c.outcome == ContractCheck::Outcome::Fail) {
      fmt::print(out, "<failure message=\"{}\"/>", xml_text(c.detail));
    } else if (c.outcome == ContractCheck::Outcome::Skipped) {
      fmt::print(out, "<skipped message=\"{}\"/>", xml_text(c.detail));
    }
    fmt::print(out, "</testcase>\n");
  }
  fmt::print(out, "  </testsuite>\n</testsuites>\n");
}

}  // namespace bp::conformance
