// device_memory_probe: makes and drops tensors on the device of fixture_device_memory (found
// through BACKPLANE_PLUGIN_PATH), so that the caching allocator holds their blocks, and keeps one
// tensor alive past the plugins' shutdown at exit. The fixture says at shutdown how many of its
// blocks were not freed: the kept tensor's alone, when the core gave back what it cached.
#include <backplane/backplane.h>

namespace {

// Made before main, so destroyed after the exit handler that shuts the plugins down.
bp::Tensor kept;

}  // namespace

int main() {
  const bp::Device device("fixture_device_memory");
  for (int64_t elements : {256, 1024, 4096}) {
    const bp::Tensor dropped = bp::empty({elements}, bp::kFloat32, device);
  }
  kept = bp::empty({64}, bp::kFloat32, device);
  return 0;
}
