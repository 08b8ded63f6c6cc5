// RestSlurmClient: SlurmClient over slurmrestd's JSON API, the version chosen at connect
// time from the server's OpenAPI document (api_shapes.h). The actions the chosen version
// cannot make over REST (requeue and requeuehold; in v0.0.38 also ReqNodeList) run `scontrol`
// authenticated with the same token (scontrol.h). docs/slurm.md says why REST and not
// libslurm. The brief job list (JobStates) is squeue's (squeue.h). Not thread-safe: one per
// thread, or a lock around it.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "airtime/slurm/api_shapes.h"
#include "airtime/slurm/http_json.h"
#include "airtime/slurm/scontrol.h"
#include "airtime/slurm/slurm_client.h"

namespace airtime::slurm {

struct SlurmConnectOptions {
  RestOptions rest;
  ScontrolOptions scontrol;  // its jwt defaults to rest.token
  // "" to choose the newest version both sides speak; else exactly this one ("v0.0.38").
  std::string api_version;
};

// Connects: reads GET /openapi, chooses the version, checks it with a ping.
StatusOr<std::unique_ptr<SlurmClient>> ConnectSlurm(SlurmConnectOptions options);

// The options from the environment that scripts/slurm-lab.sh's env.sh sets: SLURMRESTD_URL,
// SLURM_REST_USER (default: the current user), SLURM_REST_TOKEN, SLURM_CONF; and
// SLURM_REST_API, a version to use instead of the newest both sides speak ("v0.0.38"),
// refused at start when this build does not speak it.
StatusOr<SlurmConnectOptions> SlurmOptionsFromEnv();

class RestSlurmClient final : public SlurmClient {
 public:
  RestSlurmClient(SlurmConnectOptions options, std::unique_ptr<ApiShapes> shapes,
                  std::string release);

  std::string ApiVersion() const override { return std::string(shapes_->Version()); }
  std::string SlurmRelease() const override { return release_; }
  StatusOr<std::vector<SlurmNode>> Nodes() override;
  StatusOr<std::vector<SlurmPartition>> Partitions() override;
  StatusOr<std::vector<SlurmJob>> Jobs() override;
  StatusOr<std::vector<SlurmJob>> JobStates() override;
  StatusOr<SlurmJob> Job(int64_t job) override;
  StatusOr<int64_t> Submit(const JobRequest& request) override;
  Status SetRequiredNodes(int64_t job, const std::vector<std::string>& nodes) override;
  Status Release(int64_t job) override;
  Status Hold(int64_t job) override;
  Status SetPriority(int64_t job, int64_t priority) override;
  Status Requeue(int64_t job, bool hold) override;
  Status Cancel(int64_t job) override;
  Status Signal(int64_t job, const std::string& signal) override;

 private:
  // GETs `endpoint`, failing on Slurm's errors.
  StatusOr<nlohmann::json> Read(const std::string& endpoint);
  // POSTs an update of `job`.
  Status Update(int64_t job, const nlohmann::json& body, const std::string& what);

  std::unique_ptr<ApiShapes> shapes_;
  std::string release_;
  // When this client last requeued each job, by the wall clock (see Release).
  std::map<int64_t, std::chrono::system_clock::time_point> requeued_at_;
  HttpJson http_;
  Scontrol scontrol_;
};

}  // namespace airtime::slurm
