#define DOCTEST_CONFIG_IMPLEMENT
#include "doctest_runner.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace testsupport {
namespace {

std::vector<std::string> started_cases;

struct StartedCases : public TestCaseStartListener {
  explicit StartedCases(const doctest::ContextOptions&) {}
  void test_case_start(const doctest::TestCaseData& data) override {
    started_cases.emplace_back(data.m_name);
  }
};

REGISTER_LISTENER("started_cases", 0, StartedCases);

// The patterns of argv's --test-case filters, split where doctest splits them: at each comma not
// escaped with a backslash.
std::vector<std::string> name_patterns(int argc, const char* const* argv) {
  constexpr std::array<std::string_view, 4> kOptions = {
      "--test-case=", "-tc=", "--dt-test-case=", "--dt-tc="};
  std::vector<std::string> patterns;
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    for (const std::string_view option : kOptions) {
      if (!argument.starts_with(option)) continue;
      std::string pattern;
      for (size_t k = option.size(); k < argument.size(); ++k) {
        if (argument[k] == '\\' && k + 1 < argument.size() && argument[k + 1] == ',') {
          pattern += ',';
          ++k;
        } else if (argument[k] == ',') {
          patterns.push_back(pattern);
          pattern.clear();
        } else {
          pattern += argument[k];
        }
      }
      patterns.push_back(pattern);
    }
  }
  return patterns;
}

// doctest's wildcards: '*' for any run of characters, '?' for any one; letters match either case,
// as doctest matches them unless --case-sensitive is given.
bool matches(std::string_view pattern, std::string_view name) {
  if (pattern.empty()) return name.empty();
  if (pattern.front() == '*') {
    for (size_t skip = 0; skip <= name.size(); ++skip) {
      if (matches(pattern.substr(1), name.substr(skip))) return true;
    }
    return false;
  }
  if (name.empty()) return false;
  const auto lower = [](char c) { return std::tolower(static_cast<unsigned char>(c)); };
  if (pattern.front() != '?' && lower(pattern.front()) != lower(name.front())) return false;
  return matches(pattern.substr(1), name.substr(1));
}

}  // namespace

int run_doctest(doctest::Context& context, int argc, const char* const* argv) {
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  std::vector<std::string> unmatched;
  for (const std::string& pattern : name_patterns(argc, argv)) {
    const bool ran = std::any_of(started_cases.begin(), started_cases.end(),
                                 [&](const std::string& name) { return matches(pattern, name); });
    if (!ran) unmatched.push_back(pattern);
  }
  if (unmatched.empty()) return 0;
  std::fprintf(stderr, "no test case that ran matches the --test-case pattern");
  for (size_t i = 0; i < unmatched.size(); ++i)
    std::fprintf(stderr, "%s '%s'", i == 0 ? "" : ",", unmatched[i].c_str());
  std::fprintf(
      stderr,
      ", so it tested nothing: check the name (a comma in it must be escaped as '\\,', and a "
      "test case whose name holds ';' cannot be run by its CTest entry, since CMake splits the "
      "name there: rename it)\n");
  return 1;
}

}  // namespace testsupport
