// What every rank says about a collective before any data moves, so that the ranks agree they
// are running the same one: its place in the call order, kind, reduction, root, dtype and
// shape. A fixed-size record of integers, so that it crosses MPI as plain bytes.
#pragma once

#include <backplane/distributed.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace bp::distributed::detail {

enum class Collective : int32_t { AllReduce, Broadcast, AllGather, ReduceScatter, Barrier };

std::string_view name_of(Collective collective);
std::string_view name_of(ReduceOp op);
std::string_view name_of(DataPath path);

struct Signature {
  // Shapes longer than this are compared by their first dimensions and their element count.
  static constexpr int kComparedDims = 12;

  int64_t sequence = 0;  // 1 for the group's first collective, counted on each rank
  Collective collective = Collective::Barrier;
  int32_t reduce_op = -1;  // a ReduceOp, or -1 where there is none
  int32_t root = -1;       // broadcast's root, or -1
  int32_t dtype = -1;      // the DType of the tensor the rank passed, or -1 (barrier)
  int32_t dim = 0;
  int32_t data_path = 0;  // a DataPath, set when the operation is submitted
  int64_t numel = 0;
  std::array<int64_t, kComparedDims> sizes{};

  // `tensor`'s dtype and shape (the input of all_gather and reduce_scatter).
  static Signature of(int64_t sequence, Collective collective, const Tensor* tensor,
                      std::optional<ReduceOp> op, int root);

  // "all_reduce #3 (sum) of Float [4, 4]"
  std::string describe() const;
  // "Float [4, 4]", or "nothing" for a barrier.
  std::string describe_arguments() const;
};

// Why ranks `a` and `b` cannot run their collectives together, or nothing when they can.
std::optional<std::string> mismatch(const Signature& a, int rank_a, const Signature& b, int rank_b);

}  // namespace bp::distributed::detail
