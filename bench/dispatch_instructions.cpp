// dispatch_instructions N: N calls of bp::add on one-element float32 tensors on the host, and
// nothing else worth counting, for instruction counts that do not depend on the machine's load:
//
//   valgrind --tool=callgrind build/bin/dispatch_instructions 20000   (then 40000)
//
// The difference of the two totals over 20000 is the instructions one bp::add costs, meta step,
// allocation, dispatch and kernel included. See bench/README.md.
#include <backplane/backplane.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const long calls = argc == 2 ? std::strtol(argv[1], nullptr, 10) : 0;
  if (calls <= 0) {
    std::fprintf(stderr,
                 "usage: dispatch_instructions CALLS (a positive count of bp::add calls)\n");
    return 2;
  }
  const bp::Tensor a = bp::ones({1}), b = bp::ones({1});
  for (long i = 0; i < calls; ++i) bp::add(a, b);
  return 0;
}
