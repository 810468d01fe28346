#include "runtime/nccl_collectives.h"

#include "runtime/device_guard.h"
#include "runtime/runtime.h"

#include <backplane/sdk/dtype_set.hpp>
#include <backplane/sdk/status.hpp>
#include <backplane/sdk/tensor_view.hpp>

#include <dlfcn.h>
#include <nccl.h>

#include <cstring>
#include <optional>
#include <string_view>

namespace bp::cuda {

namespace {

// The NCCL functions the plugin calls, from the library found at run time.
struct Nccl {
  decltype(&ncclGetVersion) get_version;
  decltype(&ncclGetErrorString) error_string;
  decltype(&ncclGetUniqueId) get_unique_id;
  decltype(&ncclCommInitRank) comm_init_rank;
  decltype(&ncclCommDestroy) comm_destroy;
  decltype(&ncclAllReduce) all_reduce;
  decltype(&ncclBroadcast) broadcast;
  decltype(&ncclAllGather) all_gather;
  decltype(&ncclReduceScatter) reduce_scatter;
  std::string version;
};

struct Loaded {
  std::optional<Nccl> nccl;
  std::string status;
};

template <typename Function>
bool resolve(void* library, const char* name, Function& function) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  return function != nullptr;
}

Loaded load() {
  void* library = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* reason = dlerror();
    return {std::nullopt, std::string("no NCCL (") + (reason ? reason : "libnccl.so.2 not found") +
                              "): collectives go through host memory"};
  }
  Nccl nccl{};
  const bool complete = resolve(library, "ncclGetVersion", nccl.get_version) &&
                        resolve(library, "ncclGetErrorString", nccl.error_string) &&
                        resolve(library, "ncclGetUniqueId", nccl.get_unique_id) &&
                        resolve(library, "ncclCommInitRank", nccl.comm_init_rank) &&
                        resolve(library, "ncclCommDestroy", nccl.comm_destroy) &&
                        resolve(library, "ncclAllReduce", nccl.all_reduce) &&
                        resolve(library, "ncclBroadcast", nccl.broadcast) &&
                        resolve(library, "ncclAllGather", nccl.all_gather) &&
                        resolve(library, "ncclReduceScatter", nccl.reduce_scatter);
  if (!complete) {
    return {std::nullopt,
            "no NCCL (libnccl.so.2 lacks a function the plugin calls): collectives go through "
            "host memory"};
  }
  int version = 0;
  if (nccl.get_version(&version) != ncclSuccess) version = 0;
  // NCCL numbers its versions major * 10000 + minor * 100 + patch from 2.9 on.
  nccl.version = "NCCL " + std::to_string(version / 10000) + "." +
                 std::to_string(version / 100 % 100) + "." + std::to_string(version % 100);
  return {nccl, nccl.version};
}

const Loaded& loaded() {
  static const Loaded result = load();
  return result;
}

const Nccl& nccl() { return *loaded().nccl; }

void check_nccl(ncclResult_t result, std::string_view action) {
  if (result == ncclSuccess) return;
  throw plugin::Error(BP_STATUS_DEVICE_ERROR,
                      std::string(action) + ": " + nccl().error_string(result));
}

struct Communicator {
  ncclComm_t comm;
  int device;
};

Communicator& as_communicator(bp_communicator communicator) {
  return *reinterpret_cast<Communicator*>(communicator);
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::Float32: return ncclFloat32;
    case DType::Float64: return ncclFloat64;
    case DType::Float16: return ncclFloat16;
    case DType::BFloat16: return ncclBfloat16;
    case DType::Int8: return ncclInt8;
    case DType::UInt8:
    case DType::Bool: return ncclUint8;  // moved only: Bool is not among the reducible dtypes
    case DType::Int32: return ncclInt32;
    case DType::Int64: return ncclInt64;
  }
  throw plugin::Error(BP_STATUS_UNIMPLEMENTED, "NCCL has no type for this dtype");
}

ncclRedOp_t nccl_op(bp_reduction reduction) {
  switch (reduction) {
    case BP_REDUCTION_SUM: return ncclSum;
    case BP_REDUCTION_MAX: return ncclMax;
    case BP_REDUCTION_MIN: return ncclMin;
  }
  throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                      "unknown reduction " + std::to_string(static_cast<int>(reduction)));
}

// Queues `call` (a function of the device's stream) on the communicator's device and waits for
// it: the collective follows the kernels queued before it, and its results are there when the
// function returns.
template <typename Call>
void run_on_stream(const Communicator& communicator, std::string_view what, Call&& call) {
  const DeviceGuard guard(communicator.device);
  Device& device = Runtime::get().device(communicator.device);
  check_nccl(call(device.stream()), std::string(what) + " on " + device.label());
  device.synchronize();
}

bp_status make_communicator_id(void* id) {
  return plugin::guard([&] {
    ncclUniqueId unique{};
    check_nccl(nccl().get_unique_id(&unique), "making an NCCL unique id");
    std::memcpy(id, &unique, sizeof unique);
  });
}

bp_status communicator_create(int32_t device, int32_t rank, int32_t size, const void* id,
                              bp_communicator* communicator) {
  return plugin::guard([&] {
    Runtime::get().device(device);  // checks the index
    ncclUniqueId unique{};
    std::memcpy(&unique, id, sizeof unique);
    const DeviceGuard guard(device);
    ncclComm_t comm = nullptr;
    check_nccl(nccl().comm_init_rank(&comm, size, unique, rank),
               "creating an NCCL communicator for rank " + std::to_string(rank) + " of " +
                   std::to_string(size) + " on cuda:" + std::to_string(device));
    *communicator = reinterpret_cast<bp_communicator>(new Communicator{comm, device});
  });
}

void communicator_destroy(bp_communicator communicator) {
  Communicator* owned = &as_communicator(communicator);
  (void)nccl().comm_destroy(owned->comm);
  delete owned;
}

bp_status all_reduce(bp_communicator communicator, DLTensor* tensor, bp_reduction reduction) {
  return plugin::guard([&] {
    const plugin::TensorView view(tensor);
    void* data = view.data<char>();
    run_on_stream(as_communicator(communicator), "all_reduce", [&](cudaStream_t stream) {
      return nccl().all_reduce(data, data, static_cast<size_t>(view.numel()),
                               nccl_type(view.dtype()), nccl_op(reduction),
                               as_communicator(communicator).comm, stream);
    });
  });
}

bp_status broadcast(bp_communicator communicator, DLTensor* tensor, int32_t root) {
  return plugin::guard([&] {
    const plugin::TensorView view(tensor);
    void* data = view.data<char>();
    run_on_stream(as_communicator(communicator), "broadcast", [&](cudaStream_t stream) {
      return nccl().broadcast(data, data, static_cast<size_t>(view.numel()),
                              nccl_type(view.dtype()), root, as_communicator(communicator).comm,
                              stream);
    });
  });
}

bp_status all_gather(bp_communicator communicator, const DLTensor* input, DLTensor* output) {
  return plugin::guard([&] {
    const plugin::TensorView in(input), out(output);
    run_on_stream(as_communicator(communicator), "all_gather", [&](cudaStream_t stream) {
      return nccl().all_gather(in.data<char>(), out.data<char>(), static_cast<size_t>(in.numel()),
                               nccl_type(in.dtype()), as_communicator(communicator).comm, stream);
    });
  });
}

bp_status reduce_scatter(bp_communicator communicator, const DLTensor* input, DLTensor* output,
                         bp_reduction reduction) {
  return plugin::guard([&] {
    const plugin::TensorView in(input), out(output);
    run_on_stream(as_communicator(communicator), "reduce_scatter", [&](cudaStream_t stream) {
      return nccl().reduce_scatter(in.data<char>(), out.data<char>(),
                                   static_cast<size_t>(out.numel()), nccl_type(out.dtype()),
                                   nccl_op(reduction), as_communicator(communicator).comm, stream);
    });
  });
}

}  // namespace

const bp_collectives* nccl_collectives() {
  if (!loaded().nccl) return nullptr;
  static const bp_collectives table = [] {
    bp_collectives t{};
    t.struct_size = sizeof(bp_collectives);
    t.reducible_dtypes = plugin::kAllButBoolDTypeSet.bits;
    t.communicator_id_size = sizeof(ncclUniqueId);
    t.make_communicator_id = make_communicator_id;
    t.communicator_create = communicator_create;
    t.communicator_destroy = communicator_destroy;
    t.all_reduce = all_reduce;
    t.broadcast = broadcast;
    t.all_gather = all_gather;
    t.reduce_scatter = reduce_scatter;
    return t;
  }();
  return &table;
}

std::string nccl_status() { return loaded().status; }

}  // namespace bp::cuda
