// exit_probe: adds two host tensors from an exit handler that runs after the plugins have shut
// down, as a thread still running ops while the process exits would, and prints the message of
// the bp::Error the addition throws (or "no error").
#include <backplane/backplane.h>

#include <cstdio>
#include <cstdlib>

namespace {

// Made in main, left for the exit handler; never freed, as the process is ending.
const bp::Tensor* g_operand = nullptr;

void add_after_shutdown() {
  try {
    bp::add(*g_operand, *g_operand);
    std::printf("no error\n");
  } catch (const bp::Error& error) {
    std::printf("%s\n", error.what());
  }
}

}  // namespace

int main() {
  // Registered before the plugins load, so it runs after the handler that shuts them down.
  std::atexit(add_after_shutdown);
  g_operand = new bp::Tensor(bp::ones({2}));
  return 0;
}
