#include <backplane/backplane.h>

#include "tensor/element_types.h"
#include "tensor/host_address.h"
#include "tensor/shape.h"

#include <backplane/sdk/dispatch.hpp>

#include <fmt/format.h>

#include <cstring>

namespace bp {
namespace {

Tensor make_tensor(IntrusivePtr<StorageImpl> storage, IntArrayRef sizes, DimVector strides,
                   DType dtype) {
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, DimVector(sizes),
                                           std::move(strides), 0));
}

size_t checked_nbytes(int64_t elements, DType dtype, IntArrayRef sizes, const char* op) {
  if (element_size(dtype) == 0) {
    throw Error(
        fmt::format("{}: {} is not a dtype; use one of the bp::k* constants (bp::kFloat32, "
                    "...)",
                    op, static_cast<int>(dtype)));
  }
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(elements, static_cast<int64_t>(element_size(dtype)), &nbytes)) {
    throw Error(fmt::format("{}: a {} tensor of shape {} needs more bytes than fit in 64 bits", op,
                            dtype_name(dtype), detail::format_shape(sizes)));
  }
  return static_cast<size_t>(nbytes);
}

}  // namespace

Tensor empty(IntArrayRef sizes, DType dtype, Device device) {
  const int64_t numel = detail::checked_numel(sizes, "empty");
  auto storage = StorageImpl::allocate(device, checked_nbytes(numel, dtype, sizes, "empty"));
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes));
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, DType dtype, Device device) {
  const int64_t extent = detail::storage_extent(sizes, strides, "empty_strided");
  auto storage =
      StorageImpl::allocate(device, checked_nbytes(extent, dtype, sizes, "empty_strided"));
  return make_tensor(std::move(storage), sizes, DimVector(strides), dtype);
}

Tensor full(IntArrayRef sizes, const Scalar& value, DType dtype, Device device) {
  Tensor result = empty(sizes, dtype, device);
  result.fill_(value);
  return result;
}

Tensor zeros(IntArrayRef sizes, DType dtype, Device device) {
  return full(sizes, 0, dtype, device);
}

Tensor ones(IntArrayRef sizes, DType dtype, Device device) { return full(sizes, 1, dtype, device); }

// Written on the host without a kernel, so that wrapped numbers need no cpu plugin.
Tensor scalar_tensor(const Scalar& value, DType dtype, Device device) {
  Tensor host = empty({}, dtype, Device::cpu());
  plugin::visit(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    *detail::host_address<T>(host) = value.to<T>();
  });
  return host.to(device);
}

Tensor from_blob(void* data, IntArrayRef sizes, DType dtype) {
  return from_blob(data, sizes, detail::contiguous_strides(sizes), dtype);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype) {
  const int64_t extent = detail::storage_extent(sizes, strides, "from_blob");
  if (data == nullptr && extent > 0) {
    throw Error(
        fmt::format("from_blob: the data pointer is null, but shape {} has {} elements; "
                    "pass the address of the data",
                    detail::format_shape(sizes), detail::checked_numel(sizes, "from_blob")));
  }
  auto storage = StorageImpl::borrow_host(data, checked_nbytes(extent, dtype, sizes, "from_blob"));
  return make_tensor(std::move(storage), sizes, DimVector(strides), dtype);
}

template <typename T>
Tensor from_vector(const std::vector<T>& values, IntArrayRef sizes) {
  const int64_t numel = detail::checked_numel(sizes, "from_vector");
  if (numel != static_cast<int64_t>(values.size())) {
    throw Error(fmt::format("from_vector: {} values do not fill shape {}, which holds {}",
                            values.size(), detail::format_shape(sizes), numel));
  }
  Tensor result = empty(sizes, detail::dtype_of<T>(), Device::cpu());
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> packs bits
    auto* out = detail::host_address<bool>(result);
    for (size_t i = 0; i < values.size(); ++i) out[i] = values[i];
  } else if (!values.empty()) {
    std::memcpy(detail::host_address(result), values.data(), values.size() * sizeof(T));
  }
  return result;
}

template Tensor from_vector(const std::vector<float>&, IntArrayRef);
template Tensor from_vector(const std::vector<double>&, IntArrayRef);
template Tensor from_vector(const std::vector<Half>&, IntArrayRef);
template Tensor from_vector(const std::vector<BFloat16>&, IntArrayRef);
template Tensor from_vector(const std::vector<int8_t>&, IntArrayRef);
template Tensor from_vector(const std::vector<uint8_t>&, IntArrayRef);
template Tensor from_vector(const std::vector<int32_t>&, IntArrayRef);
template Tensor from_vector(const std::vector<int64_t>&, IntArrayRef);
template Tensor from_vector(const std::vector<bool>&, IntArrayRef);

}  // namespace bp
