#include "agreement.h"

#include "mpi_calls.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <thread>

namespace bp::distributed::detail {

namespace {

constexpr int kSignatureTag = 1;
constexpr int kVerdictTag = 2;

// Rank 0's answer, as plain bytes.
struct Verdict {
  static constexpr int kMaxNamedRanks = 64;
  int32_t agreed = 0;
  int32_t breaks_group = 0;
  int32_t rank_count = 0;
  std::array<int32_t, kMaxNamedRanks> ranks{};
  std::array<char, 1024> message{};

  static Verdict from(const std::optional<Disagreement>& disagreement) {
    Verdict verdict;
    verdict.agreed = !disagreement.has_value();
    if (!disagreement) return verdict;
    verdict.breaks_group = disagreement->breaks_group;
    verdict.rank_count =
        static_cast<int32_t>(std::min<size_t>(disagreement->ranks.size(), kMaxNamedRanks));
    std::copy_n(disagreement->ranks.begin(), verdict.rank_count, verdict.ranks.begin());
    const size_t length = std::min(disagreement->message.size(), verdict.message.size() - 1);
    std::memcpy(verdict.message.data(), disagreement->message.data(), length);
    return verdict;
  }

  std::optional<Disagreement> disagreement() const {
    if (agreed) return std::nullopt;
    Disagreement disagreement;
    disagreement.message = std::string(message.data(), strnlen(message.data(), message.size()));
    disagreement.ranks.assign(ranks.begin(), ranks.begin() + rank_count);
    disagreement.breaks_group = breaks_group != 0;
    return disagreement;
  }
};

using Clock = std::chrono::steady_clock;

// Tests `requests` until all completed or `deadline` passed; which completed. Spins at first,
// then sleeps progressively longer, so that a rank waiting for a slow peer leaves the cores to
// the processes that compute.
std::vector<bool> poll(std::vector<MPI_Request>& requests, Clock::time_point deadline) {
  std::vector<bool> completed(requests.size(), false);
  std::chrono::microseconds pause{0};
  constexpr std::chrono::microseconds kLongestPause{1000};
  for (int round = 0;; ++round) {
    bool all = true;
    for (size_t i = 0; i < requests.size(); ++i) {
      if (completed[i]) continue;
      int flag = 0;
      check_mpi(MPI_Test(&requests[i], &flag, MPI_STATUS_IGNORE), "MPI_Test");
      completed[i] = flag != 0;
      all = all && completed[i];
    }
    if (all || Clock::now() >= deadline) return completed;
    if (round < 1000) {
      std::this_thread::yield();
    } else {
      pause = std::min(kLongestPause, std::max(std::chrono::microseconds{10}, pause * 2));
      std::this_thread::sleep_for(pause);
    }
  }
}

// Gives up on requests that did not complete (cancels and frees them); whether there were any.
// MPI may still read or write a given-up request's buffer, so its caller must then keep the
// buffers for the rest of the process.
bool abandon(std::vector<MPI_Request>& requests, const std::vector<bool>& completed) {
  bool any = false;
  for (size_t i = 0; i < requests.size(); ++i) {
    if (completed[i] || requests[i] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&requests[i]);
    MPI_Request_free(&requests[i]);
    any = true;
  }
  return any;
}

// Keeps `buffers` alive for the rest of the process when `abandoned`: requests MPI gave up on
// may still touch them. Only a group that just broke gets here.
template <typename Buffers>
void keep_if(bool abandoned, std::unique_ptr<Buffers>& buffers) {
  if (abandoned) (void)buffers.release();
}

std::string rank_list(const std::vector<int>& ranks) {
  std::string text;
  for (size_t i = 0; i < ranks.size(); ++i)
    text += fmt::format("{}{}", i == 0 ? "" : (i + 1 == ranks.size() ? " and " : ", "), ranks[i]);
  return text;
}

std::optional<Disagreement> gather_and_judge(MPI_Comm control, int size, const Signature& mine,
                                             std::chrono::milliseconds timeout) {
  // What MPI reads and writes, on the heap so that it can outlive requests given up on.
  struct Buffers {
    std::vector<Signature> signatures;
    Verdict verdict;
  };
  auto buffers = std::make_unique<Buffers>();
  std::vector<Signature>& signatures = buffers->signatures;
  signatures.resize(static_cast<size_t>(size));
  signatures[0] = mine;
  std::vector<MPI_Request> receives(static_cast<size_t>(size - 1), MPI_REQUEST_NULL);
  for (int rank = 1; rank < size; ++rank) {
    check_mpi(MPI_Irecv(&signatures[static_cast<size_t>(rank)], sizeof(Signature), MPI_BYTE, rank,
                        kSignatureTag, control, &receives[static_cast<size_t>(rank - 1)]),
              "MPI_Irecv");
  }
  const std::vector<bool> arrived = poll(receives, Clock::now() + timeout);
  bool abandoned = abandon(receives, arrived);

  std::optional<Disagreement> disagreement;
  std::vector<int> missing;
  for (int rank = 1; rank < size; ++rank)
    if (!arrived[static_cast<size_t>(rank - 1)]) missing.push_back(rank);
  if (!missing.empty()) {
    disagreement = Disagreement{
        fmt::format("{}: rank{} {} did not reach it within {} s (BACKPLANE_DISTRIBUTED_TIMEOUT): "
                    "{} died, raised an error, or is stuck before it; the group cannot be used "
                    "any more",
                    mine.describe(), missing.size() == 1 ? "" : "s", rank_list(missing),
                    std::chrono::duration<double>(timeout).count(),
                    missing.size() == 1 ? "it" : "they"),
        missing, true};
  } else {
    std::vector<int> differing;
    std::string first_reason;
    for (int rank = 1; rank < size; ++rank) {
      if (auto reason = mismatch(mine, 0, signatures[static_cast<size_t>(rank)], rank)) {
        differing.push_back(rank);
        if (first_reason.empty()) first_reason = *reason;
      }
    }
    if (!differing.empty()) {
      if (differing.size() > 1)
        first_reason += fmt::format(" (ranks {} differ from rank 0)", rank_list(differing));
      disagreement = Disagreement{first_reason, differing, false};
    }
  }

  buffers->verdict = Verdict::from(disagreement);
  std::vector<MPI_Request> sends;
  for (int rank = 1; rank < size; ++rank) {
    if (!arrived[static_cast<size_t>(rank - 1)]) continue;
    sends.push_back(MPI_REQUEST_NULL);
    check_mpi(MPI_Isend(&buffers->verdict, sizeof(Verdict), MPI_BYTE, rank, kVerdictTag, control,
                        &sends.back()),
              "MPI_Isend");
  }
  const std::vector<bool> sent = poll(sends, Clock::now() + timeout);
  abandoned = abandon(sends, sent) || abandoned;
  keep_if(abandoned, buffers);
  return disagreement;
}

std::optional<Disagreement> send_and_hear(MPI_Comm control, const Signature& mine,
                                          std::chrono::milliseconds timeout) {
  // What MPI reads and writes, on the heap so that it can outlive requests given up on.
  struct Buffers {
    Signature signature;
    Verdict verdict;
  };
  auto buffers = std::make_unique<Buffers>();
  buffers->signature = mine;
  std::vector<MPI_Request> requests(2, MPI_REQUEST_NULL);
  check_mpi(MPI_Isend(&buffers->signature, sizeof(Signature), MPI_BYTE, 0, kSignatureTag, control,
                      &requests[0]),
            "MPI_Isend");
  check_mpi(MPI_Irecv(&buffers->verdict, sizeof(Verdict), MPI_BYTE, 0, kVerdictTag, control,
                      &requests[1]),
            "MPI_Irecv");
  const std::vector<bool> completed = poll(requests, Clock::now() + 2 * timeout);
  if (completed[1]) return buffers->verdict.disagreement();
  keep_if(abandon(requests, completed), buffers);
  return Disagreement{
      fmt::format("{}: rank 0 did not answer within {} s (twice BACKPLANE_DISTRIBUTED_TIMEOUT): "
                  "it died, raised an error, or is stuck before it; the group cannot be used any "
                  "more",
                  mine.describe(), std::chrono::duration<double>(2 * timeout).count()),
      {0},
      true};
}

}  // namespace

std::optional<Disagreement> agree(MPI_Comm control, int rank, int size, const Signature& mine,
                                  std::chrono::milliseconds timeout) {
  if (size == 1) return std::nullopt;
  return rank == 0 ? gather_and_judge(control, size, mine, timeout)
                   : send_and_hear(control, mine, timeout);
}

}  // namespace bp::distributed::detail
