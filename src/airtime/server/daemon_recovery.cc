// Daemon: recovery at start-up from what the store and the run directories say.
//
// Order matters: every workload that had not ended goes back into a paused engine (in
// submission order), then each run that was launching or running is settled: adopted when
// its process still lives (the engine gets its allocation on the same GPUs), closed when it
// ended while the daemon was down (the engine hears the completion or failure), or marked
// abandoned when its process never started (the claim file makes sure it never will). Only
// then is the engine unpaused, so nothing is started twice and no GPU is handed out twice.
#include <chrono>
#include <map>
#include <thread>
#include <unordered_set>

#include "airtime/config/workload_yaml.h"
#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/daemon.h"
#include "airtime/server/live_spec.h"

namespace airtime {

TimeMs WallNow();

Status Daemon::Recover() {
  started_at_ = WallNow();
  auto rows = store_->LoadWorkloads(/*active_only=*/false);
  if (!rows.ok()) return rows.status();
  std::map<int64_t, StatusOr<Scenario>> parsed;  // by submission id
  const TimeMs now = std::max(WallNow(), engine_->now());
  const std::string ledger_note = CarryLedger(now);
  const std::string holds_note = CarryHolds();
  engine_->SetPaused(true);
  // The engine meets only the workloads that had not ended: a variant whose producer (a
  // quantize or finetune job) completed before the restart is told so by its spec.
  std::unordered_set<std::string> completed;
  for (const WorkloadRow& row : *rows)
    if (row.state == "succeeded") completed.insert(row.name);
  // Each stored submission, parsed as ParseSubmission parsed it: services with variants
  // expanded into their members, which the rows index.
  auto scenario_of = [&](int64_t submission) -> const StatusOr<Scenario>& {
    auto sit = parsed.find(submission);
    if (sit != parsed.end()) return sit->second;
    auto sub = store_->GetSubmission(submission);
    sit = parsed
              .emplace(submission, sub.ok() ? ParseSubmissionYaml(sub->body, sub->origin)
                                            : StatusOr<Scenario>(sub.status()))
              .first;
    if (sit->second.ok())
      sit->second->workloads = ExpandAllVariants(std::move(sit->second->workloads));
    return sit->second;
  };
  // Jobs of later submissions that produce a service's variant (CheckClaims accepted them
  // in this order, each replacing one that had failed or been cancelled): the newest is the
  // variant's producer. "service/variant" -> the job's name.
  std::map<std::string, std::string> claims;
  for (const WorkloadRow& row : *rows) {
    const StatusOr<Scenario>& sc = scenario_of(row.submission_id);
    if (!sc.ok() || row.index >= static_cast<int32_t>(sc->workloads.size())) continue;
    const WorkloadSpec& job = sc->workloads[static_cast<size_t>(row.index)];
    if (job.produces.empty()) continue;
    bool here = false;  // linked at parse time
    for (const WorkloadSpec& s : sc->workloads) here |= s.realtime.group == job.produces.service;
    if (!here) claims[job.produces.service + "/" + job.produces.variant] = job.name;
  }
  int active = 0;
  for (WorkloadRow& row : *rows) {
    WorkloadRec w;
    w.row = std::move(row);
    const StatusOr<Scenario>& sc = scenario_of(w.row.submission_id);
    WorkloadSpec spec;
    spec.name = w.row.name;
    if (sc.ok() && w.row.index < static_cast<int32_t>(sc->workloads.size())) {
      spec = sc->workloads[static_cast<size_t>(w.row.index)];
    } else if (!IsFinalState(w.row.state)) {
      w.row.state = "failed";
      w.row.message = "its accepted submission could not be read back: " +
                      (sc.ok() ? std::string("index out of range") : sc.status().message());
      (void)Persist(w);
    }
    spec.tenant = w.row.tenant;
    spec.priority = w.row.priority;
    for (ModelVariant& v : spec.realtime.variants) {
      const std::string key = spec.realtime.group + "/" + v.name;
      if (auto c = claims.find(key); c != claims.end()) v.produced_by = c->second;
      if (completed.count(v.produced_by)) {
        produced_variants_[key] = v.produced_by;
        v.produced_by.clear();
        v.awaits_producer = false;
      }
    }
    if (spec.is_service() && !IsFinalState(w.row.state)) {
      // What its forecast knew before the restart (RecordDemand).
      auto history = store_->DemandOf(w.row.id, now - kDemandHistoryKept);
      if (!history.ok()) return history.status();
      for (const auto& [at, rps] : *history)
        if (at < now) spec.realtime.history.push_back(DemandPoint{at, rps});
    }
    w.spec = LiveSpec(std::move(spec), w.row.submitted_at);
    if (!IsFinalState(w.row.state)) {
      ++active;
      const CycleResult& r = engine_->Handle(Event::Arrival(now, w.spec));
      books_->Observe(r);
      w.eid = r.arrived;
      by_engine_id_[w.eid] = w.row.id;
      const std::vector<RequestClass>& classes = w.spec->realtime.classes;
      // Each class's last rate, for a service of several (ReportDemand keeps them), then
      // the stored rate: the one class's, or else the member's own demand.
      if (w.spec->is_service() && classes.size() > 1) {
        auto rates = store_->ClassDemandOf(w.row.id);
        if (!rates.ok()) return rates.status();
        for (const ClassDemandRow& r : *rates)
          for (size_t c = 0; c < classes.size(); ++c)
            if (classes[c].name == r.request_class)
              books_->Observe(
                  engine_->Handle(Event::ClassDemand(now, w.eid, static_cast<int>(c), r.rps)));
      }
      if (w.spec->is_service() && w.row.demand_at > 0)
        for (const Event& e : DemandEvents(w, classes.size() == 1 ? 0 : -1, w.row.demand_rps, now))
          books_->Observe(engine_->Handle(e));
    }
    const int64_t id = w.row.id;
    workloads_.emplace(id, std::move(w));
    IndexName(workloads_.at(id));
  }
  auto all_runs = store_->LoadRuns(/*active_only=*/false);
  if (!all_runs.ok()) return all_runs.status();
  std::vector<RunRow> live;
  for (RunRow& r : *all_runs) {
    auto it = workloads_.find(r.workload_id);
    if (it != workloads_.end()) {
      it->second.attempts = std::max(it->second.attempts, r.attempt);
      // Runs that failed on their own count towards the retry limit across restarts.
      if (r.state == "exited" && r.exit_code.value_or(0) != 0 &&
          (r.stop_reason.rfind("exited with status", 0) == 0 ||
           r.stop_reason.rfind("ended while the daemon was down", 0) == 0))
        ++it->second.failures;
    }
    if (r.state == "launching" || r.state == "running") live.push_back(std::move(r));
  }
  int adopted = 0;
  for (RunRow& r : live) {
    AIRTIME_RETURN_IF_ERROR(RecoverRun(std::move(r), now));
  }
  for (const auto& [id, run] : runs_) adopted += !run.stopping;
  engine_->SetPaused(false);
  SyncWorkloadStates();
  startup_note_ += "; store " + store_->path() + ": " + std::to_string(workloads_.size()) +
                   " workload(s), " + std::to_string(active) + " not ended; " +
                   std::to_string(live.size()) + " run(s) were live, " + std::to_string(adopted) +
                   " adopted; " + ledger_note;
  if (!holds_note.empty()) startup_note_ += "; " + holds_note;
  if (!store_loss_note_.empty()) startup_note_ += "; " + store_loss_note_;
  return OkStatus();
}

// Settles one run that was launching or running when the previous daemon stopped.
Status Daemon::RecoverRun(RunRow run, TimeMs now) {
  auto wit = workloads_.find(run.workload_id);
  if (wit == workloads_.end()) return Internal("run " + std::to_string(run.id) + ": no workload");
  WorkloadRec& w = wit->second;
  const bool process = !w.spec->exec.empty();
  AdoptResult res;
  res.state = AdoptState::kRunning;
  if (process && run.run_dir.empty()) {
    // The daemon records the run directory before it launches anything: without one the
    // process never started.
    res.state = AdoptState::kNeverStarted;
  } else if (process) {
    // A shim that was just started may not have written its claim yet: give a live one a
    // moment rather than claiming the run abandoned (which would make it refuse to run).
    for (int i = 0; i < 40 && run.pid > 0 && !ReadClaim(run.run_dir).ok() &&
                    SameProcess(static_cast<pid_t>(run.pid), run.start_ticks, run.boot_id);
         ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    RunHandle recorded;
    recorded.pid = static_cast<pid_t>(run.pid);
    recorded.start_ticks = run.start_ticks;
    recorded.boot_id = run.boot_id;
    recorded.run_dir = run.run_dir;
    recorded.slurm_job = run.slurm_job;
    auto r = actuator_->Adopt(run.id, recorded);
    if (!r.ok()) return r.status();
    res = std::move(*r);
    run.pid = res.handle.pid;
    run.start_ticks = res.handle.start_ticks;
    run.boot_id = res.handle.boot_id;
    run.slurm_job = res.handle.slurm_job;
  }
  auto close = [&](const std::string& state, std::optional<int> code, const std::string& why) {
    run.state = state;
    run.ended_at = now;
    run.exit_code = code;
    if (run.stop_reason.empty()) run.stop_reason = why;
    return store_->UpdateRun(run);
  };
  if (res.state == AdoptState::kNeverStarted)
    return close("abandoned", std::nullopt, "never started: the daemon stopped first");

  // Map the run's GPUs; the engine takes the allocation back where it was.
  std::vector<GpuIndex> gpus;
  bool gpus_known = true;
  for (const std::string& u : run.gpus) {
    auto g = gpu_of_uuid_.find(u);
    if (g == gpu_of_uuid_.end())
      gpus_known = false;
    else
      gpus.push_back(g->second);
  }
  const bool wanted = w.eid != kNoWorkload && run.stop_reason.empty() && gpus_known;
  StatusOr<AllocationId> alloc = Status(StatusCode::kFailedPrecondition, "not adopted");
  if (wanted) alloc = engine_->Adopt(w.eid, gpus);

  if (res.state == AdoptState::kRunning) {
    RunRec rec;
    rec.row = run;
    rec.row.state = "running";
    if (alloc.ok()) {
      rec.allocation = *alloc;
      run_of_allocation_[*alloc] = run.id;
    } else {
      // Airtime was stopping it, its workload ended, or its GPUs are gone: finish the stop.
      rec.stopping = true;
      if (rec.row.stop_reason.empty())
        rec.row.stop_reason = "stopped after restart: " + alloc.status().message();
      if (process) (void)actuator_->Stop(run.id, static_cast<int>(w.spec->preempt_grace));
    }
    AIRTIME_RETURN_IF_ERROR(store_->UpdateRun(rec.row));
    runs_.emplace(run.id, std::move(rec));
    return OkStatus();
  }
  // Ended while the daemon was down (or the pid is another process now).
  const Exited e = res.exit.value_or(Exited{run.id, -1, "vanished"});
  AIRTIME_RETURN_IF_ERROR(
      close("exited", e.exit_code,
            e.exit_code == 0 ? "" : "ended while the daemon was down (" + e.how + ")"));
  w.row.exit_code = e.exit_code;
  if (alloc.ok())
    books_->Observe(engine_->Handle(e.exit_code == 0 ? Event::Completion(now, *alloc)
                                                     : Event::Failure(now, *alloc)));
  return OkStatus();
}

}  // namespace airtime
