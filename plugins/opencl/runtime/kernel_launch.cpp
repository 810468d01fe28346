#include "runtime/kernel_launch.h"

#include "runtime/runtime.h"

#include <backplane/sdk/strided_loop.hpp>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <string>

namespace bp::opencl {

Device& device_of(const TensorView& view) { return Runtime::get().device(view.device().device_id); }

Buffer buffer_of(const TensorView& view) {
  const uint64_t element = element_size(view.dtype());
  if (view.byte_offset() % element != 0) {
    throw plugin::Error(BP_STATUS_INVALID_ARGUMENT,
                        "opencl: a tensor's byte offset " + std::to_string(view.byte_offset()) +
                            " is not a multiple of its element size " + std::to_string(element));
  }
  return {static_cast<cl_mem>(view.handle()), static_cast<int64_t>(view.byte_offset() / element)};
}

OwnedBuffer upload_table(Device& device, std::span<const int64_t> values, std::string_view what) {
  // OpenCL has no empty buffers: an empty table is one unread element.
  const int64_t unread = 0;
  const std::span<const int64_t> table = values.empty() ? std::span(&unread, 1) : values;
  cl_int error = CL_SUCCESS;
  OwnedBuffer buffer(clCreateBuffer(device.context(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                                    table.size_bytes(), const_cast<int64_t*>(table.data()),
                                    &error));
  check_cl(error, "uploading " + std::string(what) + " to " + device.label());
  return buffer;
}

std::vector<int64_t> read_int64_elements(const TensorView& view, std::string_view what) {
  if (view.numel() == 0) return {};
  // The elements the view spans, then its own in row-major order.
  int64_t span = 1;
  for (int64_t d = 0; d < view.dim(); ++d) span += (view.size(d) - 1) * view.stride(d);
  Device& device = device_of(view);
  const Buffer buffer = buffer_of(view);
  std::vector<int64_t> spanned(static_cast<size_t>(span));
  check_cl(clEnqueueReadBuffer(device.queue(), buffer.mem, CL_TRUE,
                               static_cast<size_t>(buffer.base) * sizeof(int64_t),
                               spanned.size() * sizeof(int64_t), spanned.data(), 0, nullptr,
                               nullptr),
           "reading " + std::string(what) + " from " + device.label());
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(view.numel()));
  const plugin::StridedLoop<1> loop(view.sizes(), {view.strides()});
  loop.for_each_row(
      [&](const plugin::Offsets<1>& start, const plugin::Offsets<1>& step, int64_t length) {
        for (int64_t k = 0; k < length; ++k) {
          values.push_back(spanned[static_cast<size_t>(start[0] + k * step[0])]);
        }
      });
  return values;
}

Operand operand_of(const TensorView& view) { return {buffer_of(view), view.strides()}; }

KernelArgs& KernelArgs::add(const ScalarArg& scalar) {
  Arg& arg = args_.emplace_back();
  std::memcpy(arg.bytes.data(), scalar.bytes.data(), scalar.size);
  arg.size = scalar.size;
  return *this;
}

KernelArgs& KernelArgs::add(const Buffer& buffer) { return add(buffer.mem).add(buffer.base); }

KernelArgs& KernelArgs::append(const KernelArgs& more) {
  args_.insert(args_.end(), more.args_.begin(), more.args_.end());
  return *this;
}

KernelArgs& KernelArgs::add_group_params(const GroupShape& shape) {
  return add(shape.groups())
      .add(shape.kept.ndim)
      .add(shape.kept.size)
      .add(shape.group_size())
      .add(shape.members.ndim)
      .add(shape.members.size);
}

KernelArgs& KernelArgs::add_grouped(const Buffer& buffer, const GroupShape& shape, size_t operand) {
  return add(buffer).add(shape.kept.strides.at(operand)).add(shape.members.strides.at(operand));
}

KernelArgs& KernelArgs::add_per_group(const Buffer& buffer, const GroupShape& shape,
                                      size_t operand) {
  return add(buffer).add(shape.kept.strides.at(operand));
}

KernelArgs& KernelArgs::add_per_member(const Buffer& buffer, const GroupShape& shape,
                                       size_t operand) {
  return add(buffer).add(shape.members.strides.at(operand));
}

WorkSize elementwise_work(const Device& device, int64_t n) {
  const size_t local = device.work_group_size();
  WorkSize work;
  work.global[0] = blocks_covering(n, static_cast<int64_t>(local)) * local;
  work.local[0] = local;
  return work;
}

WorkSize group_work(const Device& device, int64_t groups, int64_t group_size) {
  const size_t local = device.work_group_size();
  // Few distinct geometries, since some drivers (PoCL) compile a kernel per work-group size.
  // A CPU driver runs a work-group's work-items one after another between barriers, so with
  // enough groups to give every compute unit a full work-group, each work-item walks a group
  // alone, with no barriers.
  const bool groups_fill_device = groups >= static_cast<int64_t>(device.compute_units() * local);
  const size_t lanes = device.kernel_shape() == KernelShape::Cpu && groups_fill_device ? 1
                       : group_size >= 128                                             ? local
                       : group_size >= 16 ? std::min<size_t>(16, local)
                                          : 1;
  const size_t slots = local / lanes;
  const size_t needed = blocks_covering(groups, static_cast<int64_t>(slots));
  WorkSize work;
  work.dims = 2;
  work.local = {lanes, slots, 1};
  work.global = {lanes, std::clamp<size_t>(needed, 1, device.max_work_groups()) * slots, 1};
  return work;
}

std::optional<SideBySideLaunch> side_by_side_launch(
    const Device& device, const GroupShape& shape, std::string_view kernel,
    std::initializer_list<size_t> side_by_side_operands) {
  if (device.kernel_shape() != KernelShape::Cpu || shape.kept.ndim == 0) return std::nullopt;
  for (size_t operand : side_by_side_operands) {
    if (shape.kept.strides.at(operand)[0] != 1) return std::nullopt;
  }
  // groups.cl's tiles: 8 * TILE_OCTETS groups, and 8.
  constexpr std::pair<int64_t, std::string_view> kTiles[] = {{64, "_wide"}, {8, ""}};
  const int64_t across = shape.kept.size[0];
  for (const auto& [width, suffix] : kTiles) {
    const size_t tiles =
        static_cast<size_t>(shape.groups() / across) * blocks_covering(across, width);
    if (across < width || tiles < device.compute_units()) continue;
    SideBySideLaunch tiled{std::string(kernel) + std::string(suffix), {}};
    tiled.work.global[0] = tiles;
    return tiled;
  }
  return std::nullopt;
}

void launch(Device& device, cl_program program, const char* kernel_name, const KernelArgs& args,
            const WorkSize& work) {
  std::lock_guard lock(device.launch_mutex());
  cl_kernel kernel = device.kernel(program, kernel_name);
  for (size_t i = 0; i < args.args().size(); ++i) {
    const KernelArgs::Arg& arg = args.args()[i];
    check_cl(clSetKernelArg(kernel, static_cast<cl_uint>(i), arg.size, arg.bytes.data()),
             "setting argument " + std::to_string(i) + " of kernel " + kernel_name + " on " +
                 device.label());
  }
  check_cl(clEnqueueNDRangeKernel(device.queue(), kernel, work.dims, nullptr, work.global.data(),
                                  work.local.data(), 0, nullptr, nullptr),
           std::string("running kernel ") + kernel_name + " on " + device.label());
}

namespace {

// The arguments of an elementwise kernel's strided form before ndim and size, and its work
// (kernels/common.cl). On GPU-shaped devices, one work-item per element. On CPU-shaped ones, a
// few work-items per compute unit, so that the driver's threads balance, each taking tiles
// enough to pay for its start: tiles of whole rows, up to kTileElements, where every operand's
// innermost stride is 0 or 1, else kSteppingColumns wide, so that the tile's rows reuse the cache
// lines that an operand stepping through memory along a row touches.
struct StridedWork {
  KernelArgs leading;
  WorkSize work;
};

StridedWork strided_work(const Device& device, const WalkShape& shape) {
  StridedWork strided;
  if (device.kernel_shape() != KernelShape::Cpu) {
    strided.leading.add(shape.numel);
    strided.work = elementwise_work(device, shape.numel);
    return strided;
  }
  constexpr int64_t kTileElements = 4096;
  constexpr int64_t kSteppingColumns = 64;
  constexpr size_t kItemsPerComputeUnit = 4;
  const bool steps_through_memory =
      std::ranges::any_of(shape.strides, [](const Dims8& s) { return std::abs(s[0]) > 1; });
  const int64_t width = shape.size[0], height = shape.size[1];
  const int64_t columns = std::min(steps_through_memory ? kSteppingColumns : kTileElements, width);
  const int64_t rows = std::clamp<int64_t>(kTileElements / columns, 1, height);
  const int64_t tiles = shape.numel / (width * height) *
                        static_cast<int64_t>(blocks_covering(height, rows)) *
                        static_cast<int64_t>(blocks_covering(width, columns));
  const int64_t items = std::clamp<int64_t>(
      static_cast<int64_t>(blocks_covering(shape.numel, kTileElements)), 1,
      std::min(static_cast<int64_t>(device.compute_units() * kItemsPerComputeUnit), tiles));
  const auto span = static_cast<int64_t>(blocks_covering(tiles, items));
  strided.leading.add(tiles).add(span).add(rows).add(columns);
  strided.work.global[0] = blocks_covering(tiles, span);
  return strided;
}

// The strided form of an elementwise kernel over `shape`, with operand k's first element moved
// by shift[k]; once per index of the outer dimensions, if any.
void launch_strided(Device& device, cl_program program, const char* kernel, const WalkShape& shape,
                    const std::vector<Operand>& operands, std::vector<int64_t> shift,
                    const KernelArgs& tail) {
  const StridedWork strided = strided_work(device, shape);
  std::vector<int64_t> index(shape.outer.size(), 0);  // an odometer over the outer dimensions
  for (;;) {
    KernelArgs args = strided.leading;
    args.add(shape.ndim).add(shape.size);
    for (size_t k = 0; k < operands.size(); ++k) {
      const Buffer& buffer = operands[k].buffer;
      args.add(Buffer{buffer.mem, buffer.base + shift[k]}).add(shape.strides[k]);
    }
    launch(device, program, kernel, args.append(tail), strided.work);
    size_t d = shape.outer.size();
    for (;;) {
      if (d == 0) return;
      const OuterDim& dim = shape.outer[--d];
      if (++index[d] < dim.size) {
        for (size_t k = 0; k < shift.size(); ++k) shift[k] += dim.strides[k];
        break;
      }
      index[d] = 0;
      for (size_t k = 0; k < shift.size(); ++k) shift[k] -= dim.strides[k] * (dim.size - 1);
    }
  }
}

}  // namespace

void launch_elementwise(Device& device, cl_program program, const char* kernel, std::string_view op,
                        std::span<const int64_t> sizes, const std::vector<Operand>& operands,
                        const KernelArgs& tail, ElementIndex index, DenseVectors vectors) {
  OperandStrides strides;
  for (const Operand& operand : operands) strides.push_back(operand.strides);
  const WalkShape shape = collapse(sizes, strides, op, /*outer_allowed=*/true);
  if (shape.numel == 0) return;
  if (!all_dense(shape) || index == ElementIndex::Used) {
    launch_strided(device, program, kernel, shape, operands,
                   std::vector<int64_t>(operands.size(), 0), tail);
    return;
  }
  // Whole work-groups in the dense form, the rest in the strided one (whose i then restarts).
  const bool eight_per_item =
      vectors == DenseVectors::Yes && device.kernel_shape() == KernelShape::Cpu;
  const int64_t per_item = eight_per_item ? 8 : 1;
  const auto group = static_cast<int64_t>(device.work_group_size()) * per_item;
  const int64_t whole = shape.numel / group * group;
  if (whole > 0) {
    KernelArgs args;
    for (const Operand& operand : operands) args.add(operand.buffer);
    launch(device, program, (std::string(kernel) + (eight_per_item ? "_dense8" : "_dense")).c_str(),
           args.append(tail), elementwise_work(device, whole / per_item));
  }
  if (whole < shape.numel) {
    WalkShape rest;
    rest.numel = shape.numel - whole;
    rest.ndim = 1;
    rest.size.fill(1);
    rest.size[0] = rest.numel;
    rest.strides.assign(operands.size(), Dims8{1});
    launch_strided(device, program, kernel, rest, operands,
                   std::vector<int64_t>(operands.size(), whole), tail);
  }
}

}  // namespace bp::opencl
