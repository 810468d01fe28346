// doctest's main, except that a run whose every test case was skipped (no GPU) exits with
// kSkipExitCode, which CTest reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include "cuda_test_support.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = context.run();
  if (context.shouldExit() || result != 0) return result;
  return cudatest::every_case_skipped() ? cudatest::kSkipExitCode : 0;
}
