// Without a GPU (or without a driver), the cuda plugin still loads: it lists no devices and
// says why, and every op of cuda.yaml is still registered for when a device appears.
#include "cuda_test_support.h"

#include "child_process.h"
#include "json_reader.h"

#include <algorithm>

namespace {

TEST_CASE("without a GPU, bp-info lists the cuda plugin with no devices and the reason") {
  if (!cudatest::cuda_devices().empty()) {
    cudatest::skip("this machine has a CUDA device");
    return;
  }
  const test_support::ChildResult result =
      test_support::run_child({BP_INFO_EXECUTABLE, "--json"}, {{"BACKPLANE_BACKENDS", "cuda"}});
  INFO("bp-info --json printed: " << result.out << result.err);
  REQUIRE(result.exit_code == 0);
  const loader_test::JsonValue json = loader_test::parse_json(result.out);
  const auto& plugins = json["plugins"].array();
  const auto cuda =
      std::find_if(plugins.begin(), plugins.end(),
                   [](const loader_test::JsonValue& p) { return p["name"].string() == "cuda"; });
  REQUIRE_MESSAGE(cuda != plugins.end(), "the cuda plugin did not load");
  CHECK((*cuda)["devices"].array().empty());
  const std::string& note = (*cuda)["device_note"].string();
  CHECK_MESSAGE(note.find("cudaGetDeviceCount failed: cuda") != std::string::npos, note);
  CHECK_MESSAGE(note.find("CUDA runtime") != std::string::npos, note);
  CHECK((*cuda)["missing_ops"].array().empty());
}

}  // namespace
