// cpu_cache_probe N...: runs one float32 product (N x 3) @ (3 x 5) on the cpu backend for each
// argument, in order, then prints the backend's counters, one "name value" line each. The
// primitive cache tests run it in child processes with their own BACKPLANE_CPU_PRIMITIVE_CACHE.
#include <backplane/backplane.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const int64_t rows = std::stoll(argv[i]);
    bp::mm(bp::ones({rows, 3}), bp::ones({3, 5}));
  }
  for (const bp::BackendCounter& counter : bp::backend_counters("cpu")) {
    std::printf("%s %llu\n", counter.name.c_str(), static_cast<unsigned long long>(counter.value));
  }
  return 0;
}
