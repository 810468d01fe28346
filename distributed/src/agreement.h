// The agreement that opens every collective: each rank sends its Signature to rank 0, which
// compares them and answers every rank with one verdict, so that all ranks either run the
// collective or raise the same named error. Only small messages on a communicator of its own
// that are polled against a deadline, so that a rank that died or never came is named instead
// of waited for forever.
#pragma once

#include "signature.h"

#include <mpi.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace bp::distributed::detail {

struct Disagreement {
  std::string message;
  std::vector<int> ranks;  // the ranks that did not come, or whose arguments differ
  // Whether the group is unusable from now on: a rank did not come, so messages may be left
  // in flight and the ranks no longer count collectives alike.
  bool breaks_group = false;
};

// Runs the agreement for `mine` on `control` (rank 0 waits up to `timeout` for the others'
// signatures; the others wait up to twice that for rank 0's verdict, since rank 0 may itself
// arrive late and then wait). Nothing when every rank passed the same signature.
std::optional<Disagreement> agree(MPI_Comm control, int rank, int size, const Signature& mine,
                                  std::chrono::milliseconds timeout);

}  // namespace bp::distributed::detail
