// The suites' main (run_doctest), except that a run whose every test case was skipped (no GPU)
// exits with kSkipExitCode, which CTest reports as skipped.
#include "cuda_test_support.h"
#include "doctest_runner.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  const int result = testsupport::run_doctest(context, argc, argv);
  if (context.shouldExit() || result != 0) return result;
  return cudatest::every_case_skipped() ? cudatest::kSkipExitCode : 0;
}
