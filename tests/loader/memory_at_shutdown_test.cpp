// At exit the core gives a plugin back every block of its memory that it keeps cached, before
// the plugin's shutdown, so that a vendor's leak checker sees only blocks tensors still hold.
#include "child_process.h"
#include "fixtures.h"

#include <doctest/doctest.h>

using loader_test::contains;
using loader_test::fixture_path;

TEST_CASE("before a plugin shuts down, the core gives back every block of its memory it cached") {
  const test_support::ChildResult result =
      test_support::run_child({DEVICE_MEMORY_PROBE_EXECUTABLE},
                              {{"BACKPLANE_PLUGIN_PATH", fixture_path("fixture_device_memory")}});
  INFO("stderr: ", result.err);
  CHECK(result.exit_code == 0);
  // The probe dropped three tensors, whose blocks were cached, and kept one.
  CHECK(contains(result.err, "fixture_device_memory: shutdown with 1 block(s) not freed\n"));
}
