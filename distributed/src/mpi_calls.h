// The MPI calls the group makes, each checked: the datatype and operation for a dtype and a
// reduction, and MPI's error codes turned into DistributedError.
#pragma once

#include <backplane/distributed.h>

#include <mpi.h>

#include <string_view>

namespace bp::distributed::detail {

// The dtype that a reduction of `dtype` runs in on the wire: 16-bit floats are reduced in
// float32, which MPI has and whose rounding is finer.
DType wire_dtype(DType dtype, bool reduces);

// MPI's datatype for elements of `dtype` (a wire dtype for reductions).
MPI_Datatype mpi_datatype(DType dtype);

// MPI's operation for `op` on `dtype`; Mean sums (the group divides afterwards).
MPI_Op mpi_op(ReduceOp op, DType dtype);

// Throws DistributedError naming `call` and MPI's message unless `code` is MPI_SUCCESS.
void check_mpi(int code, std::string_view call);

// MPI counts are ints: the most elements one call moves.
inline constexpr int64_t kMaxCount = (int64_t{1} << 31) - 1;

}  // namespace bp::distributed::detail
