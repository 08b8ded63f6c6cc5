// SlurmClient: the one seam between airtime and a Slurm cluster.
//
// What the Slurm backend reads (nodes, partitions, jobs with the GPU indices Slurm chose)
// and the actions it takes on jobs, in airtime's terms (records.h, job_request.h). Which
// Slurm API carries them, and which version, is the implementation's business: today
// RestSlurmClient (rest_client.h) over slurmrestd, its version detected when it connects.
// Every call may fail (Slurm down, a job gone): none throws, every error names the call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/slurm/job_request.h"
#include "airtime/slurm/records.h"

namespace airtime::slurm {

class SlurmClient {
 public:
  virtual ~SlurmClient() = default;

  // The API version in use ("v0.0.38") and the Slurm release ("22.05.8").
  virtual std::string ApiVersion() const = 0;
  virtual std::string SlurmRelease() const = 0;

  virtual StatusOr<std::vector<SlurmNode>> Nodes() = 0;
  virtual StatusOr<std::vector<SlurmPartition>> Partitions() = 0;
  // Every job slurmctld still knows (ended ones for MinJobAge), airtime's and others'.
  virtual StatusOr<std::vector<SlurmJob>> Jobs() = 0;
  // The same jobs in brief, far cheaper to read at a thousand jobs (docs/slurm.md): id,
  // state, state_reason, restarts, exit_code, priority and user; no name, comment, nodes
  // or GPUs.
  virtual StatusOr<std::vector<SlurmJob>> JobStates() = 0;
  // One job in full (its GPU indices included). NotFound when Slurm does not know it.
  virtual StatusOr<SlurmJob> Job(int64_t job) = 0;

  // Submits a job (held when request.hold); its id.
  virtual StatusOr<int64_t> Submit(const JobRequest& request) = 0;
  // Steers a pending job to these nodes (ReqNodeList). A running job is refused: Slurm's
  // NodeList= only shrinks it, which is not what airtime means.
  virtual Status SetRequiredNodes(int64_t job, const std::vector<std::string>& nodes) = 0;
  // Releases a pending job, held or not, and makes it eligible now (a requeued job is
  // otherwise not eligible for about 2 minutes). Within 1.5 s of a requeue by this client
  // it first waits, up to 1.5 s, for the next wall-clock second: slurmd refuses a run of
  // the job started within the second of the requeue, and the job would fail.
  virtual Status Release(int64_t job) = 0;
  virtual Status Hold(int64_t job) = 0;
  // A pending job's priority; Slurm refuses it while the job is held.
  virtual Status SetPriority(int64_t job, int64_t priority) = 0;
  // Preemption: back to pending (held too when `hold`, for airtime to release later).
  // Slurm itself restarts an unheld requeued job only after about 2 minutes; Release
  // restarts it at once.
  virtual Status Requeue(int64_t job, bool hold) = 0;
  virtual Status Cancel(int64_t job) = 0;
  // Sends `signal` ("USR1", "TERM" or a number) to every process of a running job, the batch
  // shell included: the checkpoint grace before a requeue.
  virtual Status Signal(int64_t job, const std::string& signal) = 0;
};

}  // namespace airtime::slurm
