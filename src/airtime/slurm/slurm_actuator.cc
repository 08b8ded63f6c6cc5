#include "airtime/slurm/slurm_actuator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <utility>

#include "airtime/base/strings.h"
#include "airtime/exec/run_files.h"

namespace airtime::slurm {

namespace {

// Slurm states in which a job keeps its resources and may still run: watched on.
bool Holding(const std::string& state) {
  return state == "RUNNING" || state == "COMPLETING" || state == "CONFIGURING" ||
         state == "SUSPENDED" || state == "STOPPED" || state == "RESIZING" ||
         state == "SIGNALING" || state == "STAGE_OUT";
}

// Variables the local executor sets that mean nothing on a Slurm node: the GPUs by the
// daemon's ids (Slurm sets CUDA_VISIBLE_DEVICES to the GPUs it chose) and the daemon's own
// MPS server's directories. A fraction's MPS limits stay (PlanLaunch).
bool SlurmSetsIt(const std::string& name) {
  return name == "CUDA_VISIBLE_DEVICES" || name == "NVIDIA_VISIBLE_DEVICES" ||
         name == "CUDA_MPS_PIPE_DIRECTORY" || name == "CUDA_MPS_LOG_DIRECTORY";
}

// A fraction's pinned-memory limit per GPU, "UUID=NMB[,...]" by the daemon's GPU ids, as the
// job sees its one GPU: device 0 ("0=NMB"), or "" when it says none.
std::string PinnedLimitOnNode(const std::string& value) {
  const size_t eq = value.find('=');
  if (eq == std::string::npos) return "";
  const std::string limit = value.substr(eq + 1, value.find(',', eq) - eq - 1);
  return limit.empty() ? "" : "0=" + limit;
}

// More jobs than this newly holding GPUs in one poll: their full records come from one read
// of the whole job list (at 1,000 jobs about 0.3 s) rather than one read each (a few ms each;
// docs/slurm.md).
constexpr size_t kJobReadsPerPoll = 32;

// The node of a GPU id SlurmGpuId made ("slurm:NODE:INDEX" -> "NODE"); "" for another id.
std::string NodeOfGpuId(const std::string& id) {
  const size_t last = id.rfind(':');
  if (id.rfind("slurm:", 0) != 0 || last < 6) return "";
  return id.substr(6, last - 6);
}

// The PORT a request's environment gives its replica (0: none): the last AIRTIME_PORT, as the
// job's environment (a map, filled in order) keeps the last.
int PortOf(const EnvVars& env) {
  for (auto it = env.rbegin(); it != env.rend(); ++it) {
    if (it->first != "AIRTIME_PORT") continue;
    const std::optional<int64_t> port = ParseInt(it->second);
    return port && *port > 0 && *port <= 65535 ? static_cast<int>(*port) : 0;
  }
  return 0;
}

}  // namespace

std::string SlurmGpuId(const std::string& node, int index) {
  return "slurm:" + node + ":" + std::to_string(index);
}

std::string BatchScript(const std::vector<std::string>& argv) {
  std::string script =
      "#!/bin/sh\n# written by airtime: runs the workload's command as it is\nexec";
  for (const std::string& a : argv) {
    script += " '";
    for (char c : a) {
      if (c == '\'')
        script += "'\\''";
      else
        script += c;
    }
    script += "'";
  }
  return script + "\n";
}

int ExitCodeOf(int64_t wait_status) {
  if (wait_status < 0 || wait_status > 0xffff) return -1;
  const int sig = static_cast<int>(wait_status & 0x7f);
  if (sig != 0) return 128 + sig;
  return static_cast<int>((wait_status >> 8) & 0xff);
}

bool FinalJobState(const std::string& state) {
  return state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT" ||
         state == "NODE_FAIL" || state == "OUT_OF_MEMORY" || state == "BOOT_FAIL" ||
         state == "DEADLINE" || state == "PREEMPTED" || state == "REVOKED" ||
         state == "SPECIAL_EXIT";
}

SlurmActuator::SlurmActuator(std::unique_ptr<SlurmClient> client,
                             std::unique_ptr<SlurmClient> reader, const SlurmCluster& cluster,
                             SlurmActuatorOptions options,
                             std::vector<std::unique_ptr<SlurmClient>> submitters)
    : client_(std::move(client)),
      options_(std::move(options)),
      submit_(client_.get(), std::move(submitters)),
      reader_(std::move(reader)),
      shards_per_gpu_(cluster.shards_per_gpu),
      address_of_(cluster.address_of) {
  for (const auto& g : cluster.slurm_gpu) {
    known_gpus_.insert(SlurmGpuId(g.node, g.index));
    gpus_of_node_[g.node].push_back(SlurmGpuId(g.node, g.index));
    type_of_node_[g.node + ":" + std::to_string(g.index)] = g.type;
  }
  poll_due_ = Clock::now();
  poller_ = std::thread([this] { PollerLoop(); });
}

SlurmActuator::~SlurmActuator() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ending_ = true;
  }
  poll_cv_.notify_all();
  poller_.join();
}

void SlurmActuator::PollerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!ending_) {
    if (Clock::now() < poll_due_) {
      poll_cv_.wait_until(lock, poll_due_);
      continue;  // asked sooner, ending, or due: looked at again
    }
    const int64_t seq = ++polls_begun_;
    // Polls begin every poll_interval (sooner when asked for during this one).
    poll_due_ = Clock::now() + options_.poll_interval;
    lock.unlock();
    Snapshot snapshot = Read(seq);
    lock.lock();
    if (snapshot.status.ok() && snapshot.nodes_status.ok())
      last_error_.clear();
    else
      last_error_ = (snapshot.status.ok() ? snapshot.nodes_status : snapshot.status).message();
    fresh_ = std::move(snapshot);  // an older one not applied yet is outdated by this one
    cv_.notify_all();
  }
}

SlurmActuator::Snapshot SlurmActuator::Read(int64_t seq) {
  Snapshot s;
  s.seq = seq;
  auto jobs = reader_->JobStates();
  if (!jobs.ok()) {
    // Slurm unreachable (slurmctld restarting): nothing is concluded; the next poll retries.
    ++poll_errors_;
    s.status = jobs.status();
    return s;
  }
  s.jobs = std::move(*jobs);
  // The full record of each job that holds GPUs, once per run of it (its restart count).
  std::vector<SlurmJob*> missing;
  std::set<int64_t> holding;
  for (SlurmJob& j : s.jobs) {
    if (!Holding(j.state)) continue;
    holding.insert(j.id);
    if (!details_.count({j.id, j.restarts})) missing.push_back(&j);
  }
  auto keep = [&](const SlurmJob& full) {
    // Without GPUs (not allocated yet, or already released) it is read again next time.
    if (!full.gpus.empty()) details_[{full.id, full.restarts}] = full;
  };
  // A job without its GPUs would make them look free (a foreign job's) or leave a placement
  // unknown: a read that fails fails the poll. A job Slurm no longer knows has ended.
  auto failed = [&](const Status& st) {
    ++poll_errors_;
    s.status = st;
    s.jobs.clear();
    return s;
  };
  if (missing.size() > kJobReadsPerPoll) {
    ++list_reads_;
    auto all = reader_->Jobs();
    if (!all.ok()) return failed(all.status());
    for (const SlurmJob& full : *all)
      if (holding.count(full.id)) keep(full);
  } else {
    for (SlurmJob* j : missing) {
      ++job_reads_;
      auto full = reader_->Job(j->id);
      if (full.ok())
        keep(*full);
      else if (full.status().code() != StatusCode::kNotFound)
        return failed(full.status());
    }
  }
  for (auto it = details_.begin(); it != details_.end();)
    it = holding.count(it->first.first) ? std::next(it) : details_.erase(it);
  // The brief record's state is the newer: only what it lacks comes from the full one.
  for (SlurmJob& j : s.jobs) {
    auto d = details_.find({j.id, j.restarts});
    if (d == details_.end()) continue;
    j.name = d->second.name;
    j.comment = d->second.comment;
    j.partition = d->second.partition;
    if (j.user.empty()) j.user = d->second.user;
    j.nodes = d->second.nodes;
    j.gpus = d->second.gpus;
  }
  // Nodes Slurm will not start work on (an admin's DOWN or DRAIN, a node not responding).
  auto nodes = reader_->Nodes();
  if (!nodes.ok()) {
    ++poll_errors_;
    s.nodes_status = nodes.status();
  } else {
    s.nodes = std::move(*nodes);
  }
  return s;
}

void SlurmActuator::PollBy(Clock::time_point at) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (at >= poll_due_) return;
    poll_due_ = at;
  }
  poll_cv_.notify_all();
}

void SlurmActuator::PollSoon() { PollBy(Clock::now()); }

int64_t SlurmActuator::polls() const {
  std::lock_guard<std::mutex> lock(mu_);
  return polls_begun_;
}

void SlurmActuator::SetError(std::string message) {
  std::lock_guard<std::mutex> lock(mu_);
  last_error_ = std::move(message);
}

StatusOr<SlurmActuator::Shape> SlurmActuator::ShapeOf(const std::vector<std::string>& gpus) const {
  Shape shape;
  std::map<std::string, int64_t> per_node;
  std::vector<std::string> order;
  std::optional<std::string> type;
  for (const std::string& id : gpus) {
    if (!known_gpus_.count(id))
      return InvalidArgument("GPU '" + id + "' is not a GPU of the Slurm cluster airtime read");
    const std::string node = NodeOfGpuId(id);
    const std::string& t = type_of_node_.at(node + id.substr(id.rfind(':')));
    if (type && *type != t)
      return InvalidArgument("GPUs of two types (" + *type + ", " + t +
                             ") in one Slurm job: its GRES asks for one type");
    type = t;
    if (per_node[node]++ == 0) order.push_back(node);
  }
  shape.gpu_type = type.value_or("");
  shape.nodes = order;
  for (const auto& [node, count] : per_node) {
    if (shape.gpus_per_node == 0) shape.gpus_per_node = count;
    if (count != shape.gpus_per_node)
      return InvalidArgument("unequal GPU counts per node (" + std::to_string(count) + " on '" +
                             node + "', " + std::to_string(shape.gpus_per_node) +
                             " elsewhere): a Slurm job asks for the same count on each node");
  }
  return shape;
}

StatusOr<RunHandle> SlurmActuator::Launch(const LaunchRequest& request) {
  return std::move(LaunchAll({request}).front().handle);
}

StatusOr<int64_t> SlurmActuator::ShardsFor(int share_milli, const Shape& shape) const {
  if (share_milli < 1)
    return InvalidArgument("a share of " + std::to_string(share_milli) + "/1000 of a GPU");
  if (shape.gpus_per_node != 1)
    return InvalidArgument("a fraction (" + std::to_string(share_milli) + "/1000) of " +
                           std::to_string(shape.gpus_per_node) +
                           " GPUs per node: Slurm takes a job's shards on a node from one GPU");
  int64_t shards = 0;
  for (const std::string& node : shape.nodes) {
    auto it = shards_per_gpu_.find(node);
    if (it == shards_per_gpu_.end() || it->second < 1)
      return FailedPrecondition("a fraction (" + std::to_string(share_milli) +
                                "/1000 of a GPU) on Slurm node '" + node +
                                "', which has no gres/shard (docs/slurm.md, Fractions)");
    // Rounded up: Slurm never gives less than the engine counted.
    const int64_t k = (static_cast<int64_t>(share_milli) * it->second + 999) / 1000;
    if (shards != 0 && k != shards)
      return InvalidArgument("a fraction on nodes with different shards per GPU (" +
                             std::to_string(shards) + ", " + std::to_string(k) + " on '" + node +
                             "'): a Slurm job asks for the same on each node");
    shards = k;
  }
  return shards;
}

StatusOr<SlurmActuator::Plan> SlurmActuator::PlanLaunch(const LaunchRequest& request) {
  if (request.argv.empty()) return InvalidArgument("no command to run");
  auto shape = ShapeOf(request.gpus);
  if (!shape.ok()) return shape.status();
  if (request.share_milli < 1000) {
    // A fraction: gres/shard of one GPU of the node, never a whole GPU.
    auto shards = ShardsFor(request.share_milli, *shape);
    if (!shards.ok()) return shards.status();
    shape->shards = *shards;
    shape->gpu_type.clear();
  }
  Plan plan;
  plan.shape = *shape;
  plan.port = PortOf(request.env);
  // A job airtime parked for this workload (of this shape: a replica of a service has
  // several): the same Slurm job runs again. On this thread, with client_: its Release
  // waits out the second of the requeue that client_ made (SlurmClient::Release).
  if (auto p = parked_.find(request.workload); p != parked_.end()) {
    std::vector<Parked>& jobs = p->second;
    auto same = std::find_if(jobs.begin(), jobs.end(), [&](const Parked& j) {
      return j.shape.gpu_type == shape->gpu_type && j.shape.gpus_per_node == shape->gpus_per_node &&
             j.shape.shards == shape->shards && j.shape.nodes.size() == shape->nodes.size();
    });
    if (same != jobs.end()) {
      const Parked parked = *same;
      jobs.erase(same);
      if (jobs.empty()) parked_.erase(p);
      Status st = client_->SetRequiredNodes(parked.job, shape->nodes);
      if (st.ok()) st = client_->Release(parked.job);
      if (st.ok()) {
        plan.parked_job = parked.job;
        plan.port = parked.port;  // its environment's, not the request's
        return plan;
      }
      (void)client_->Cancel(parked.job);  // not reusable: a new job below
    }
  }
  JobRequest& job = plan.job;
  job.name = options_.job_prefix + request.workload + ".r" + std::to_string(request.run_id);
  job.comment =
      "airtime: " + (request.comment.empty() ? "workload " + request.workload : request.comment) +
      OwnerMark();
  job.partition = options_.partition;
  job.gpu_type = shape->gpu_type;
  job.gpus_per_node = shape->shards > 0 ? 0 : shape->gpus_per_node;
  job.shards_per_node = shape->shards;
  job.nodes = std::max<int64_t>(1, static_cast<int64_t>(shape->nodes.size()));
  job.script = BatchScript(request.argv);
  // As the local executor (the seam's contract, LaunchRequest::workdir): without a workdir,
  // the daemon's own working directory, so that a command's relative paths mean the same
  // under either backend (and as sbatch's default, the submitter's directory).
  job.working_directory = request.workdir;
  if (job.working_directory.empty()) {
    std::error_code ec;
    job.working_directory = std::filesystem::current_path(ec).string();
    if (ec) return FailedPrecondition("the daemon's working directory: " + ec.message());
  }
  job.standard_output = request.run_dir + "/" + kStdoutLog;
  for (const auto& [k, v] : request.env) {
    if (SlurmSetsIt(k)) continue;
    if (k == "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT") {
      // A fraction holds one GPU of its node, which the job sees as device 0. With the
      // thread percentage, it is fenced where the node runs an MPS control daemon (docs/
      // slurm.md, "Fractions"); elsewhere CUDA ignores both.
      if (const std::string on_node = PinnedLimitOnNode(v); !on_node.empty())
        job.environment[k] = on_node;
      continue;
    }
    job.environment[k] = v;
  }
  // Submitted released, with the engine's nodes as its required nodes: one call. (Held,
  // steered by scontrol and released took three, one of them a process: 25 ms on average
  // and up to 250 ms per start in a burst of 1,000, against 5-10 ms; docs/slurm.md.)
  job.required_nodes = shape->nodes;
  job.hold = false;
  job.requeue = true;
  return plan;
}

std::vector<LaunchResult> SlurmActuator::LaunchAll(const std::vector<LaunchRequest>& requests) {
  // Each request's plan on this thread (a parked job is steered and released here); then the
  // new jobs' submissions, concurrently (submit_); then the results, in order, here.
  std::vector<std::optional<LaunchResult>> results(requests.size());
  // Request `i` runs as Slurm job `job`, accepted at `at`.
  auto started = [&](size_t i, int64_t job, const Plan& plan, Clock::time_point at) {
    RunHandle handle;
    handle.run_dir = requests[i].run_dir;
    handle.slurm_job = job;
    handle.port = plan.port;
    launched_[job] = Launched{plan.shape, requests[i].workload, plan.port};
    results[i].emplace(LaunchResult{handle, at});
  };
  std::vector<Plan> plans;
  std::vector<size_t> planned;  // the request of each plan
  for (size_t i = 0; i < requests.size(); ++i) {
    auto plan = PlanLaunch(requests[i]);
    if (!plan.ok()) {
      results[i].emplace(LaunchResult{plan.status(), Clock::now()});
    } else if (plan->parked_job > 0) {
      started(i, plan->parked_job, *plan, Clock::now());
    } else {
      plans.push_back(std::move(*plan));
      planned.push_back(i);
    }
  }
  std::vector<JobRequest> jobs;
  jobs.reserve(plans.size());
  for (Plan& p : plans) jobs.push_back(std::move(p.job));
  std::vector<SubmitPool::Submitted> submitted = submit_.SubmitAll(jobs);
  for (size_t k = 0; k < planned.size(); ++k) {
    SubmitPool::Submitted& s = submitted[k];
    if (s.job.ok()) {
      started(planned[k], *s.job, plans[k], s.at);
    } else {
      results[planned[k]].emplace(LaunchResult{s.job.status(), s.at});
    }
  }
  std::vector<LaunchResult> out;
  out.reserve(results.size());
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

Status SlurmActuator::Watch(int64_t run_id, const RunHandle& handle) {
  if (handle.slurm_job <= 0)
    return InvalidArgument("run " + std::to_string(run_id) + ": no Slurm job id to watch");
  Watched w;
  w.job = handle.slurm_job;
  w.since = polls();
  w.port = handle.port;
  if (auto it = launched_.find(handle.slurm_job); it != launched_.end()) {
    w.shape = it->second.shape;
    w.workload = it->second.workload;
    w.port = it->second.port;
    launched_.erase(it);
  }
  watched_[run_id] = std::move(w);
  return OkStatus();
}

void SlurmActuator::Wake() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    woken_ = true;
  }
  cv_.notify_all();
}

std::vector<Exited> SlurmActuator::WaitForExits(int timeout_ms) {
  const auto now = Clock::now();
  const auto deadline =
      timeout_ms < 0 ? now + std::chrono::hours(24) : now + std::chrono::milliseconds(timeout_ms);
  std::vector<Exited> exits;
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    const bool ready = cv_.wait_until(lock, deadline, [&] { return woken_ || fresh_.has_value(); });
    std::optional<Snapshot> snapshot = std::move(fresh_);
    fresh_.reset();
    const bool woken = std::exchange(woken_, false);
    bool news = false;
    if (snapshot) {
      lock.unlock();
      news = Apply(*snapshot, &exits);
      lock.lock();
    }
    if (news || woken || !ready) break;
  }
  return exits;
}

int SlurmActuator::ForeignMilli(const NodeGpus& ng) const {
  if (ng.shards <= 0 || ng.indices.empty()) return 1000;  // whole GPUs
  auto it = shards_per_gpu_.find(ng.node);
  // Shards on a node airtime reads none for: the GPU is not airtime's to share.
  if (it == shards_per_gpu_.end() || it->second < 1) return 1000;
  // Spread over the GPUs they came from (Slurm 22.05 takes them from one), rounded up; in
  // double, so that no count Slurm reports can overflow.
  const auto n = static_cast<double>(ng.indices.size());
  const double per_gpu = std::ceil(static_cast<double>(ng.shards) / n);
  const double milli = std::ceil(per_gpu * 1000.0 / static_cast<double>(it->second));
  return static_cast<int>(std::clamp(milli, 1.0, 1000.0));
}

std::vector<std::string> SlurmActuator::GpuIds(const SlurmJob& job) const {
  std::vector<std::string> ids;
  for (const NodeGpus& ng : job.gpus)
    for (int i : ng.indices) ids.push_back(SlurmGpuId(ng.node, i));
  return ids;
}

bool SlurmActuator::Apply(const Snapshot& snapshot, std::vector<Exited>* exits) {
  applied_seq_ = std::max(applied_seq_, snapshot.seq);
  if (!snapshot.status.ok()) return false;
  const size_t exits_before = exits->size(), placed_before = placed_.size();
  const std::vector<SlurmJob>* jobs = &snapshot.jobs;
  std::map<int64_t, const SlurmJob*> by_id;
  for (const SlurmJob& j : *jobs) by_id[j.id] = &j;
  std::set<int64_t>& ours = ever_ours_;
  for (const auto& [w, jobs] : parked_)
    for (const Parked& p : jobs) ours.insert(p.job);
  const auto now = Clock::now();
  for (auto it = watched_.begin(); it != watched_.end();) {
    const int64_t run = it->first;
    Watched& w = it->second;
    ours.insert(w.job);
    if (snapshot.seq <= w.since) {
      // Begun before the job was watched or acted on: it may not list it, or not as it is.
      ++it;
      continue;
    }
    auto found = by_id.find(w.job);
    if (found == by_id.end()) {
      exits->push_back(Exited{run, -1, "gone from Slurm's job list"});
      it = watched_.erase(it);
      continue;
    }
    const SlurmJob& j = *found->second;
    if (w.restarts < 0) w.restarts = j.restarts;
    if (FinalJobState(j.state)) {
      // Ended within a stop's grace (a workload that checkpoints and exits on the signal):
      // requeued and held all the same, so that its next start is this job again.
      const bool park = w.stopping && !w.acted && w.shape && !retired_.count(w.workload) &&
                        client_->Requeue(w.job, /*hold=*/true).ok();
      if (park) parked_[w.workload].push_back(Parked{w.job, *w.shape, w.port});
      exits->push_back(
          Exited{run, ExitCodeOf(j.exit_code), ToLower(j.state) + (park ? ", requeued" : "")});
      it = watched_.erase(it);
      continue;
    }
    if (Holding(j.state)) {
      if (j.state == "RUNNING") {
        w.running_seen = true;
        if (!w.placed && !j.gpus.empty()) {
          placed_.push_back(Placed{run, GpuIds(j)});
          w.placed = true;
        }
      }
      if (w.stopping && !w.acted && now >= w.act_at) StopAction(run, w, j);
      ++it;
      continue;
    }
    // Pending again (or still): requeued by airtime, by Slurm itself, or not started yet.
    if (w.acted) {
      if (w.parks) {
        if (retired_.count(w.workload)) {
          (void)client_->Cancel(w.job);
        } else {
          parked_[w.workload].push_back(Parked{w.job, *w.shape, w.port});
        }
      }
      exits->push_back(Exited{run, 143, w.running_seen ? "requeued" : "held before it ran"});
      it = watched_.erase(it);
      continue;
    }
    if (w.running_seen || j.restarts > w.restarts) {
      // Slurm requeued it (its node went down, or an admin): were it left pending, Slurm
      // would run it again behind airtime's back, while airtime places it anew.
      ++slurm_requeues_;
      Status st = client_->Cancel(w.job);
      exits->push_back(Exited{run, -1,
                              "requeued by Slurm (" + j.state_reason + "); job " +
                                  std::to_string(w.job) +
                                  (st.ok() ? " cancelled" : " not cancelled: " + st.message())});
      it = watched_.erase(it);
      continue;
    }
    if (w.stopping && !w.acted && now >= w.act_at) StopAction(run, w, j);
    ++it;
  }
  // Others' running jobs hold GPUs airtime cannot move.
  std::vector<ForeignUse> foreign;
  for (const SlurmJob& j : *jobs) {
    if (ours.count(j.id) || !Holding(j.state)) continue;
    const std::string owner =
        "slurm job " + std::to_string(j.id) + " '" + j.name + "' (" + j.user + ")";
    for (const NodeGpus& ng : j.gpus)
      for (int i : ng.indices)
        foreign.push_back(ForeignUse{SlurmGpuId(ng.node, i), owner, ForeignMilli(ng)});
  }
  auto key = [](const std::vector<ForeignUse>& v) {
    std::vector<std::string> k;
    for (const ForeignUse& f : v)
      k.push_back(f.gpu + "=" + f.owner + "@" + std::to_string(f.milli));
    std::sort(k.begin(), k.end());
    return k;
  };
  bool news = exits->size() > exits_before || placed_.size() > placed_before;
  if (key(foreign) != key(foreign_)) {
    foreign_ = std::move(foreign);
    foreign_changed_ = true;
    news = true;
  }
  if (!snapshot.nodes_status.ok()) return news;
  std::vector<std::string> unusable;
  for (const SlurmNode& n : snapshot.nodes) {
    if (n.Usable()) continue;
    auto it = gpus_of_node_.find(n.name);
    if (it != gpus_of_node_.end())
      unusable.insert(unusable.end(), it->second.begin(), it->second.end());
  }
  std::sort(unusable.begin(), unusable.end());
  if (unusable != unusable_) {
    unusable_ = std::move(unusable);
    unusable_changed_ = true;
    news = true;
  }
  return news;
}

std::optional<std::vector<std::string>> SlurmActuator::TakeUnusable() {
  if (!unusable_changed_) return std::nullopt;
  unusable_changed_ = false;
  return unusable_;
}

void SlurmActuator::StopAction(int64_t run_id, Watched& w, const SlurmJob& job) {
  w.acted = true;
  w.parks = w.shape.has_value() && !retired_.count(w.workload);
  Status st;
  if (!w.parks) {
    st = client_->Cancel(w.job);
    w.parks = false;
  } else if (Holding(job.state)) {
    st = client_->Requeue(w.job, /*hold=*/true);
  } else {
    st = client_->Hold(w.job);
  }
  if (!st.ok()) {
    // The job ended meanwhile, or Slurm refused: cancel it so it cannot run on.
    SetError("run " + std::to_string(run_id) + ": " + st.message());
    (void)client_->Cancel(w.job);
    w.parks = false;
  }
  // What it did shows in a poll begun from now on: one is asked for at once.
  w.since = polls();
  PollSoon();
}

Status SlurmActuator::Stop(int64_t run_id, int grace_ms) {
  auto it = watched_.find(run_id);
  if (it == watched_.end()) return NotFound("run " + std::to_string(run_id) + " is not watched");
  Watched& w = it->second;
  if (w.stopping) return OkStatus();
  w.stopping = true;
  // The checkpoint signal; a job not running yet (pending) refuses it and is held at once.
  Status st = w.running_seen ? client_->Signal(w.job, options_.stop_signal)
                             : FailedPrecondition("not running yet");
  w.act_at = Clock::now() + std::chrono::milliseconds(st.ok() ? std::max(grace_ms, 0) : 0);
  PollBy(w.act_at);  // the poll that finds the grace over acts
  return OkStatus();
}

Status SlurmActuator::StopNow(int64_t run_id) {
  auto it = watched_.find(run_id);
  if (it == watched_.end()) return NotFound("run " + std::to_string(run_id) + " is not watched");
  Watched& w = it->second;
  w.stopping = true;
  w.acted = true;
  w.parks = false;
  Status st = client_->Cancel(w.job);
  w.since = polls();
  PollSoon();
  return st;
}

StatusOr<AdoptResult> SlurmActuator::Adopt(int64_t run_id, const RunHandle& recorded) {
  auto jobs = client_->Jobs();
  if (!jobs.ok())
    return Status(jobs.status().code(),
                  "adopting run " + std::to_string(run_id) + ": " + jobs.status().message());
  AdoptResult result;
  result.handle = recorded;
  const SlurmJob* job = nullptr;
  const std::string suffix = ".r" + std::to_string(run_id);
  for (const SlurmJob& j : *jobs) {
    const bool by_id = recorded.slurm_job > 0 && j.id == recorded.slurm_job;
    // Not recorded: the daemon died between the submission and its record; the name tells.
    const bool by_name = recorded.slurm_job <= 0 && Mine(j) && j.name.size() > suffix.size() &&
                         j.name.compare(j.name.size() - suffix.size(), suffix.size(), suffix) == 0;
    if (by_id || by_name) job = &j;
  }
  if (job == nullptr) {
    if (recorded.slurm_job <= 0) {
      result.state = AdoptState::kNeverStarted;
      return result;
    }
    result.state = AdoptState::kExited;
    result.exit = Exited{run_id, -1, "gone from Slurm's job list"};
    return result;
  }
  result.handle.slurm_job = job->id;
  if (FinalJobState(job->state)) {
    result.state = AdoptState::kExited;
    result.exit = Exited{run_id, ExitCodeOf(job->exit_code), ToLower(job->state)};
    return result;
  }
  if (job->Held()) {
    // Held: airtime held or requeued it (a stop) or never released it (a launch cut short).
    // Its shape is not known any more: cancelled, not parked.
    (void)client_->Cancel(job->id);
    if (recorded.slurm_job <= 0) {
      result.state = AdoptState::kNeverStarted;
      return result;
    }
    result.state = AdoptState::kExited;
    result.exit = Exited{run_id, 143, "held in Slurm; cancelled at adoption"};
    return result;
  }
  Watched w;
  w.job = job->id;
  w.since = polls();
  w.restarts = job->restarts;
  w.port = recorded.port;  // the port recorded for the run: its job's PORT
  // Its workload from its name (PREFIX WORKLOAD .rN), its shape from the GPUs it holds: it
  // can be parked at a stop like a job launched by this daemon.
  if (auto named = RunOfName(job->name)) w.workload = named->first;
  if (auto shape = ShapeOf(GpuIds(*job)); shape.ok() && !job->gpus.empty() && !w.workload.empty()) {
    w.shape = *shape;
    // A fraction: its shards (the same on each node), untyped as launched.
    if (job->gpus.front().shards > 0) {
      w.shape->shards = job->gpus.front().shards;
      w.shape->gpu_type.clear();
    }
  }
  watched_[run_id] = std::move(w);
  result.state = AdoptState::kRunning;
  return result;
}

std::string SlurmActuator::OwnerMark() const {
  return options_.owner.empty() ? "" : " [" + options_.owner + "]";
}

// Named with this daemon's prefix, of its Slurm user, and marked as its own (OwnerMark).
bool SlurmActuator::Mine(const SlurmJob& j) const {
  const std::string mark = OwnerMark();
  return (options_.user.empty() || j.user == options_.user) &&
         j.name.rfind(options_.job_prefix, 0) == 0 && j.comment.size() >= mark.size() &&
         j.comment.compare(j.comment.size() - mark.size(), mark.size(), mark) == 0;
}

std::optional<std::pair<std::string, int64_t>> SlurmActuator::RunOfName(
    const std::string& name) const {
  const size_t r = name.rfind(".r");
  if (name.rfind(options_.job_prefix, 0) != 0 || r == std::string::npos ||
      r <= options_.job_prefix.size())
    return std::nullopt;
  const std::string_view digits = std::string_view(name).substr(r + 2);
  const std::optional<int64_t> run = ParseInt(digits);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos || !run)
    return std::nullopt;
  return std::pair{name.substr(options_.job_prefix.size(), r - options_.job_prefix.size()), *run};
}

// Jobs named PREFIX WORKLOAD .rN (as Launch names them) of this daemon's (Mine), not ended,
// whose N the store does not know.
StatusOr<std::vector<UnrecordedRun>> SlurmActuator::Unrecorded(
    const std::vector<int64_t>& recorded) {
  auto jobs = client_->Jobs();
  if (!jobs.ok())
    return Status(jobs.status().code(),
                  "listing Slurm's jobs for runs the store lost: " + jobs.status().message());
  std::vector<UnrecordedRun> out;
  for (const SlurmJob& j : *jobs) {
    if (FinalJobState(j.state) || !Mine(j)) continue;
    auto named = RunOfName(j.name);
    if (!named || std::binary_search(recorded.begin(), recorded.end(), named->second)) continue;
    UnrecordedRun u;
    u.workload = std::move(named->first);
    u.run_id = named->second;
    u.handle.slurm_job = j.id;
    u.what = "slurm job " + std::to_string(j.id) + " '" + j.name + "' (" + j.state + ")";
    out.push_back(std::move(u));
  }
  return out;
}

Status SlurmActuator::EndUnrecorded(const UnrecordedRun& run) {
  return client_->Cancel(run.handle.slurm_job);
}

std::vector<Placed> SlurmActuator::TakePlaced() {
  std::vector<Placed> out;
  out.swap(placed_);
  return out;
}

std::optional<std::vector<ForeignUse>> SlurmActuator::TakeForeign() {
  if (!foreign_changed_) return std::nullopt;
  foreign_changed_ = false;
  return foreign_;
}

void SlurmActuator::Retire(const std::string& workload) {
  retired_.insert(workload);
  auto it = parked_.find(workload);
  if (it == parked_.end()) return;
  for (const Parked& p : it->second)
    if (Status st = client_->Cancel(p.job); !st.ok()) SetError(st.message());
  parked_.erase(it);
}

std::string SlurmActuator::ServiceAddress(const std::vector<std::string>& gpus) const {
  const std::string node = gpus.empty() ? "" : NodeOfGpuId(gpus.front());
  if (node.empty()) return "127.0.0.1";
  auto it = address_of_.find(node);
  return it != address_of_.end() ? it->second : node;
}

std::vector<int> SlurmActuator::KeptPorts() const {
  std::vector<int> out;
  for (const auto& [workload, jobs] : parked_)
    for (const Parked& p : jobs)
      if (p.port > 0) out.push_back(p.port);
  return out;
}

std::string SlurmActuator::Describe() const {
  std::string s = "slurm " + client_->SlurmRelease() + " (API " + client_->ApiVersion() + ")";
  if (!options_.slurm_url.empty()) s += " at " + options_.slurm_url;
  s +=
      ": " + std::to_string(watched_.size()) + " job(s) watched, " +
      std::to_string(std::accumulate(parked_.begin(), parked_.end(), size_t{0},
                                     [](size_t n, const auto& p) { return n + p.second.size(); })) +
      " parked, " + std::to_string(foreign_.size()) + " GPU(s) held by foreign jobs";
  std::lock_guard<std::mutex> lock(mu_);
  if (!last_error_.empty()) s += "; last error: " + last_error_;
  return s;
}

}  // namespace airtime::slurm
