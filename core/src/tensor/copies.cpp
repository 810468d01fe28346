// Copies: within a device through its copy_ kernel, between devices through the backends'
// memory functions. The copy ops of ops.yaml, and reading a tensor's values to the host.
#include <backplane/backplane.h>

#include <core_generated/CompositeFunctions.h>

#include "runtime/registry.h"
#include "tensor/copy_contiguous.h"
#include "tensor/element_types.h"

#include <fmt/format.h>

#include <cstring>

namespace bp {
namespace {

// The backend that must move a device's bytes, or nullptr when they are host addresses that
// memcpy reaches (the host itself and host-memory backends).
const detail::Backend* memory_owner(Device device) {
  if (device.is_cpu()) return nullptr;
  const detail::Backend* backend = detail::Registry::get().backend(device.type());
  if (!backend) {
    throw Error(ErrorCode::Internal,
                fmt::format("no backend is loaded for device type {}", device.type()));
  }
  return backend->uses_host_memory() ? nullptr : backend;
}

// Copies a contiguous tensor's bytes into a new contiguous tensor on `target`.
Tensor transfer_contiguous(const Tensor& source, Device target) {
  Tensor result = empty(source.sizes(), source.dtype(), target);
  detail::copy_contiguous(source, result);
  return result;
}

// The same values on another device, through the host when both devices have memory of their
// own on different backends.
Tensor transfer(const Tensor& source, Device target) {
  if (source.device().type() != target.type() && memory_owner(source.device()) &&
      memory_owner(target)) {
    return transfer_contiguous(source.contiguous(), Device::cpu()).to(target);
  }
  return transfer_contiguous(source.contiguous(), target);
}

template <typename T>
void check_element_type(const Tensor& t, const char* op) {
  constexpr DType wanted = detail::dtype_of<T>();
  if (t.dtype() != wanted) {
    throw Error(
        fmt::format("{}<{}>: the tensor's dtype is {}, whose element type is {}, not {}; "
                    "call {}<{}>() or convert first with .to({})",
                    op, detail::element_type_name(wanted), dtype_name(t.dtype()),
                    detail::element_type_name(t.dtype()), detail::element_type_name(wanted), op,
                    detail::element_type_name(t.dtype()), detail::dtype_constant_name(wanted)));
  }
}

}  // namespace

namespace detail {

void copy_contiguous(const Tensor& source, const Tensor& target) {
  const size_t nbytes = static_cast<size_t>(source.numel()) * source.element_size();
  if (nbytes == 0) return;
  // The one write into a storage that is not a kernel call, whose wrapper bumps the version.
  target.impl()->storage()->bump_version();
  const Backend* from = memory_owner(source.device());
  const Backend* to = memory_owner(target.device());
  const char* const source_data = static_cast<const char*>(source.impl()->storage()->data());
  const uint64_t source_offset =
      static_cast<uint64_t>(source.storage_offset()) * source.element_size();
  char* const target_data = static_cast<char*>(target.impl()->storage()->data());
  const uint64_t target_offset =
      static_cast<uint64_t>(target.storage_offset()) * target.element_size();
  if (!from && !to) {
    std::memcpy(target_data + target_offset, source_data + source_offset, nbytes);
  } else if (!from) {
    to->copy_host_to_device(target.device().index(), target_data, target_offset,
                            source_data + source_offset, nbytes);
  } else if (!to) {
    from->copy_device_to_host(source.device().index(), target_data + target_offset, source_data,
                              source_offset, nbytes);
  } else {
    // One backend: to() sends tensors between two backends with memory of their own through
    // the host. The plugin gets the destination's index.
    to->copy_device_to_device(target.device().index(), target_data, target_offset, source_data,
                              source_offset, nbytes);
  }
}

}  // namespace detail

namespace composite {

Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  return self.clone();
}

Tensor clone(const Tensor& self) {
  Tensor result = empty(self.sizes(), self.dtype(), self.device());
  result.copy_(self);
  return result;
}

// Copies between devices are synchronous: non_blocking is accepted, as PyTorch's callers pass
// it, and changes nothing.
Tensor to_device(const Tensor& self, Device device, std::optional<DType> dtype,
                 bool /*non_blocking*/, bool copy) {
  const bool converts = dtype && *dtype != self.dtype();
  if (self.device() == device && !converts) return copy ? self.clone() : self;
  // The narrower dtype is the one that crosses between devices.
  const bool convert_first = converts && element_size(*dtype) < self.element_size();
  Tensor result = convert_first ? self.to(*dtype) : self;
  if (result.device() != device) result = transfer(result, device);
  if (converts && !convert_first) result = result.to(*dtype);
  return result;
}

Tensor to_dtype(const Tensor& self, DType dtype, bool /*non_blocking*/, bool copy) {
  if (self.dtype() == dtype) return copy ? self.clone() : self;
  Tensor result = empty(self.sizes(), dtype, self.device());
  result.copy_(self);
  return result;
}

Tensor to_other(const Tensor& self, const Tensor& other, bool non_blocking, bool copy) {
  return to_device(self, other.device(), other.dtype(), non_blocking, copy);
}

}  // namespace composite

template <typename T>
std::vector<T> Tensor::to_vector() const {
  check_element_type<T>(*this, "to_vector");
  const Tensor host = cpu().contiguous();
  const auto numel = static_cast<size_t>(host.numel());
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits
    const bool* data = host.const_data_ptr<bool>();
    return std::vector<bool>(data, data + numel);
  } else {
    std::vector<T> values(numel);
    if (numel > 0) std::memcpy(values.data(), host.const_data_ptr(), numel * sizeof(T));
    return values;
  }
}

template <typename T>
T Tensor::item() const {
  check_element_type<T>(*this, "item");
  if (numel() != 1) {
    throw Error(
        fmt::format("item: the tensor has {} elements, but item reads exactly one; "
                    "use to_vector<{}>() for several",
                    numel(), detail::element_type_name(dtype())));
  }
  return to_vector<T>()[0];
}

#define BACKPLANE_INSTANTIATE_READS(T)                  \
  template std::vector<T> Tensor::to_vector<T>() const; \
  template T Tensor::item<T>() const;
BACKPLANE_INSTANTIATE_READS(float)
BACKPLANE_INSTANTIATE_READS(double)
BACKPLANE_INSTANTIATE_READS(Half)
BACKPLANE_INSTANTIATE_READS(BFloat16)
BACKPLANE_INSTANTIATE_READS(int8_t)
BACKPLANE_INSTANTIATE_READS(uint8_t)
BACKPLANE_INSTANTIATE_READS(int32_t)
BACKPLANE_INSTANTIATE_READS(int64_t)
BACKPLANE_INSTANTIATE_READS(bool)
#undef BACKPLANE_INSTANTIATE_READS

}  // namespace bp
