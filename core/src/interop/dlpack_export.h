// What to_dlpack hands out, as from_dlpack recognises it: a DLManagedTensor of Backplane's own
// comes back as a tensor on the same storage rather than as memory owned elsewhere.
#pragma once

#include <backplane/tensor.h>

#include <dlpack/dlpack.h>

namespace bp::detail {

// The manager context of a DLManagedTensor that to_dlpack made: the exported tensor's
// storage, dtype and layout.
struct ExportedTensor;

// `managed`'s context when to_dlpack made it, else nullptr. Valid until its deleter runs.
const ExportedTensor* exported_by_backplane(const DLManagedTensor& managed);
// A new tensor, without autograd history, on the storage `exported` keeps, with its layout.
Tensor alias_of_exported(const ExportedTensor& exported);

}  // namespace bp::detail
