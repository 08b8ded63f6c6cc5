// Daemon: the ControlPlane calls (submissions, queries, changes) and their JSON views.
#include <chrono>
#include <cmath>
#include <future>
#include <unordered_set>

#include "airtime/base/strings.h"
#include "airtime/config/workload_yaml.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/daemon.h"
#include "airtime/server/live_spec.h"
#include "airtime/server/log_read.h"
#include "airtime/server/submission.h"

namespace airtime {

TimeMs WallNow();

using nlohmann::json;

struct Daemon::PendingSubmit {
  Caller caller;
  std::string body;
  std::string origin;
  std::vector<WorkloadSpec> specs;
  TimeMs received = 0;
  std::chrono::steady_clock::time_point received_steady;
  std::promise<StatusOr<json>> done;
};

namespace {

json OptionalJson(const std::optional<TimeMs>& v) { return v ? json(*v) : json(nullptr); }
json OptionalJson(const std::optional<int32_t>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

StatusOr<json> Daemon::Submit(const Caller& caller, std::string_view body,
                              std::string_view origin) {
  // Stateless: parsed and checked on the caller's thread, before anything is committed.
  auto parsed = ParseSubmission(caller, body, origin);
  if (!parsed.ok()) return parsed.status();
  for (const WorkloadSpec& spec : parsed->specs) AIRTIME_RETURN_IF_ERROR(CheckRunnable(spec));
  auto p = std::make_shared<PendingSubmit>();
  p->caller = caller;
  p->body = std::move(parsed->body);
  p->origin = std::string(origin);
  p->specs = std::move(parsed->specs);
  p->received = WallNow();
  p->received_steady = std::chrono::steady_clock::now();
  auto future = p->done.get_future();
  if (!running_) {
    CommitSubmissions({p});
  } else {
    {
      std::lock_guard<std::mutex> lock(inbox_mu_);
      submits_.push_back(p);
    }
    actuator_->Wake();
  }
  return future.get();
}

// Commits a batch of submissions in one transaction (each all or nothing), answers them,
// then hands the new workloads to a paused engine and runs one decision cycle for the lot.
void Daemon::CommitSubmissions(std::vector<std::shared_ptr<PendingSubmit>> batch) {
  std::unordered_set<std::string> names;
  std::vector<std::shared_ptr<PendingSubmit>> ok;
  for (auto& p : batch) {
    Status st;
    std::unordered_set<std::string> mine;
    for (const WorkloadSpec& s : p->specs) {
      if (by_name_.count(s.name) || names.count(s.name) || !mine.insert(s.name).second) {
        st = Status(StatusCode::kAlreadyExists,
                    s.source + ": workload '" + s.name + "': field 'name': already taken");
        break;
      }
    }
    if (!st.ok()) {
      p->done.set_value(st);
      continue;
    }
    names.insert(mine.begin(), mine.end());
    ok.push_back(p);
  }
  if (ok.empty()) return;
  const TimeMs now = std::max(WallNow(), engine_->now());
  std::vector<std::vector<WorkloadRow>> rows(ok.size());
  StoreMarks marks = marks_;
  Status st = store_->Transaction([&]() -> Status {
    for (size_t i = 0; i < ok.size(); ++i) {
      auto sid = store_->AddSubmission({0, ok[i]->caller.tenant, ok[i]->body, ok[i]->origin, now});
      if (!sid.ok()) return sid.status();
      marks.submission = std::max(marks.submission, *sid);
      for (size_t k = 0; k < ok[i]->specs.size(); ++k) {
        const WorkloadSpec& s = ok[i]->specs[k];
        WorkloadRow row;
        row.submission_id = *sid;
        row.index = static_cast<int32_t>(k);
        row.name = s.name;
        row.tenant = s.tenant;
        row.kind = KindName(s.kind);
        row.priority = s.priority;
        row.submitted_at = now;
        auto id = store_->AddWorkload(row);
        if (!id.ok()) return id.status();
        row.id = *id;
        marks.workload = std::max(marks.workload, *id);
        rows[i].push_back(std::move(row));
      }
    }
    auto seq = store_->BumpSequence();
    if (!seq.ok()) return seq.status();
    marks.sequence = *seq;
    return OkStatus();
  });
  if (!st.ok()) {
    for (auto& p : ok)
      p->done.set_value(
          Status(StatusCode::kUnavailable, "the submission could not be stored: " + st.message()));
    return;
  }
  // The marks follow the commit before anyone hears of it (store_marks.h).
  marks_ = marks;
  SaveMarks();
  engine_->SetPaused(true);
  for (size_t i = 0; i < ok.size(); ++i) {
    json accepted = json::array();
    for (size_t k = 0; k < rows[i].size(); ++k) {
      WorkloadRec w;
      w.row = std::move(rows[i][k]);
      w.spec = LiveSpec(std::move(ok[i]->specs[k]), now);
      accepted.push_back({{"id", w.row.id}, {"name", w.row.name}});
      const CycleResult& r = engine_->Handle(Event::Arrival(now, w.spec));
      books_->Observe(r);
      w.eid = r.arrived;
      by_name_[w.row.name] = w.row.id;
      by_engine_id_[w.eid] = w.row.id;
      workloads_.emplace(w.row.id, std::move(w));
      ++submissions_total_;
    }
    latencies_.submit_commit.Add(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - ok[i]->received_steady)
            .count());
    ok[i]->done.set_value(json{{"accepted", accepted}});
  }
  engine_->SetPaused(false);
  Feed(Event::Timer(now), ok.front()->received_steady);
}

StatusOr<Daemon::WorkloadRec*> Daemon::Find(const Caller& caller, std::string_view id_or_name) {
  WorkloadRec* w = nullptr;
  const std::string key(id_or_name);
  if (!key.empty() && key.find_first_not_of("0123456789") == std::string::npos && key.size() < 18) {
    auto it = workloads_.find(std::stoll(key));
    if (it != workloads_.end()) w = &it->second;
  }
  if (!w) {
    auto it = by_name_.find(key);
    if (it != by_name_.end()) w = &workloads_.at(it->second);
  }
  if (!w || (!caller.admin && w->row.tenant != caller.tenant))
    return NotFound("no workload '" + key + "'" +
                    (caller.admin ? "" : " of tenant '" + caller.tenant + "'"));
  return w;
}

json Daemon::View(const WorkloadRec& w, bool full) const {
  json v = {{"id", w.row.id},
            {"name", w.row.name},
            {"tenant", w.row.tenant},
            {"kind", w.row.kind},
            {"state", w.row.state},
            {"priority", w.row.priority},
            {"submitted_at", w.row.submitted_at},
            {"started_at", OptionalJson(w.row.started_at)},
            {"finished_at", OptionalJson(w.row.finished_at)},
            {"exit_code", OptionalJson(w.row.exit_code)},
            {"preemptions", w.row.preemptions},
            {"demand_rps", w.row.demand_rps}};
  json gpus = json::array();
  std::vector<const RunRec*> live;
  for (const auto& [id, r] : runs_)
    if (r.row.workload_id == w.row.id && !r.stopping) live.push_back(&r);
  for (const RunRec* r : live)
    for (const std::string& g : r->row.gpus) gpus.push_back(g);
  v["gpus"] = gpus;
  std::string reason = w.row.message;
  if (w.eid != kNoWorkload && !IsFinalState(w.row.state)) {
    const Job& job = engine_->job(w.eid);
    if (job.is_service())
      v["replicas"] = {{"running", job.live_replicas()}, {"target", job.target_replicas}};
    std::string explanation = engine_->Explain(w.eid);
    if (!start_pause_.empty() && job.phase == JobPhase::kPending)
      explanation = start_pause_ + "\n" + explanation;
    reason = explanation.substr(0, explanation.find('\n'));
    if (full) v["explanation"] = explanation;
  } else if (full) {
    v["explanation"] = w.row.message;
  }
  v["reason"] = reason;
  if (full) {
    json runs = json::array();
    auto rows = store_->RunsOf(w.row.id);
    if (rows.ok()) {
      for (const RunRow& r : *rows) {
        runs.push_back({{"id", r.id},
                        {"replica", r.replica},
                        {"attempt", r.attempt},
                        {"state", r.state},
                        {"pid", r.pid},
                        {"slurm_job", r.slurm_job ? json(r.slurm_job) : json(nullptr)},
                        {"gpus", r.gpus},
                        {"share_milli", r.share_milli},
                        {"port", r.port},
                        {"started_at", r.started_at},
                        {"ended_at", OptionalJson(r.ended_at)},
                        {"exit_code", OptionalJson(r.exit_code)},
                        {"log_dir", r.run_dir},
                        {"stop_reason", r.stop_reason}});
      }
    }
    v["runs"] = runs;
  }
  return v;
}

StatusOr<json> Daemon::List(const Caller& caller, const ListFilter& filter) {
  if (!caller.admin && !filter.tenant.empty() && filter.tenant != caller.tenant)
    return Status(StatusCode::kPermissionDenied,
                  "tenant '" + filter.tenant + "': a tenant token lists only its own workloads");
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    // Newest first: the page is the `limit` matches after the `offset` newest; every match
    // is counted for "total" (views are made for the page only).
    json out = json::array();
    int64_t total = 0;
    for (auto it = workloads_.rbegin(); it != workloads_.rend(); ++it) {
      const WorkloadRec& w = it->second;
      if (!caller.admin && w.row.tenant != caller.tenant) continue;
      if (!filter.tenant.empty() && w.row.tenant != filter.tenant) continue;
      if (!filter.kind.empty() && w.row.kind != filter.kind) continue;
      if (filter.state == "active" ? IsFinalState(w.row.state)
                                   : !filter.state.empty() && w.row.state != filter.state)
        continue;
      ++total;
      if (total <= filter.offset) continue;
      if (filter.limit > 0 && static_cast<int>(out.size()) >= filter.limit) continue;
      out.push_back(View(w, false));
    }
    std::reverse(out.begin(), out.end());
    return json{{"workloads", out}, {"total", total}};
  });
}

StatusOr<json> Daemon::Get(const Caller& caller, std::string_view id_or_name) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    auto w = Find(caller, id_or_name);
    if (!w.ok()) return w.status();
    return View(**w, true);
  });
}

namespace {

// What a run's end was: a preemption, another stop by airtime (a cancel, a scale-down, a
// node lost), or the process's own exit.
std::string RunEndKind(const RunRow& r) {
  if (r.stop_reason.rfind("preempted", 0) == 0) return "preempted";
  if (!r.stop_reason.empty() && r.stop_reason.rfind("exited", 0) != 0) return "stopped";
  return "exited";
}

}  // namespace

StatusOr<json> Daemon::Events(const Caller& caller, std::string_view id_or_name) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    auto found = Find(caller, id_or_name);
    if (!found.ok()) return found.status();
    const WorkloadRec& w = **found;
    auto rows = store_->RunsOf(w.row.id);
    if (!rows.ok()) return rows.status();
    json events = json::array();
    auto add = [&](TimeMs at, const std::string& kind, int64_t run, const std::string& message) {
      events.push_back({{"at", at},
                        {"kind", kind},
                        {"run", run > 0 ? json(run) : json(nullptr)},
                        {"message", message}});
    };
    add(w.row.submitted_at, "submitted", 0,
        "submitted by tenant '" + w.row.tenant + "' at priority " + std::to_string(w.row.priority));
    for (const RunRow& r : *rows) {
      std::string where = r.placed;
      if (where.empty())
        where = "started on " + (r.gpus.empty() ? std::string("no GPU") : Join(r.gpus, ", "));
      if (r.slurm_job > 0) where += " (Slurm job " + std::to_string(r.slurm_job) + ")";
      add(r.started_at, "started", r.id, where);
      if (r.ended_at) {
        std::string why = r.stop_reason;
        if (why.empty())
          why = r.exit_code ? "exited with status " + std::to_string(*r.exit_code) : "ended";
        add(*r.ended_at, RunEndKind(r), r.id, why);
      }
    }
    if (IsFinalState(w.row.state)) {
      add(w.row.finished_at.value_or(w.row.submitted_at), w.row.state, 0, w.row.message);
    } else {
      json view = View(w, false);
      add(WallNow(), w.row.state == "queued" ? "waiting" : "running", 0,
          view.value("reason", std::string()));
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const json& a, const json& b) { return a["at"] < b["at"]; });
    return json{{"events", events}};
  });
}

StatusOr<LogChunk> Daemon::Logs(const Caller& caller, std::string_view id_or_name,
                                const LogQuery& query) {
  // The run is looked up on the loop; its file is read here, off it (up to kMaxLogLimit).
  struct Found {
    int64_t run = 0;
    std::string path;
    bool ended = false;
  };
  auto found = OnLoop<StatusOr<Found>>([&]() -> StatusOr<Found> {
    auto w = Find(caller, id_or_name);
    if (!w.ok()) return w.status();
    auto rows = store_->RunsOf((*w)->row.id);
    if (!rows.ok()) return rows.status();
    const RunRow* pick = nullptr;
    for (const RunRow& r : *rows) {
      if (query.run == 0 ? (pick == nullptr || r.id > pick->id) : r.id == query.run) pick = &r;
    }
    const std::string name = (*w)->row.name;
    if (pick == nullptr && query.run == 0) return Found{};  // not run yet: no log, so far
    if (pick == nullptr) {
      return NotFound("workload '" + name + "' has no run " + std::to_string(query.run) +
                      " (`airtime describe` lists its runs)");
    }
    return Found{
        pick->id, RunPath(pick->run_dir, query.stderr_log ? kStderrLog : kStdoutLog),
        pick->ended_at.has_value() || pick->state == "exited" || pick->state == "abandoned"};
  });
  if (!found.ok()) return found.status();
  if (found->run == 0) return LogChunk{};
  auto range = ReadLogRange(found->path, query.offset, query.limit);
  if (!range.ok()) {
    // A run that has not written yet has an empty log, not an error.
    if (range.status().code() != StatusCode::kNotFound) return range.status();
    range = LogRange{};
  }
  return LogChunk{found->run, range->offset, range->size, found->ended, std::move(range->data)};
}

Status Daemon::Cancel(const Caller& caller, std::string_view id_or_name) {
  return OnLoop<Status>([&]() -> Status {
    auto w = Find(caller, id_or_name);
    if (!w.ok()) return w.status();
    WorkloadRec& rec = **w;
    if (IsFinalState(rec.row.state))
      return FailedPrecondition("workload '" + rec.row.name + "' has already " +
                                (rec.row.state == "cancelled" ? "been cancelled" : rec.row.state));
    // Durable before the engine hears of it: a crash right after cannot undo the cancel.
    const TimeMs now = std::max(WallNow(), engine_->now());
    const WorkloadRow before = rec.row;
    rec.row.state = "cancelled";
    rec.row.finished_at = now;
    rec.row.message = "cancelled by " + (caller.admin ? std::string("the admin") : caller.tenant);
    int64_t sequence = 0;
    Status st = store_->Transaction([&]() -> Status {
      AIRTIME_RETURN_IF_ERROR(Persist(rec));
      auto seq = store_->BumpSequence();
      if (!seq.ok()) return seq.status();
      sequence = *seq;
      return OkStatus();
    });
    if (!st.ok()) {
      rec.row = before;
      return st;
    }
    marks_.sequence = sequence;
    SaveMarks();
    Feed(Event::Cancel(now, rec.eid));
    return OkStatus();
  });
}

Status Daemon::SetPriority(const Caller& caller, std::string_view id_or_name, int priority) {
  return OnLoop<Status>([&]() -> Status {
    auto w = Find(caller, id_or_name);
    if (!w.ok()) return w.status();
    WorkloadRec& rec = **w;
    if (IsFinalState(rec.row.state))
      return FailedPrecondition("workload '" + rec.row.name + "' has ended (" + rec.row.state +
                                "); its priority no longer matters");
    rec.row.priority = priority;
    AIRTIME_RETURN_IF_ERROR(Persist(rec));
    const TimeMs now = std::max(WallNow(), engine_->now());
    Feed(Event::Priority(now, rec.eid, priority));
    return OkStatus();
  });
}

Status Daemon::ReportDemand(const Caller& caller, std::string_view id_or_name, double rps) {
  if (!std::isfinite(rps) || rps < 0)
    return InvalidArgument("field 'rps': expected a request rate >= 0, found " +
                           std::to_string(rps));
  return OnLoop<Status>([&]() -> Status {
    auto w = Find(caller, id_or_name);
    if (!w.ok()) return w.status();
    WorkloadRec& rec = **w;
    if (!rec.spec->is_service())
      return FailedPrecondition("workload '" + rec.row.name + "' is " + rec.row.kind +
                                ", not a realtime service: it has no request rate");
    if (IsFinalState(rec.row.state))
      return FailedPrecondition("workload '" + rec.row.name + "' has ended (" + rec.row.state +
                                ")");
    const TimeMs now = std::max(WallNow(), engine_->now());
    AIRTIME_RETURN_IF_ERROR(RecordDemand(rec, rps, now));
    Feed(Event::Demand(now, rec.eid, rps));
    return OkStatus();
  });
}

StatusOr<json> Daemon::Gpus(const Caller&) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    std::map<std::string, json> holders;
    for (const auto& [aid, a] : engine_->allocations()) {
      auto rit = run_of_allocation_.find(aid);
      const auto wit = by_engine_id_.find(a.workload);
      if (wit == by_engine_id_.end()) continue;
      const WorkloadRec& w = workloads_.at(wit->second);
      for (GpuIndex g : a.placement.gpus)
        holders[uuid_of_gpu_[static_cast<size_t>(g)]].push_back(
            {{"workload", w.row.id},
             {"name", w.row.name},
             {"tenant", w.row.tenant},
             {"milli", a.placement.milli},
             {"run", rit == run_of_allocation_.end() ? json(nullptr) : json(rit->second)}});
    }
    // How the ledger counts each scheduled GPU now (its buckets, in milli-GPUs).
    const std::vector<GpuBuckets> buckets = ledger_->GpuBucketsNow();
    json gpus = json::array();
    for (const GpuDevice& d : devices_) {
      json g = {{"index", d.index},
                {"uuid", d.uuid},
                {"model", d.model},
                {"type", d.type},
                {"memory_mib", d.memory_mib},
                {"mig_mode", d.mig_enabled},
                {"fake", d.fake},
                {"scheduled", gpu_of_uuid_.count(d.uuid) > 0}};
      auto t = telemetry_.find(d.uuid);
      if (t != telemetry_.end()) {
        const GpuSample& s = t->second;
        g["utilization"] = s.utilization ? json(*s.utilization) : json(nullptr);
        g["memory_used_mib"] = s.memory_used_mib ? json(*s.memory_used_mib) : json(nullptr);
        g["power_w"] = s.power_w ? json(*s.power_w) : json(nullptr);
        g["processes"] = s.pids;
        g["sampled_at"] = s.at;
      }
      auto h = holders.find(d.uuid);
      g["allocations"] = h == holders.end() ? json::array() : h->second;
      g["bucket"] = nullptr;
      g["bucket_milli"] = json::object();
      if (auto gi = gpu_of_uuid_.find(d.uuid);
          gi != gpu_of_uuid_.end() && static_cast<size_t>(gi->second) < buckets.size()) {
        const GpuBuckets& b = buckets[static_cast<size_t>(gi->second)];
        g["bucket"] = BucketName(b.main());
        for (int k = 0; k < kBucketCount; ++k)
          if (b.milli[static_cast<size_t>(k)] != 0)
            g["bucket_milli"][BucketName(static_cast<Bucket>(k))] = b.milli[static_cast<size_t>(k)];
      }
      gpus.push_back(std::move(g));
    }
    return json{{"gpus", gpus}, {"backend", BackendView()}};
  });
}

StatusOr<json> Daemon::GpuHistory(const Caller&, const HistoryFilter& filter) {
  return OnLoop<StatusOr<json>>([&]() -> StatusOr<json> {
    std::vector<size_t> picked;
    std::vector<std::string> uuids;
    for (size_t i = 0; i < devices_.size(); ++i) {
      uuids.push_back(devices_[i].uuid);
      if (!filter.gpu.empty() &&
          (filter.gpu == devices_[i].uuid || filter.gpu == std::to_string(devices_[i].index)))
        picked.push_back(i);
    }
    if (!filter.gpu.empty() && picked.empty())
      return NotFound("no GPU '" + filter.gpu + "' (GET /v1/gpus lists their UUIDs and indices)");
    const TimeMs now = WallNow();
    if (!history_)
      return airtime::GpuHistory(devices_.size()).Json(now, filter.minutes, picked, uuids);
    return history_->Json(now, filter.minutes, picked, uuids);
  });
}

bool Daemon::Healthy(std::string* why) {
  if (!running_) {
    if (why) *why = "the event loop is not running";
    return false;
  }
  // The loop answers within a second when it is alive.
  auto p = std::make_shared<std::promise<void>>();
  auto f = p->get_future();
  Post([p] { p->set_value(); });
  if (f.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    if (why) *why = "the event loop has not answered for 5 s";
    return false;
  }
  return true;
}

}  // namespace airtime
