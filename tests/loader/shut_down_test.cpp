// An op that comes after the plugins shut down at exit (from another thread still running, or a
// static destructor) is told that its backend has shut down, not that the backend lacks the op.
#include "child_process.h"
#include "fixtures.h"

#include <doctest/doctest.h>

#include <string>

using loader_test::contains;
using test_support::ChildResult;

TEST_CASE("an op after the plugins shut down at exit says that its backend has shut down") {
  const ChildResult result =
      test_support::run_child({EXIT_PROBE_EXECUTABLE}, {{"BACKPLANE_BACKENDS", "cpu"}});
  INFO("stderr: ", result.err);
  CHECK(result.exit_code == 0);
  CHECK(result.out ==
        "add.out cannot run on cpu: backend 'cpu' has shut down because the process is "
        "exiting. Let ops finish before it exits: join the threads that run them before main "
        "returns or exit is called\n");
  CHECK_FALSE(contains(result.out, "does not implement"));
}
