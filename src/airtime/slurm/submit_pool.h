// SubmitPool: submits a batch of Slurm jobs concurrently, each helper thread with a client
// of its own (RestSlurmClient is not thread-safe; it opens a connection per call), the
// calling thread with the caller's client.
//
// A cycle of the engine can decide several starts at once; one after another, each waits
// for the submissions before it (10-20 ms each against slurmrestd in a burst;
// docs/slurm.md, "Decision -> Slurm accepted"). SubmitAll hands a batch's jobs out in
// order, one at a time, to whichever thread is free (the caller's included) and returns
// when every one has been submitted or refused, with each result in the batch's order and
// the moment it came. Nothing else is shared: each helper calls only its own client's
// Submit, and what a submission returns is handed back under the pool's lock.
//
// With no helpers, SubmitAll submits on the calling thread alone, one after another. The
// destructor ends the helpers (a submission in progress first) and joins them. SubmitAll is
// for one thread at a time (the daemon's loop, through SlurmActuator::LaunchAll).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/slurm/job_request.h"
#include "airtime/slurm/slurm_client.h"

namespace airtime::slurm {

class SubmitPool {
 public:
  using Clock = std::chrono::steady_clock;
  struct Submitted {
    StatusOr<int64_t> job;  // the Slurm job id, or why Slurm refused it
    Clock::time_point at;   // when the answer came
  };

  // `own`: the calling thread's client (not owned; used only inside SubmitAll). `helpers`:
  // one thread each, started here, each using only its own client.
  SubmitPool(SlurmClient* own, std::vector<std::unique_ptr<SlurmClient>> helpers);
  ~SubmitPool();
  SubmitPool(const SubmitPool&) = delete;
  SubmitPool& operator=(const SubmitPool&) = delete;

  // Submits every job; their results in the same order.
  std::vector<Submitted> SubmitAll(const std::vector<JobRequest>& jobs);
  // How many submissions can be under way at once: the helpers and the caller.
  size_t width() const { return helpers_.size() + 1; }

 private:
  // Takes the batch's next job (its index), or nothing when none is left or ending.
  std::optional<size_t> TakeNext(std::unique_lock<std::mutex>& lock);
  void Store(size_t i, Submitted result);
  void HelperLoop(SlurmClient* client);

  SlurmClient* own_;
  std::vector<std::unique_ptr<SlurmClient>> helpers_;

  std::mutex mu_;
  std::condition_variable work_cv_;  // helpers wait on it: a batch, or the end
  std::condition_variable done_cv_;  // SubmitAll waits on it: the batch's last result
  const std::vector<JobRequest>* batch_ = nullptr;  // set only while SubmitAll runs
  size_t next_ = 0;                                 // the batch's next job to hand out
  size_t left_ = 0;                                 // results still to come
  std::vector<std::optional<Submitted>> results_;
  bool ending_ = false;
  std::vector<std::thread> threads_;  // last: started once everything above exists
};

}  // namespace airtime::slurm
