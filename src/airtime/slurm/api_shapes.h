// ApiShapes: the JSON of one slurmrestd API version, and nothing else.
//
// Everything that differs between slurmrestd's versions (paths, field names, how numbers and
// errors are written, what an update may change) lives behind this interface, one
// implementation per version; the client (rest_client.h) speaks only records.h and
// job_request.h. Debian 12's Slurm 22.05 serves v0.0.38 (api_v0_0_38.cc, checked against the
// lab's slurmrestd). Slurm 23.11 to 25.11 serve v0.0.40 to v0.0.44, which write numbers as
// {"set","infinite","number"} objects, states as arrays, and accept required_nodes in an
// update: api_v0_0_40.cc, written from Slurm's own parser source (docs/slurm.md).
//
// Parsers never throw and never trust the input: a missing or mistyped field is an
// InvalidArgument naming it ("GET /nodes: nodes[2].gres: expected a string, got an integer").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "airtime/base/status.h"
#include "airtime/slurm/job_request.h"
#include "airtime/slurm/records.h"

namespace airtime::slurm {

class ApiShapes {
 public:
  virtual ~ApiShapes() = default;

  // "v0.0.38".
  virtual std::string_view Version() const = 0;
  // The path of an endpoint under this version: Path("jobs") -> "/slurm/v0.0.38/jobs".
  std::string Path(std::string_view endpoint) const;

  virtual StatusOr<std::vector<SlurmNode>> ParseNodes(const nlohmann::json& body) const = 0;
  virtual StatusOr<std::vector<SlurmPartition>> ParsePartitions(
      const nlohmann::json& body) const = 0;
  virtual StatusOr<std::vector<SlurmJob>> ParseJobs(const nlohmann::json& body) const = 0;
  // The Slurm release a response names ("22.05.8"); "" when it names none.
  virtual std::string ParseRelease(const nlohmann::json& body) const = 0;

  // The errors a response reports, as one Status (OK when none). `what` names the call.
  // Every version so far writes them alike ("errors": [{"error", "description",
  // "error_number"}]).
  virtual Status ResponseErrors(const nlohmann::json& body, std::string_view what) const;

  // The answer to DELETE job/{id} (a cancel, or a signal with ?signal=): its errors, and the
  // failures it lists per job in "status" (slurmctld's slurm_kill_jobs, from 24.11 on: a
  // job that could not be signalled is not in "errors"); a job already ended is not one.
  virtual Status SignalErrors(const nlohmann::json& body, std::string_view what) const;

  // POST job/submit: the body, and the job id from the answer.
  virtual StatusOr<nlohmann::json> SubmitBody(const JobRequest& request) const = 0;
  // The job id, or the errors when there is none (alike in every version so far).
  virtual StatusOr<int64_t> ParseSubmitted(const nlohmann::json& body) const;

  // POST job/{id}: the bodies of the updates this version can make.
  virtual nlohmann::json HoldBody() const = 0;
  // Release: no longer held, and eligible now. A requeued job is otherwise not eligible for
  // about 2 minutes (22.05 sets its begin time 121 s ahead). Not "now+N": slurmctld does not
  // wake up when a begin time passes, so the job would wait for its next periodic pass
  // (up to a minute).
  virtual nlohmann::json ReleaseBody() const = 0;
  virtual nlohmann::json PriorityBody(int64_t priority) const = 0;
  // The update that sets a pending job's required nodes (ReqNodeList), or nullopt where this
  // version cannot: v0.0.38 refuses the key ("Disabled key: required_nodes"), and the client
  // then uses scontrol.
  virtual std::optional<nlohmann::json> RequiredNodesBody(
      const std::vector<std::string>& nodes) const = 0;
};

// The versions this build speaks, newest first. SLURM_REST_API (rest_client.h) pins one.
std::vector<std::string> SupportedApiVersions();

// The shapes of `version`, or nullptr when this build does not speak it.
std::unique_ptr<ApiShapes> ShapesFor(std::string_view version);

// The newest version that both this build and the server speak, from the server's OpenAPI
// document (GET /openapi: its "paths" name /slurm/vX.Y.Z/...). FailedPrecondition, naming
// the server's versions, when there is none in common.
StatusOr<std::string> ChooseApiVersion(const nlohmann::json& openapi);

}  // namespace airtime::slurm
