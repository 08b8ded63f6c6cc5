#include "airtime/slurm/rest_client.h"

#include <algorithm>
#include <cstdlib>
#include <thread>

#include "airtime/base/strings.h"
#include "airtime/slurm/hostlist.h"
#include "airtime/slurm/squeue.h"

namespace airtime::slurm {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

Status CheckJobId(int64_t job) {
  if (job <= 0) return InvalidArgument("Slurm job id " + std::to_string(job) + " is not positive");
  return OkStatus();
}

}  // namespace

StatusOr<SlurmConnectOptions> SlurmOptionsFromEnv() {
  SlurmConnectOptions o;
  o.rest.url = Env("SLURMRESTD_URL");
  o.rest.token = Env("SLURM_REST_TOKEN");
  o.rest.user = Env("SLURM_REST_USER");
  if (o.rest.user.empty()) o.rest.user = Env("USER");
  o.scontrol.slurm_conf = Env("SLURM_CONF");
  o.api_version = Env("SLURM_REST_API");
  if (o.rest.url.empty()) return FailedPrecondition("SLURMRESTD_URL is not set");
  if (o.rest.token.empty()) return FailedPrecondition("SLURM_REST_TOKEN is not set");
  if (o.rest.user.empty()) return FailedPrecondition("SLURM_REST_USER is not set");
  return o;
}

StatusOr<std::unique_ptr<SlurmClient>> ConnectSlurm(SlurmConnectOptions options) {
  if (options.scontrol.jwt.empty()) options.scontrol.jwt = options.rest.token;
  std::string version = options.api_version;
  HttpJson http(options.rest);
  if (version.empty()) {
    auto openapi = http.Get("/openapi");
    if (!openapi.ok()) return openapi.status();
    auto chosen = ChooseApiVersion(*openapi);
    if (!chosen.ok()) return chosen.status();
    version = *chosen;
  }
  std::unique_ptr<ApiShapes> shapes = ShapesFor(version);
  if (shapes == nullptr)
    return FailedPrecondition("Slurm API '" + version.substr(0, 40) +
                              "' (SLURM_REST_API) is not one this build speaks (" +
                              Join(SupportedApiVersions(), ", ") + ")");
  auto ping = http.Get(shapes->Path("ping"));
  if (!ping.ok()) return ping.status();
  AIRTIME_RETURN_IF_ERROR(shapes->ResponseErrors(*ping, "GET " + shapes->Path("ping")));
  const std::string release = shapes->ParseRelease(*ping);
  return std::unique_ptr<SlurmClient>(
      std::make_unique<RestSlurmClient>(std::move(options), std::move(shapes), release));
}

RestSlurmClient::RestSlurmClient(SlurmConnectOptions options, std::unique_ptr<ApiShapes> shapes,
                                 std::string release)
    : shapes_(std::move(shapes)),
      release_(std::move(release)),
      http_(options.rest),
      scontrol_(options.scontrol) {}

StatusOr<nlohmann::json> RestSlurmClient::Read(const std::string& endpoint) {
  const std::string path = shapes_->Path(endpoint);
  auto body = http_.Get(path);
  if (!body.ok()) return body.status();
  AIRTIME_RETURN_IF_ERROR(shapes_->ResponseErrors(*body, "GET " + path));
  return body;
}

StatusOr<std::vector<SlurmNode>> RestSlurmClient::Nodes() {
  auto body = Read("nodes");
  if (!body.ok()) return body.status();
  return shapes_->ParseNodes(*body);
}

StatusOr<std::vector<SlurmPartition>> RestSlurmClient::Partitions() {
  auto body = Read("partitions");
  if (!body.ok()) return body.status();
  return shapes_->ParsePartitions(*body);
}

StatusOr<std::vector<SlurmJob>> RestSlurmClient::Jobs() {
  auto body = Read("jobs");
  if (!body.ok()) return body.status();
  return shapes_->ParseJobs(*body);
}

StatusOr<std::vector<SlurmJob>> RestSlurmClient::JobStates() {
  auto out = scontrol_.Squeue(SqueueBriefArgs());
  if (!out.ok()) return out.status();
  return ParseSqueueBrief(*out);
}

StatusOr<SlurmJob> RestSlurmClient::Job(int64_t job) {
  AIRTIME_RETURN_IF_ERROR(CheckJobId(job));
  const std::string path = shapes_->Path("job/" + std::to_string(job));
  auto body = http_.Get(path);
  if (!body.ok()) return body.status();
  auto jobs = shapes_->ParseJobs(*body);
  if (!jobs.ok()) return jobs.status();
  // An unknown job is an error in the answer ("Invalid job id specified") and no job.
  for (SlurmJob& j : *jobs)
    if (j.id == job) return std::move(j);
  Status errors = shapes_->ResponseErrors(*body, "GET " + path);
  return Status(StatusCode::kNotFound, "GET " + path + ": job " + std::to_string(job) +
                                           " is not in the answer" +
                                           (errors.ok() ? "" : " (" + errors.message() + ")"));
}

StatusOr<int64_t> RestSlurmClient::Submit(const JobRequest& request) {
  auto body = shapes_->SubmitBody(request);
  if (!body.ok()) return body.status();
  auto answer = http_.Post(shapes_->Path("job/submit"), *body);
  if (!answer.ok()) return answer.status();
  return shapes_->ParseSubmitted(*answer);
}

Status RestSlurmClient::Update(int64_t job, const nlohmann::json& body, const std::string& what) {
  AIRTIME_RETURN_IF_ERROR(CheckJobId(job));
  const std::string path = shapes_->Path("job/" + std::to_string(job));
  auto answer = http_.Post(path, body);
  if (!answer.ok()) return answer.status();
  return shapes_->ResponseErrors(*answer, what + " of job " + std::to_string(job));
}

Status RestSlurmClient::SetRequiredNodes(int64_t job, const std::vector<std::string>& nodes) {
  AIRTIME_RETURN_IF_ERROR(CheckJobId(job));
  if (nodes.empty())
    return InvalidArgument("job " + std::to_string(job) + ": no nodes to steer to");
  for (const std::string& n : nodes)
    if (!ValidNodeName(n))
      return InvalidArgument("job " + std::to_string(job) + ": node name '" + n.substr(0, 100) +
                             "' is not [A-Za-z0-9._-]");
  // Only ReqNodeList steers a pending job (NodeList= would only shrink a running one).
  if (auto body = shapes_->RequiredNodesBody(nodes)) return Update(job, *body, "required nodes");
  auto out =
      scontrol_.Run({"update", "JobId=" + std::to_string(job), "ReqNodeList=" + Join(nodes, ",")});
  return out.ok() ? OkStatus() : out.status();
}

Status RestSlurmClient::Release(int64_t job) {
  // A requeue revokes the job's credential on its nodes, and slurmd compares credentials by
  // the wall-clock second: a new run of the job allocated within the second of the
  // revocation is refused ("Job credential revoked") and the job FAILS. Released soon after
  // this client requeued it, the job waits for the second after the one that began half a
  // second after the requeue (0.5-1.5 s; the half second covers the revocation reaching
  // slurmd after the requeue returned).
  if (auto it = requeued_at_.find(job); it != requeued_at_.end()) {
    using std::chrono::system_clock;
    const auto after =
        std::chrono::floor<std::chrono::seconds>(it->second + std::chrono::milliseconds(500)) +
        std::chrono::seconds(1);
    requeued_at_.erase(it);
    if (system_clock::now() < after) std::this_thread::sleep_until(after);
  }
  return Update(job, shapes_->ReleaseBody(), "release");
}

Status RestSlurmClient::Hold(int64_t job) { return Update(job, shapes_->HoldBody(), "hold"); }

Status RestSlurmClient::SetPriority(int64_t job, int64_t priority) {
  if (priority < 1 || priority > 0xFFFFFFFELL)
    return InvalidArgument("job " + std::to_string(job) + ": priority " + std::to_string(priority) +
                           " is outside 1..4294967294");
  return Update(job, shapes_->PriorityBody(priority), "priority");
}

Status RestSlurmClient::Requeue(int64_t job, bool hold) {
  AIRTIME_RETURN_IF_ERROR(CheckJobId(job));
  const auto asked = std::chrono::system_clock::now();
  auto out = scontrol_.Run({hold ? "requeuehold" : "requeue", std::to_string(job)});
  if (!out.ok()) return out.status();
  if (requeued_at_.size() > 100000) requeued_at_.clear();  // bounded; entries matter 2 s
  requeued_at_[job] = asked;
  return OkStatus();
}

Status RestSlurmClient::Cancel(int64_t job) {
  AIRTIME_RETURN_IF_ERROR(CheckJobId(job));
  const std::string path = shapes_->Path("job/" + std::to_string(job));
  auto answer = http_.Delete(path);
  if (!answer.ok()) return answer.status();
  return shapes_->SignalErrors(*answer, "cancel of job " + std::to_string(job));
}

Status RestSlurmClient::Signal(int64_t job, const std::string& signal) {
  AIRTIME_RETURN_IF_ERROR(CheckJobId(job));
  const bool valid = !signal.empty() && signal.size() <= 16 &&
                     std::all_of(signal.begin(), signal.end(), [](char c) {
                       return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
                     });
  if (!valid)
    return InvalidArgument("job " + std::to_string(job) + ": signal '" + signal.substr(0, 32) +
                           "' is not a name such as USR1 or a number");
  // DELETE with ?signal= signals the job (v0.0.38: every process, the batch shell too)
  // rather than cancelling it.
  const std::string path = shapes_->Path("job/" + std::to_string(job)) + "?signal=" + signal;
  auto answer = http_.Delete(path);
  if (!answer.ok()) return answer.status();
  return shapes_->SignalErrors(*answer, "signal " + signal + " to job " + std::to_string(job));
}

}  // namespace airtime::slurm
