// The suites' main: doctest's, through run_doctest.
#include "doctest_runner.h"

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  return testsupport::run_doctest(context, argc, argv);
}
