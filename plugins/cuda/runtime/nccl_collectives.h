// The plugin's collectives (ABI 1.6) through NCCL, which is looked for when the plugin loads
// (libnccl.so.2, as the dynamic loader finds it) rather than linked: a machine without NCCL
// still loads the plugin, and bp::distributed then copies CUDA tensors through host memory.
#pragma once

#include <backplane/abi.h>

#include <string>

namespace bp::cuda {

// The collectives table, or null where NCCL cannot be loaded.
const bp_collectives* nccl_collectives();

// "NCCL 2.28.3", or why there is none, for the devices' descriptions.
std::string nccl_status();

}  // namespace bp::cuda
