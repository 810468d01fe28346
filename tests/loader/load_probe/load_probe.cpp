// load_probe PATH...: loads each file with bp::load_plugin, in order, printing "loaded <name>"
// or "failed: <message>" for each on a line of its own, then adds two tensors on the host and
// prints "host works". The loader tests run it in a child process for files that must be
// refused without harming the process that tries them.
#include <backplane/backplane.h>

#include <cstdio>
#include <vector>

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    try {
      std::printf("loaded %s\n", bp::load_plugin(argv[i]).name.c_str());
    } catch (const bp::Error& error) {
      std::printf("failed: %s\n", error.what());
    }
    std::fflush(stdout);
  }
  const bp::Tensor sum = bp::add(bp::ones({2}), bp::ones({2}));
  if (sum.to_vector<float>() != std::vector<float>{2, 2}) return 1;
  std::printf("host works\n");
  return 0;
}
