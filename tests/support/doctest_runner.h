// doctest's run for the suites' mains. CTest runs each test case on its own, through
// --test-case=<its name> (doctest_discover_tests), and some entries run chosen cases through
// patterns. Every pattern of a --test-case filter must match a test case that ran: otherwise the
// run fails instead of passing with less tested than it names, as it would for a name the filter
// cannot reach (one holding ';', where CMake splits a list, or a comma left unescaped) or for a
// pattern left behind by a renamed case.
#pragma once

#include <doctest/doctest.h>

namespace testsupport {

// A doctest listener (REGISTER_LISTENER) that hears only test_case_start, which it must define:
// doctest's IReporter has every other event pure virtual too.
class TestCaseStartListener : public doctest::IReporter {
 public:
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};

// context.run()'s result; 1, naming the patterns, where a --test-case pattern in argv matched no
// test case that ran.
int run_doctest(doctest::Context& context, int argc, const char* const* argv);

}  // namespace testsupport
