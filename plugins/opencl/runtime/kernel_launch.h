// Launching a kernel: the tensor's buffer and device, arguments collected in kernel order,
// work sizes, and the enqueue itself.
#pragma once

#include "kernels/layout.h"
#include "kernels/scalar_args.h"
#include "runtime/cl_call.h"
#include "runtime/device.h"

#include <backplane/sdk/tensor_view.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace bp::opencl {

// The device a tensor lives on.
Device& device_of(const TensorView& view);

// A tensor's buffer (DLTensor::data is its cl_mem) and the element offset of its first element.
struct Buffer {
  cl_mem mem = nullptr;
  int64_t base = 0;
};
Buffer buffer_of(const TensorView& view);

// A read-only buffer holding `values`, tables that kernels read (pooling windows, an index's
// positions); `what` names it in an error. Its owner may release it once the kernels that read it
// are queued: OpenCL keeps it until they have run.
OwnedBuffer upload_table(Device& device, std::span<const int64_t> values, std::string_view what);

// The elements of an Int64 tensor (indices, targets) in row-major order, read back to the host;
// this waits for the device. `what` names it in an error.
std::vector<int64_t> read_int64_elements(const TensorView& view, std::string_view what);

// An operand of an elementwise kernel: its buffer and its strides over the shape walked.
struct Operand {
  Buffer buffer;
  std::span<const int64_t> strides;
};
Operand operand_of(const TensorView& view);

// Arguments in the order a kernel declares its parameters. The group helpers add the parameter
// groups of kernels/groups.cl (GROUP_PARAMS, GROUPED, ...); launch_elementwise adds those of
// elementwise kernels.
class KernelArgs {
 public:
  template <typename T>
  KernelArgs& add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= sizeof(Arg::bytes));
    Arg& arg = args_.emplace_back();
    std::memcpy(arg.bytes.data(), &value, sizeof value);
    arg.size = sizeof value;
    return *this;
  }
  KernelArgs& add(const ScalarArg& scalar);
  KernelArgs& add(const Buffer& buffer);  // its mem, then its base
  KernelArgs& append(const KernelArgs& more);

  // GROUP_PARAMS, then operands by how they are addressed.
  KernelArgs& add_group_params(const GroupShape& shape);
  KernelArgs& add_grouped(const Buffer& buffer, const GroupShape& shape, size_t operand);
  KernelArgs& add_per_group(const Buffer& buffer, const GroupShape& shape, size_t operand);
  KernelArgs& add_per_member(const Buffer& buffer, const GroupShape& shape, size_t operand);

  struct Arg {
    size_t size = 0;
    std::array<unsigned char, sizeof(Dims8)> bytes{};
  };
  const std::vector<Arg>& args() const { return args_; }

 private:
  std::vector<Arg> args_;
};

struct WorkSize {
  cl_uint dims = 1;
  std::array<size_t, 3> global{1, 1, 1};
  std::array<size_t, 3> local{1, 1, 1};
};

// How many blocks of `block` cover `extent`: the work-items of kernels that give each a block.
inline size_t blocks_covering(int64_t extent, int64_t block) {
  return static_cast<size_t>((extent + block - 1) / block);
}

// One work-item per element, in work-groups of the device's work-group size.
WorkSize elementwise_work(const Device& device, int64_t n);
// LANES x SLOTS work-groups for a group kernel: many lanes per group for large groups, one for
// small ones, and one on a CPU-shaped device whose compute units the groups fill (see
// kernels/groups.cl).
WorkSize group_work(const Device& device, int64_t groups, int64_t group_size);
inline WorkSize group_work(const Device& device, const GroupShape& shape) {
  return group_work(device, shape.groups(), shape.group_size());
}

// A side-by-side group kernel (kernels/groups.cl) and its work, for a CPU-shaped device: a
// work-item per tile of adjacent groups along the innermost kept dim, where every one of
// `side_by_side_operands` (indices into the shape's strides) lays the groups of that dim next to
// each other (stride 1). Tiles of 64 groups (the kernel `<kernel>_wide`) where that dim holds 64
// or more, else of 8 (`<kernel>`) where it holds 8 or more; nothing where it holds fewer, or
// where the tiles would not give each compute unit one at least.
struct SideBySideLaunch {
  std::string kernel;
  WorkSize work;
};
std::optional<SideBySideLaunch> side_by_side_launch(
    const Device& device, const GroupShape& shape, std::string_view kernel,
    std::initializer_list<size_t> side_by_side_operands);

// Sets the arguments of `kernel` in `program` and enqueues it on the device's queue.
void launch(Device& device, cl_program program, const char* kernel, const KernelArgs& args,
            const WorkSize& work);

// Whether an elementwise kernel's body uses the element's index i itself (arange), which must
// then number all elements in one launch.
enum class ElementIndex { Unused, Used };

// Whether an elementwise kernel also has a dense form taking 8 elements per work-item as one
// vector (name_dense8, MATH_KERNEL in kernels/elementwise.cl), which CPU devices run.
enum class DenseVectors { No, Yes };

// Runs an elementwise kernel (see ELEMENTWISE_KERNEL in kernels/common.cl) over `sizes`, which
// every operand's strides span: its dense form where all operands are dense (and the index is
// unused; the vector form on a CPU device where the kernel has one), else its strided form,
// once per index of any dimensions beyond the kernel's; `tail` follows the operands.
void launch_elementwise(Device& device, cl_program program, const char* kernel, std::string_view op,
                        std::span<const int64_t> sizes, const std::vector<Operand>& operands,
                        const KernelArgs& tail = {}, ElementIndex index = ElementIndex::Unused,
                        DenseVectors vectors = DenseVectors::No);

}  // namespace bp::opencl
