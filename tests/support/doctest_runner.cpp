#define DOCTEST_CONFIG_IMPLEMENT
#include "doctest_runner.h"

#include <array>
#include <cstdio>
#include <string_view>

namespace testsupport {
namespace {

int started_cases = 0;

struct StartedCases : public doctest::IReporter {
  explicit StartedCases(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_start(const doctest::TestCaseData&) override { ++started_cases; }
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

REGISTER_LISTENER("started_cases", 0, StartedCases);

bool filters_by_name(int argc, const char* const* argv) {
  constexpr std::array<std::string_view, 4> kNameFilters = {"--test-case=", "-tc=", "--dt-test-case=",
                                                            "--dt-tc="};
  for (int i = 1; i < argc; ++i) {
    const std::string_view argument = argv[i];
    for (const std::string_view filter : kNameFilters) {
      if (argument.starts_with(filter)) return true;
    }
  }
  return false;
}

}  // namespace

int run_doctest(doctest::Context& context, int argc, const char* const* argv) {
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  if (started_cases == 0 && filters_by_name(argc, argv)) {
    std::fprintf(stderr,
                 "no test case matches this run's --test-case filter, so nothing was tested: check the "
                 "name (a test case whose name holds ';' cannot be run by its CTest entry, since CMake "
                 "splits the name there: rename it)\n");
    return 1;
  }
  return 0;
}

}  // namespace testsupport
