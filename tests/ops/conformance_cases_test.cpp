// The conformance kit's cases (conformance/src/samples_*.cpp), which bp-conformance runs for
// vendors, run here too: every kernel op of ops.yaml has them, and they pass on every loaded
// device for every op its backend provides.
#include "op_test_support.h"

#include <backplane/conformance/kernel_op_table.h>
#include <backplane/conformance/op_info.h>
#include <backplane/conformance/runner.h>

namespace optest {
namespace {

TEST_CASE("conformance cases: every kernel op of ops.yaml has a sample generator") {
  for (const bp::conformance::KernelOp& op : bp::conformance::kernel_op_table()) {
    CHECK_MESSAGE(bp::conformance::find_op_info(op.name) != nullptr,
                  op.name << " has no sample generator in conformance/src/samples_*.cpp");
  }
}

TEST_CASE("conformance cases: every op passes on every loaded device that provides it") {
  for (const Device device : test_devices()) {
    for (const bp::conformance::KernelOp& op : bp::conformance::kernel_op_table()) {
      if (!provides(device, std::string(op.name))) continue;
      CAPTURE(device.str());
      CAPTURE(op.name);
      const bp::conformance::OpResult result = bp::conformance::run_op(op, device);
      CHECK_MESSAGE(result.status != bp::conformance::OpStatus::Fail,
                    result.failed << " of " << result.cases << " cases fail; worst: "
                                  << result.worst->case_name << ": " << result.worst->error);
      CHECK(result.cases > 0);
    }
  }
}

}  // namespace
}  // namespace optest
