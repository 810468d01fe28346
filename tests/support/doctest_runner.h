// doctest's run for the suites' mains. CTest runs each test case on its own, through
// --test-case=<its name> (doctest_discover_tests); a run whose name filter matches no test case
// fails here instead of passing without running anything, as it would for a name that the filter
// cannot reach (one holding ';', where CMake splits a list).
#pragma once

#include <doctest/doctest.h>

namespace testsupport {

// context.run()'s result; 1, with a message, where argv filters test cases by name and none ran.
int run_doctest(doctest::Context& context, int argc, const char* const* argv);

}  // namespace testsupport
