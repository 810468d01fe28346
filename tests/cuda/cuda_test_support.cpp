#include "cuda_test_support.h"

#include "doctest_runner.h"

#include <cmath>
#include <set>

namespace cudatest {
namespace {

std::set<std::string> started_cases;
std::set<std::string> skipped_cases;
std::string current_case;

// Follows which test cases start, so that skip() knows which one it ends.
struct CaseTracker : public testsupport::TestCaseStartListener {
  explicit CaseTracker(const doctest::ContextOptions&) {}
  void test_case_start(const doctest::TestCaseData& data) override {
    current_case = data.m_name;
    started_cases.insert(current_case);
  }
};

REGISTER_LISTENER("cuda_case_tracker", 1, CaseTracker);

const bp::PluginInfo* cuda_plugin(const bp::RuntimeInfo& info) {
  for (const bp::PluginInfo& plugin : info.plugins) {
    if (plugin.name == "cuda") return &plugin;
  }
  return nullptr;
}

}  // namespace

std::vector<bp::Device> cuda_devices() {
  std::vector<bp::Device> found;
  for (const bp::Device& device : bp::devices()) {
    if (device.type_name() == "cuda") found.push_back(device);
  }
  return found;
}

std::string no_devices_reason() {
  const bp::RuntimeInfo info = bp::runtime_info();
  if (const bp::PluginInfo* plugin = cuda_plugin(info)) return plugin->device_note;
  std::string reason = "the cuda plugin did not load";
  for (const bp::PluginFailure& failure : info.failures)
    reason += "; " + failure.path + ": " + failure.reason;
  return reason;
}

void skip(const std::string& why) {
  MESSAGE("skipped: " << why);
  skipped_cases.insert(current_case);
}

bool every_case_skipped() { return !started_cases.empty() && skipped_cases == started_cases; }

std::vector<double> values_of(const bp::Tensor& t) {
  return t.cpu().to(bp::kFloat64).contiguous().to_vector<double>();
}

void check_close(const bp::Tensor& actual, const bp::Tensor& expected, double tolerance) {
  REQUIRE(actual.sizes().vec() == expected.sizes().vec());
  REQUIRE(actual.dtype() == expected.dtype());
  const std::vector<double> a = values_of(actual);
  const std::vector<double> e = values_of(expected);
  size_t mismatches = 0;
  std::string first;
  for (size_t i = 0; i < a.size(); ++i) {
    const bool same = std::isnan(e[i]) ? std::isnan(a[i])
                                       : a[i] == e[i] || std::abs(a[i] - e[i]) <=
                                                             tolerance * (1 + std::abs(e[i]));
    if (!same && mismatches++ == 0) {
      first = "[" + std::to_string(i) + "] " + std::to_string(a[i]) + " != " + std::to_string(e[i]);
    }
  }
  CHECK_MESSAGE(mismatches == 0, mismatches << " of " << a.size() << " differ, first " << first);
}

}  // namespace cudatest
