#include "signature.h"

#include <fmt/format.h>

#include <algorithm>

namespace bp::distributed::detail {

std::string_view name_of(Collective collective) {
  switch (collective) {
    case Collective::AllReduce: return "all_reduce";
    case Collective::Broadcast: return "broadcast";
    case Collective::AllGather: return "all_gather";
    case Collective::ReduceScatter: return "reduce_scatter";
    case Collective::Barrier: return "barrier";
  }
  return "an unknown collective";
}

std::string_view name_of(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Mean: return "mean";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
  }
  return "an unknown reduction";
}

std::string_view name_of(DataPath path) {
  switch (path) {
    case DataPath::InPlace: return "MPI, in place";
    case DataPath::StagedThroughHost: return "MPI, staged through host memory";
    case DataPath::DeviceCollectives: return "the device backend's collectives";
  }
  return "an unknown path";
}

Signature Signature::of(int64_t sequence, Collective collective, const Tensor* tensor,
                        std::optional<ReduceOp> op, int root) {
  Signature signature;
  signature.sequence = sequence;
  signature.collective = collective;
  signature.reduce_op = op ? static_cast<int32_t>(*op) : -1;
  signature.root = root;
  if (tensor != nullptr) {
    signature.dtype = static_cast<int32_t>(tensor->dtype());
    signature.dim = static_cast<int32_t>(tensor->dim());
    signature.numel = tensor->numel();
    const IntArrayRef sizes = tensor->sizes();
    const size_t compared = std::min<size_t>(sizes.size(), kComparedDims);
    std::copy_n(sizes.begin(), compared, signature.sizes.begin());
  }
  return signature;
}

std::string Signature::describe_arguments() const {
  if (dtype < 0) return "nothing";
  std::string shape;
  for (int32_t d = 0; d < std::min(dim, kComparedDims); ++d)
    shape += fmt::format("{}{}", d == 0 ? "" : ", ", sizes[static_cast<size_t>(d)]);
  if (dim > kComparedDims) shape += fmt::format(", ... ({} elements)", numel);
  return fmt::format("{} [{}]", dtype_name(static_cast<DType>(dtype)), shape);
}

std::string Signature::describe() const {
  std::string text = fmt::format("{} #{}", name_of(collective), sequence);
  if (reduce_op >= 0) text += fmt::format(" ({})", name_of(static_cast<ReduceOp>(reduce_op)));
  if (root >= 0) text += fmt::format(" (root {})", root);
  if (dtype >= 0) text += " of " + describe_arguments();
  return text;
}

std::optional<std::string> mismatch(const Signature& a, int rank_a, const Signature& b,
                                    int rank_b) {
  if (a.sequence != b.sequence || a.collective != b.collective) {
    return fmt::format(
        "rank {} called {} while rank {} called {}: every rank must call the same collectives "
        "in the same order",
        rank_b, b.describe(), rank_a, a.describe());
  }
  if (a.reduce_op != b.reduce_op || a.root != b.root) {
    return fmt::format(
        "rank {} called {} while rank {} called {}: the reduction and root must "
        "be the same on every rank",
        rank_b, b.describe(), rank_a, a.describe());
  }
  const bool same_arguments =
      a.dtype == b.dtype && a.dim == b.dim && a.numel == b.numel && a.sizes == b.sizes;
  if (!same_arguments) {
    return fmt::format(
        "{}: rank {} passed {} while rank {} passed {}: every rank must pass a "
        "tensor of the same dtype and shape",
        a.describe().substr(0, a.describe().find(" of ")), rank_b, b.describe_arguments(), rank_a,
        a.describe_arguments());
  }
  if ((a.data_path == static_cast<int32_t>(DataPath::DeviceCollectives)) !=
      (b.data_path == static_cast<int32_t>(DataPath::DeviceCollectives))) {
    const auto path = [](const Signature& s) {
      return s.data_path == static_cast<int32_t>(DataPath::DeviceCollectives)
                 ? "through its device's collectives"
                 : "through MPI";
    };
    return fmt::format(
        "{}: rank {} moves its tensor {} while rank {} moves it {}: every rank must load the "
        "same backends, with the same BACKPLANE_DISTRIBUTED_DEVICE_COLLECTIVES",
        a.describe().substr(0, a.describe().find(" of ")), rank_b, path(b), rank_a, path(a));
  }
  return std::nullopt;
}

}  // namespace bp::distributed::detail
