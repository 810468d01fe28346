// bp::distributed::describe(): what bp-info shows of the collectives.
#include <backplane/backplane.h>
#include <backplane/device_collectives.h>
#include <backplane/distributed.h>

#include <mpi.h>
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include <fmt/format.h>

#include <optional>

namespace bp::distributed {

namespace {

std::string mpi_library() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  if (MPI_Get_library_version(version, &length) != MPI_SUCCESS) return "unknown";
  const std::string whole(version, static_cast<size_t>(length));
  return whole.substr(0, whole.find_first_of("\n,"));
}

std::string cuda_awareness() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() != 0
             ? "CUDA-aware MPI: yes, but CUDA tensors still go through host memory"
             : "CUDA-aware MPI: no";
#else
  return "CUDA-aware MPI: the MPI library cannot say";
#endif
}

}  // namespace

std::vector<std::string> describe() {
  std::vector<std::string> lines{fmt::format("MPI: {}", mpi_library()), cuda_awareness()};
  std::optional<Options> options;
  try {
    options = options_from_environment();
  } catch (const Error& error) {
    lines.push_back(error.what());
  }
  for (const Device& device : bp::devices()) {
    if (device.is_cpu()) {
      lines.push_back(fmt::format("{}: contiguous tensors handed to MPI in place", device.str()));
      continue;
    }
    const std::optional<DeviceCollectives> collectives = DeviceCollectives::of(device);
    if (!collectives) {
      lines.push_back(
          fmt::format("{}: staged through host memory (the backend has no "
                      "collectives of its own)",
                      device.str()));
    } else if (options && !options->device_collectives) {
      lines.push_back(
          fmt::format("{}: staged through host memory "
                      "(BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES=0)",
                      device.str()));
    } else {
      lines.push_back(
          fmt::format("{}: through {}'s own collectives (dtypes it cannot reduce "
                      "are staged through host memory)",
                      device.str(), collectives->backend()));
    }
  }
  return lines;
}

}  // namespace bp::distributed
