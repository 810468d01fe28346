// all_reduce of float32 host tensors through bp::distributed against Open MPI's own
// MPI_Allreduce on the same buffers, interleaved in one job: bus bandwidth of each and
// their ratio. Run it under mpirun with 2 or more ranks (it skips itself, exit status 77, in a
// job of one); every rank times the same calls, rank 0 reports. `--quick` times a few sizes once,
// for the smoke check in `make test`.
#include <backplane/backplane.h>
#include <backplane/distributed.h>

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Each timed batch repeats one call this many times: enough calls to last a few milliseconds.
int calls_per_batch(int64_t bytes) {
  return static_cast<int>(std::clamp<int64_t>((int64_t{128} << 20) / bytes, 3, 2000));
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Seconds per call of `call`, every rank starting each batch together.
template <typename Call>
double seconds_per_call(int calls, Call&& call) {
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) call();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count() / calls;
  // The slowest rank's time is the collective's.
  MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  bp::distributed::ProcessGroup& group = bp::distributed::init();
  if (group.size() < 2) {
    std::printf(
        "bench_distributed: run it under mpirun with 2 or more ranks "
        "(mpirun -np 2 build/bin/bench_distributed)\n");
    return 77;
  }
  const int rounds = quick ? 1 : 9;
  const int64_t largest = quick ? (int64_t{1} << 20) : (int64_t{256} << 20);
  // A ring all_reduce moves 2 (n - 1) / n of the buffer through each rank's link.
  const double bus_factor = 2.0 * (group.size() - 1) / group.size();
  if (group.rank() == 0) {
    std::printf(
        "all_reduce (sum) of float32 host tensors on %d ranks, medians of %d rounds\n"
        "%12s %14s %14s %10s\n",
        group.size(), rounds, "bytes", "bp GB/s", "MPI GB/s", "bp / MPI");
  }
  for (int64_t bytes = 1024; bytes <= largest; bytes *= quick ? 32 : 4) {
    const int64_t count = bytes / 4;
    bp::Tensor tensor = bp::zeros({count});
    // MPI's own call works on the same memory, so that both sides see the same pages.
    float* const buffer = tensor.data_ptr<float>();
    const int calls = calls_per_batch(bytes);
    std::vector<double> ours, theirs;
    for (int round = 0; round < rounds; ++round) {
      ours.push_back(seconds_per_call(calls, [&] { group.all_reduce(tensor); }));
      theirs.push_back(seconds_per_call(calls, [&] {
        MPI_Allreduce(MPI_IN_PLACE, buffer, static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                      MPI_COMM_WORLD);
      }));
    }
    if (group.rank() == 0) {
      const double our_rate = bytes * bus_factor / median(ours) / 1e9;
      const double their_rate = bytes * bus_factor / median(theirs) / 1e9;
      std::printf("%12lld %14.3f %14.3f %9.3fx%s\n", static_cast<long long>(bytes), our_rate,
                  their_rate, our_rate / their_rate, bytes >= (1 << 20) ? " (target >= 0.9x)" : "");
    }
  }
  return 0;
}
