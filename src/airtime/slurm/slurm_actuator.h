// SlurmActuator: the daemon's Actuator (exec/actuator.h) over a Slurm cluster. Each run is a
// Slurm job; Slurm's daemons start it on the node, airtime decides where and when.
//
// Launch: a job (name "airtime.WORKLOAD.rRUN", airtime's explanation in its comment) asking
//   for the engine's GPU type and count per node, with the engine's nodes as its required
//   nodes (ReqNodeList), submitted in one call (docs/slurm.md says why). LaunchAll submits a
//   batch of them (the starts of one engine cycle) concurrently (SubmitPool: the calling
//   thread and the submitters, each with a client of its own); everything else it
//   does, the actuator's own state included, stays on the calling thread. Its batch script
//   execs the workload's argv (no shell expansion of the arguments); its output goes to
//   RUN_DIR/stdout.log. A fraction of a GPU (share_milli < 1000, one GPU per node) asks for
//   gres/shard instead, ceil(share x shards per GPU / 1000) of them (--gres=shard:K), on the
//   engine's node; Slurm picks the GPU, reported like whole GPUs (TakePlaced); a node
//   without shards refuses it. A workload airtime stopped
//   earlier (its job requeued and held, "parked") gets that job back: same Slurm job id,
//   steered and released again.
// Stop(grace): the stop signal (SIGTERM, the checkpoint contract) to every process of the
//   job, then after the grace, if it still runs, requeue-and-hold ("parked" for the
//   workload's next start); a job that ended within the grace is requeued and held too
//   (Slurm requeues a finished batch job), and a pending one is held at once. StopNow: cancel.
//   Retire: the parked job of a workload that will not run again is cancelled.
// Polling: a thread of its own (the poller) reads Slurm every poll_interval, off the
//   daemon's loop: the brief job list (SlurmClient::JobStates, squeue's), each job that
//   holds GPUs in full once per run of it (its GPU indices, name and user: Job(id), or the
//   whole list when many are new at once) and the node list. It hands each read, a
//   snapshot, to WaitForExits, which wakes at once, applies it on the calling thread and
//   returns when it brought something to report. Each watched job's end is reported exactly
//   once: a final state (COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...) with the
//   script's exit code (128+N for signal N), a requeue airtime made ("requeued", 143), a
//   requeue Slurm made by itself (a node went down): that job is cancelled at once so it
//   never runs behind airtime's back, and the run is reported failed ("requeued by Slurm"),
//   or the job gone from Slurm's list. A snapshot that began before a job was watched (Watch,
//   Adopt) or acted on (the requeue, hold or cancel of a stop) says nothing about that job:
//   each snapshot carries the number of its poll, each job the number of the last poll begun
//   when it was watched or acted on. A job seen RUNNING is reported once by TakePlaced with
//   the GPUs Slurm chose. Running jobs that are not airtime's are reported by TakeForeign,
//   the GPUs of nodes that are down, drained or not responding by TakeUnusable.
// Adopt: the recorded job id looked up in Slurm (a run whose id was not recorded is found by
//   its name): running or pending (released) -> watched; ended -> its exit; unknown -> gone
//   (exit -1); airtime's held job of a run that had not been recorded -> cancelled, never
//   started.
//
// GPU ids are "slurm:NODE:INDEX" with Slurm's index on that node (GpuId). Threading: the
// daemon's loop thread calls everything but Wake(); Wake() is safe from any thread. The
// poller uses only its own client (`reader`) and the snapshot it hands over under mu_; the
// submitters only their own clients, inside LaunchAll (submit_pool.h); the rest of the
// state is the calling thread's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "airtime/exec/actuator.h"
#include "airtime/slurm/slurm_client.h"
#include "airtime/slurm/slurm_cluster.h"
#include "airtime/slurm/submit_pool.h"

namespace airtime::slurm {

struct SlurmActuatorOptions {
  std::chrono::milliseconds poll_interval{200};
  std::string partition;                // "" : the cluster's default partition
  std::string job_prefix = "airtime.";  // job names: PREFIX WORKLOAD .r RUN
  std::string stop_signal = "TERM";     // sent at Stop, before the grace
  std::string slurm_url;                // for Describe
  // The Slurm user airtime's jobs run as: a job found by its name alone (Adopt, for a run
  // whose job id was never recorded) must be this user's, not a look-alike of another's.
  // "" : any user.
  std::string user;
  // This daemon's mark, which ends each of its jobs' comments (" [OWNER]"): a job found by
  // its name alone (Adopt, Unrecorded) must carry it too, so that another airtime daemon's
  // jobs under the same Slurm user are not taken for this one's. "" : neither written nor
  // checked.
  std::string owner;
};

// "slurm:n3:5": the daemon's id of GPU 5 of node n3.
std::string SlurmGpuId(const std::string& node, int index);
// The batch script that execs `argv` (each argument single-quoted).
std::string BatchScript(const std::vector<std::string>& argv);
// The exit code of a job from its wait status (v0.0.38 exit_code): the code, or 128+N for
// signal N.
int ExitCodeOf(int64_t wait_status);
// Whether a job in this state has ended for good.
bool FinalJobState(const std::string& state);

class SlurmActuator final : public Actuator {
 public:
  // `client` acts (submit, release, requeue, cancel...) and adopts, on the calling thread;
  // `reader` is the poller's, used by that thread alone (RestSlurmClient is not
  // thread-safe, and a poll must not hold up a submission); each of `submitters` submits
  // new jobs of a LaunchAll beside the calling thread, on a thread of its own (none: one
  // after another). The poller and the submitters start here.
  SlurmActuator(std::unique_ptr<SlurmClient> client, std::unique_ptr<SlurmClient> reader,
                const SlurmCluster& cluster, SlurmActuatorOptions options,
                std::vector<std::unique_ptr<SlurmClient>> submitters = {});
  // Stops the poller (a read in progress ends first) and the submitters, and joins them.
  ~SlurmActuator() override;
  SlurmActuator(const SlurmActuator&) = delete;
  SlurmActuator& operator=(const SlurmActuator&) = delete;

  StatusOr<RunHandle> Launch(const LaunchRequest& request) override;
  std::vector<LaunchResult> LaunchAll(const std::vector<LaunchRequest>& requests) override;
  Status Watch(int64_t run_id, const RunHandle& handle) override;
  std::vector<Exited> WaitForExits(int timeout_ms) override;
  void Wake() override;
  Status Stop(int64_t run_id, int grace_ms) override;
  Status StopNow(int64_t run_id) override;
  StatusOr<AdoptResult> Adopt(int64_t run_id, const RunHandle& recorded) override;
  StatusOr<std::vector<UnrecordedRun>> Unrecorded(const std::vector<int64_t>& recorded) override;
  Status EndUnrecorded(const UnrecordedRun& run) override;
  std::vector<Placed> TakePlaced() override;
  std::optional<std::vector<ForeignUse>> TakeForeign() override;
  std::optional<std::vector<std::string>> TakeUnusable() override;
  // Fractions are Slurm's gres/shard on the nodes: no MPS server of the daemon's.
  bool FractionsUseLocalMps() const override { return false; }
  void Retire(const std::string& workload) override;
  std::string Describe() const override;
  // The node of the first GPU's address (SlurmCluster::address_of); "127.0.0.1" for none.
  std::string ServiceAddress(const std::vector<std::string>& gpus) const override;
  // The ports of parked jobs. Called on the daemon's thread, as Launch.
  std::vector<int> KeptPorts() const override;

  // Asks the poller for a poll now (or as soon as the one in progress ends).
  void PollSoon();
  // Counters for tests and metrics: polls begun, polls that failed, the number of the last
  // poll a WaitForExits applied, Job(id) reads, whole job lists read for details.
  int64_t polls() const;
  int64_t poll_errors() const { return poll_errors_.load(); }
  int64_t last_applied_poll() const { return applied_seq_; }
  int64_t job_reads() const { return job_reads_.load(); }
  int64_t list_reads() const { return list_reads_.load(); }
  int64_t slurm_requeues_seen() const { return slurm_requeues_; }

 private:
  std::string OwnerMark() const;  // " [OWNER]", or "" without an owner
  bool Mine(const SlurmJob& job) const;
  // The workload and run of a job named as Launch names them (PREFIX WORKLOAD .rN).
  std::optional<std::pair<std::string, int64_t>> RunOfName(const std::string& name) const;
  using Clock = std::chrono::steady_clock;
  struct Shape {
    std::string gpu_type;  // "" for shards
    int64_t gpus_per_node = 0;
    int64_t shards = 0;  // > 0: a fraction, this many gres/shard of one GPU per node
    std::vector<std::string> nodes;
    bool operator==(const Shape&) const = default;
  };
  struct Watched {
    int64_t job = 0;
    // The number of the last poll begun when the job was watched or last acted on: a
    // snapshot of that poll or an earlier one says nothing about it.
    int64_t since = 0;
    std::string workload;
    std::optional<Shape> shape;  // unknown for a job adopted after a restart
    bool placed = false;         // TakePlaced has its GPUs
    bool running_seen = false;
    int64_t restarts = -1;  // Slurm's restart count when first seen
    bool stopping = false;
    Clock::time_point act_at{};  // when Stop's grace ends
    bool acted = false;          // requeued/held/cancelled by airtime
    bool parks = false;          // the job is kept for the workload's next start
    int port = 0;                // its environment's PORT (0: none or unknown)
  };
  struct Parked {
    int64_t job = 0;
    Shape shape;
    int port = 0;  // its environment's PORT, which it keeps (0: none)
  };
  // How a request starts: its parked job, steered and released already (parked_job > 0),
  // or a new job to submit.
  struct Plan {
    Shape shape;
    int64_t parked_job = 0;
    JobRequest job;
    int port = 0;  // the PORT it runs with: the parked job's, else the request's
  };

  // What one poll read.
  struct Snapshot {
    int64_t seq = 0;  // the poll's number, taken before it read anything
    Status status;    // not OK: Slurm did not answer, nothing is concluded from it
    // Every job, in brief; those holding GPUs in full (GPU indices, name, user).
    std::vector<SlurmJob> jobs;
    Status nodes_status;
    std::vector<SlurmNode> nodes;
  };

  // The shape of the GPUs `gpus` name; InvalidArgument for unknown ids, mixed types or
  // unequal counts per node.
  StatusOr<Shape> ShapeOf(const std::vector<std::string>& gpus) const;
  StatusOr<Plan> PlanLaunch(const LaunchRequest& request);
  // The gres/shard per node for a fraction `share_milli` of one GPU on `shape`'s nodes.
  StatusOr<int64_t> ShardsFor(int share_milli, const Shape& shape) const;
  // The poller thread: a poll every poll_interval (sooner when asked), each handed over.
  void PollerLoop();
  // The poller's read of Slurm (reader_ and details_ only).
  Snapshot Read(int64_t seq);
  // Applies a snapshot on the calling thread; whether it brought anything to report (an
  // exit, a placement, a change of foreign or unusable GPUs).
  bool Apply(const Snapshot& snapshot, std::vector<Exited>* exits);
  // Asks the poller for a poll by `at`.
  void PollBy(Clock::time_point at);
  void SetError(std::string message);
  // After Stop's grace: requeue-hold (or hold, or cancel) the job of `w`.
  void StopAction(int64_t run_id, Watched& w, const SlurmJob& job);
  std::vector<std::string> GpuIds(const SlurmJob& job) const;
  // How much of each of its GPUs a foreign job holds on one node, in thousandths: 1000 for
  // whole GPUs; for shards, their share of the node's shards per GPU, rounded up.
  int ForeignMilli(const NodeGpus& ng) const;

  std::unique_ptr<SlurmClient> client_;
  SlurmActuatorOptions options_;
  SubmitPool submit_;  // client_ on the calling thread, and the submitters
  // The poller's own.
  std::unique_ptr<SlurmClient> reader_;
  std::map<std::pair<int64_t, int64_t>, SlurmJob> details_;  // by (job, restarts): full records
  std::set<std::string> known_gpus_;                         // every GpuId of the cluster
  std::map<std::string, std::string> type_of_node_;
  std::map<std::string, int64_t> shards_per_gpu_;  // SlurmCluster::shards_per_gpu
  std::map<std::string, std::string> address_of_;  // SlurmCluster::address_of
  std::map<int64_t, Watched> watched_;             // by run id
  struct Launched {
    Shape shape;
    std::string workload;
    int port = 0;  // its environment's PORT (0: none)
  };
  std::map<int64_t, Launched> launched_;               // by job id, between Launch and Watch
  std::map<std::string, std::vector<Parked>> parked_;  // by workload
  std::set<std::string> retired_;                      // workloads that will not run again
  std::set<int64_t> ever_ours_;                        // every job airtime ran: never foreign
  std::vector<Placed> placed_;
  std::vector<ForeignUse> foreign_;
  bool foreign_changed_ = false;
  std::map<std::string, std::vector<std::string>> gpus_of_node_;  // Slurm node -> GPU ids
  std::vector<std::string> unusable_;  // GPU ids on nodes Slurm will not start work on
  bool unusable_changed_ = false;
  int64_t slurm_requeues_ = 0;
  int64_t applied_seq_ = 0;
  std::atomic<int64_t> poll_errors_{0}, job_reads_{0}, list_reads_{0};

  // Shared by the poller and the calling thread.
  mutable std::mutex mu_;
  std::condition_variable cv_;       // WaitForExits waits on it: a snapshot, or Wake
  std::condition_variable poll_cv_;  // the poller waits on it: a poll asked for, or the end
  bool woken_ = false;
  bool ending_ = false;
  int64_t polls_begun_ = 0;
  Clock::time_point poll_due_{};
  std::optional<Snapshot> fresh_;  // the latest snapshot not applied yet
  std::string last_error_;
  std::thread poller_;  // last: starts once everything above exists
};

}  // namespace airtime::slurm
