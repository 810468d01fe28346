// Building programs through the disk cache on a real OpenCL device: a second context (as a
// second process would) loads the binary instead of compiling, a damaged or stale entry is
// rebuilt, an unwritable cache folder only warns, and a compile error carries the build log.
// Skipped where no OpenCL device exists.
#include "runtime/cl_call.h"
#include "runtime/program_builder.h"
#include "temporary_folder.h"

#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

namespace {

using bp::opencl::check_cl;
using bp::opencl::OwnedBuffer;
using bp::opencl::OwnedContext;
using bp::opencl::OwnedKernel;
using bp::opencl::OwnedQueue;
using bp::opencl::ProgramBuilder;
using bp::opencl::ProgramCache;
using test_support::TemporaryFolder;

const std::string kSource = "__kernel void twice(__global int* p) { p[get_global_id(0)] *= 2; }\n";
const std::string kIdentity = "device: test device\ndriver version: 1";

// The first device of the first platform, or null when there is none.
cl_device_id first_device() {
  cl_platform_id platform = nullptr;
  cl_uint platforms = 0;
  if (clGetPlatformIDs(1, &platform, &platforms) != CL_SUCCESS || platforms == 0) return nullptr;
  cl_device_id device = nullptr;
  cl_uint devices = 0;
  if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, &devices) != CL_SUCCESS ||
      devices == 0) {
    return nullptr;
  }
  return device;
}

// One context and queue on the device: what one process has.
struct Session {
  explicit Session(cl_device_id id) : device(id) {
    cl_int error = CL_SUCCESS;
    context = OwnedContext(clCreateContext(nullptr, 1, &device, nullptr, nullptr, &error));
    check_cl(error, "clCreateContext");
    queue = OwnedQueue(clCreateCommandQueue(context.get(), device, 0, &error));
    check_cl(error, "clCreateCommandQueue");
  }

  ProgramBuilder builder(ProgramCache* cache, const std::string& identity = kIdentity) const {
    return ProgramBuilder(context.get(), device, identity, "the test device", cache);
  }

  // Runs twice() from `program` over {1, 2, 3, 4}.
  std::vector<cl_int> run_twice(cl_program program) const {
    std::vector<cl_int> values = {1, 2, 3, 4};
    cl_int error = CL_SUCCESS;
    const OwnedBuffer buffer(clCreateBuffer(context.get(), CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                            values.size() * sizeof(cl_int), values.data(), &error));
    check_cl(error, "clCreateBuffer");
    const OwnedKernel kernel(clCreateKernel(program, "twice", &error));
    check_cl(error, "clCreateKernel");
    cl_mem mem = buffer.get();
    check_cl(clSetKernelArg(kernel.get(), 0, sizeof mem, &mem), "clSetKernelArg");
    const size_t global = values.size();
    check_cl(clEnqueueNDRangeKernel(queue.get(), kernel.get(), 1, nullptr, &global, nullptr, 0,
                                    nullptr, nullptr),
             "clEnqueueNDRangeKernel");
    check_cl(clEnqueueReadBuffer(queue.get(), mem, CL_TRUE, 0, values.size() * sizeof(cl_int),
                                 values.data(), 0, nullptr, nullptr),
             "clEnqueueReadBuffer");
    return values;
  }

  cl_device_id device;
  OwnedContext context;
  OwnedQueue queue;
};

const std::vector<cl_int> kTwiced = {2, 4, 6, 8};

#define REQUIRE_OPENCL_DEVICE(device)                                   \
  const cl_device_id device = first_device();                           \
  if (device == nullptr) {                                              \
    MESSAGE("skipped: no OpenCL device (install an ICD such as PoCL)"); \
    return;                                                             \
  }

// The entry the builder filed: the only file in the folder.
std::filesystem::path only_entry(const std::filesystem::path& folder) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  return files[0];
}

}  // namespace

TEST_CASE("program builder: a cold cache compiles and files the binary and a warm one loads it") {
  REQUIRE_OPENCL_DEVICE(device);
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  {
    const Session first(device);
    ProgramBuilder builder = first.builder(&cache);
    cl_program program = builder.get("twice.cl", kSource, "");
    CHECK(builder.get("twice.cl", kSource, "") == program);  // once per context
    CHECK(builder.counts().compiled == 1);
    CHECK(builder.counts().loaded == 0);
    CHECK(first.run_twice(program) == kTwiced);
  }
  only_entry(folder.path());

  const Session second(device);
  ProgramBuilder builder = second.builder(&cache);
  cl_program program = builder.get("twice.cl", kSource, "");
  CHECK(builder.counts().compiled == 0);
  CHECK(builder.counts().loaded == 1);
  CHECK(second.run_twice(program) == kTwiced);
}

TEST_CASE("program builder: other options or source or driver miss the cache") {
  REQUIRE_OPENCL_DEVICE(device);
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  const Session session(device);
  session.builder(&cache).get("twice.cl", kSource, "");

  ProgramBuilder other_options = session.builder(&cache);
  other_options.get("twice.cl", kSource, "-DUNUSED=1");
  CHECK(other_options.counts().compiled == 1);

  ProgramBuilder other_source = session.builder(&cache);
  other_source.get("twice.cl", kSource + "// edited\n", "");
  CHECK(other_source.counts().compiled == 1);

  ProgramBuilder other_driver = session.builder(&cache, "device: test device\ndriver version: 2");
  other_driver.get("twice.cl", kSource, "");
  CHECK(other_driver.counts().compiled == 1);
}

TEST_CASE("program builder: a corrupted cache entry is rebuilt and filed again") {
  REQUIRE_OPENCL_DEVICE(device);
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  const Session session(device);
  session.builder(&cache).get("twice.cl", kSource, "");
  const std::filesystem::path entry = only_entry(folder.path());
  {
    std::fstream file(entry, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-16, std::ios::end);
    file.write("corrupted bytes!", 16);
  }
  ProgramBuilder rebuilt = session.builder(&cache);
  CHECK(session.run_twice(rebuilt.get("twice.cl", kSource, "")) == kTwiced);
  CHECK(rebuilt.counts().compiled == 1);
  CHECK(rebuilt.counts().loaded == 0);

  ProgramBuilder repaired = session.builder(&cache);
  repaired.get("twice.cl", kSource, "");
  CHECK(repaired.counts().loaded == 1);
}

TEST_CASE("program builder: an unwritable cache folder warns once and programs still build") {
  REQUIRE_OPENCL_DEVICE(device);
  TemporaryFolder folder;
  const std::filesystem::path blocker = folder.path() / "file";
  std::ofstream(blocker) << "x";
  std::vector<std::string> warnings;
  ProgramCache cache(blocker / "cache",
                     [&](const std::string& message) { warnings.push_back(message); });
  const Session session(device);
  ProgramBuilder builder = session.builder(&cache);
  CHECK(session.run_twice(builder.get("twice.cl", kSource, "")) == kTwiced);
  builder.get("twice.cl", kSource, "-DOTHER");
  CHECK(builder.counts().compiled == 2);
  CHECK(warnings.size() == 1);
}

TEST_CASE("program builder: a compile error reports the build log") {
  REQUIRE_OPENCL_DEVICE(device);
  TemporaryFolder folder;
  ProgramCache cache(folder.path());
  const Session session(device);
  ProgramBuilder builder = session.builder(&cache);
  const std::string broken = "__kernel void broken(__global int* p) { p[0] = undeclared_name; }\n";
  try {
    builder.get("broken.cl", broken, "");
    FAIL("a program with an error built");
  } catch (const bp::plugin::Error& e) {
    const std::string message = e.what();
    CHECK(e.code() == BP_STATUS_DEVICE_ERROR);
    CHECK_MESSAGE(message.find("broken.cl") != std::string::npos, message);
    CHECK_MESSAGE(message.find("build log") != std::string::npos, message);
    CHECK_MESSAGE(message.find("undeclared_name") != std::string::npos, message);
  }
  CHECK(std::filesystem::is_empty(folder.path()));
}
