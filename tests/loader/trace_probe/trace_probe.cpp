// trace_probe N [--remove-trace-folder | --skip-exit-handlers | --span]: N additions on one
// thread and,
// at the same time, N multiplications on another, then one softmax on the main thread, all on
// the host; the trace test runs it with BACKPLANE_TRACE set and reads the trace it leaves at
// exit. With --remove-trace-folder, the folder BACKPLANE_TRACE names is removed before exit, so
// that the trace cannot be written; with --skip-exit-handlers, it ends as a crashed process
// does, without writing the trace; with --span, it also keeps a span of other work
// (bp::trace_span) around the softmax, with arguments that JSON must escape.
#include <backplane/backplane.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <thread>

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) return 2;
  const long count = std::atol(argv[1]);
  const bp::Tensor a = bp::ones({16}), b = bp::ones({16});
  std::thread adding([&] {
    for (long i = 0; i < count; ++i) bp::add(a, b);
  });
  std::thread multiplying([&] {
    for (long i = 0; i < count; ++i) bp::mul(a, b);
  });
  adding.join();
  multiplying.join();
  const std::string_view flag = argc == 3 ? argv[2] : "";
  const auto before_softmax = std::chrono::steady_clock::now();
  bp::softmax(a, 0);
  if (flag == "--span") {
    bp::trace_span("all_reduce", "collective", before_softmax,
                   {{"tensor", "Float [16]"}, {"outcome", "a \"quoted\" \\ word"}});
  }
  if (flag == "--remove-trace-folder") {
    std::filesystem::remove_all(
        std::filesystem::path(std::getenv("BACKPLANE_TRACE")).parent_path());
  }
  if (flag == "--skip-exit-handlers") std::_Exit(0);
  return 0;
}
