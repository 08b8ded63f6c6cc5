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
#include <optional>
#include <set>
#include <thread>

#include "airtime/config/workload_yaml.h"
#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/checkpoint_cap.h"
#include "airtime/server/daemon.h"
#include "airtime/server/live_spec.h"
#include "airtime/server/submission.h"

namespace airtime {

TimeMs WallNow();

Status Daemon::Recover() {
  started_at_ = WallNow();
  // What comes back into memory: every workload that had not ended, and the ended_kept
  // that ended last (daemon_retention.cc: the store answers for the others).
  auto rows = store_->LoadWorkloads(/*active_only=*/true);
  if (!rows.ok()) return rows.status();
  std::set<int64_t> loaded;
  for (const WorkloadRow& row : *rows) loaded.insert(row.id);
  auto add = [&](WorkloadRow row) {
    if (loaded.insert(row.id).second) rows->push_back(std::move(row));
  };
  auto ended = store_->LoadEndedWorkloads(static_cast<int64_t>(options_.ended_kept));
  if (!ended.ok()) return ended.status();
  for (WorkloadRow& row : *ended) add(std::move(row));
  // The workloads of runs that were live: an ended one whose process airtime was stopping.
  auto live_rows = store_->LoadRuns(/*active_only=*/true);
  if (!live_rows.ok()) return live_rows.status();
  for (const RunRow& r : *live_rows) {
    if (loaded.count(r.workload_id)) continue;
    auto row = store_->GetWorkload(r.workload_id);
    if (!row.ok()) return row.status();
    if (*row) add(std::move(**row));
  }
  std::map<int64_t, StatusOr<Scenario>> parsed;  // by submission id
  const TimeMs now = std::max(WallNow(), engine_->now());
  const std::string ledger_note = CarryLedger(now);
  const std::string holds_note = CarryHolds();
  engine_->SetPaused(true);
  // Each stored submission, parsed as ParseSubmission parsed it: services with variants
  // expanded into their members, which the rows index.
  auto scenario_of = [&](int64_t submission) -> const StatusOr<Scenario>& {
    auto sit = parsed.find(submission);
    if (sit != parsed.end()) return sit->second;
    auto sub = store_->GetSubmission(submission);
    return parsed
        .emplace(submission, sub.ok() ? ParseStoredSubmission(sub->body, sub->origin)
                                      : StatusOr<Scenario>(sub.status()))
        .first->second;
  };
  auto spec_of = [&](const WorkloadRow& row) -> const WorkloadSpec* {
    const StatusOr<Scenario>& sc = scenario_of(row.submission_id);
    if (!sc.ok() || row.index < 0 || row.index >= static_cast<int32_t>(sc->workloads.size()))
      return nullptr;
    return &sc->workloads[static_cast<size_t>(row.index)];
  };
  // A service with variants comes back whole (its name reaches all of its members): the
  // members of each one loaded, and whether any has variants that work produces.
  bool produced_variants = false;
  std::set<std::string> services;
  for (size_t i = 0; i < rows->size(); ++i) {
    const WorkloadSpec* spec = spec_of((*rows)[i]);
    if (!spec || !spec->realtime.is_member()) continue;
    for (const ModelVariant& v : spec->realtime.variants)
      produced_variants |= !v.produced_by.empty() || v.awaits_producer;
    if (!services.insert(spec->realtime.group).second) continue;
    auto members = store_->WorkloadsNamedFrom(spec->realtime.group + "/");
    if (!members.ok()) return members.status();
    for (WorkloadRow& m : *members) {
      const WorkloadSpec* ms = spec_of(m);
      if (ms && ms->realtime.group == spec->realtime.group) add(std::move(m));
    }
  }
  std::sort(rows->begin(), rows->end(),
            [](const WorkloadRow& a, const WorkloadRow& b) { return a.id < b.id; });
  // The engine meets only the workloads that had not ended: a variant whose producer (a
  // quantize or finetune job) completed before the restart is told so by its spec.
  std::map<std::string, bool> completed;  // by name, as asked
  auto succeeded = [&](const std::string& name) {
    auto [it, fresh] = completed.emplace(name, false);
    if (fresh) {
      auto row = store_->GetWorkloadNamed(name);
      it->second = row.ok() && row->has_value() && (*row)->state == "succeeded";
    }
    return it->second;
  };
  // Jobs of later submissions that produce a service's variant (CheckClaims accepted them
  // in this order, each replacing one that had failed or been cancelled): the newest is the
  // variant's producer. "service/variant" -> the job's name. Only quantize and finetune jobs
  // produce one, and only a service with such variants asks.
  std::map<std::string, std::string> claims;
  if (produced_variants) {
    std::vector<WorkloadRow> producers;
    for (const char* kind : {"quantize", "finetune"}) {
      auto of_kind = store_->LoadWorkloadsOfKind(kind);
      if (!of_kind.ok()) return of_kind.status();
      producers.insert(producers.end(), of_kind->begin(), of_kind->end());
    }
    std::sort(producers.begin(), producers.end(),
              [](const WorkloadRow& a, const WorkloadRow& b) { return a.id < b.id; });
    for (const WorkloadRow& row : producers) {
      const StatusOr<Scenario>& sc = scenario_of(row.submission_id);
      const WorkloadSpec* job = spec_of(row);
      if (!job || job->produces.empty()) continue;
      bool here = false;  // linked at parse time
      for (const WorkloadSpec& s : sc->workloads) here |= s.realtime.group == job->produces.service;
      if (!here) claims[job->produces.service + "/" + job->produces.variant] = job->name;
    }
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
      if (!v.produced_by.empty() && succeeded(v.produced_by)) {
        produced_variants_[key] = v.produced_by;
        v.produced_by.clear();
        v.awaits_producer = false;
      }
    }
    std::vector<ClassDemandRow> class_rates;  // each class's last, for a service of several
    if (spec.is_service() && !IsFinalState(w.row.state)) {
      // What its forecast knew before the restart (RecordDemand): the stored steps, then the
      // last report where it came after the newest step began (it joined that step,
      // DemandRecorder). The recorder goes on from both.
      auto resume = [&](std::vector<DemandPoint>& history, DemandRecorder& recorder,
                        std::optional<DemandPoint> last) {
        const std::optional<DemandPoint> newest =
            history.empty() ? std::nullopt : std::optional<DemandPoint>(history.back());
        recorder.Resume(newest, last);
        if (last && (!newest || last->at > newest->at)) history.push_back(*last);
        while (!history.empty() && history.back().at >= now) history.pop_back();
      };
      auto history = store_->DemandOf(w.row.id, now - kDemandHistoryKept);
      if (!history.ok()) return history.status();
      for (const auto& [at, rps] : *history) spec.realtime.history.push_back(DemandPoint{at, rps});
      resume(spec.realtime.history, w.demand_steps,
             w.row.demand_at > 0
                 ? std::optional<DemandPoint>(DemandPoint{w.row.demand_at, w.row.demand_rps})
                 : std::nullopt);
      // And each class's, for a service of several (ReportDemand stores them).
      std::vector<RequestClass>& classes = spec.realtime.classes;
      if (classes.size() > 1) {
        auto steps = store_->ClassDemandHistoryOf(w.row.id, now - kDemandHistoryKept);
        if (!steps.ok()) return steps.status();
        auto rates = store_->ClassDemandOf(w.row.id);
        if (!rates.ok()) return rates.status();
        class_rates = std::move(*rates);
        for (RequestClass& c : classes) {
          for (const ClassDemandRow& r : *steps)
            if (c.name == r.request_class) c.history.push_back(DemandPoint{r.at, r.rps});
          std::optional<DemandPoint> last;
          for (const ClassDemandRow& r : class_rates)
            if (c.name == r.request_class) last = DemandPoint{r.at, r.rps};
          resume(c.history, w.class_steps[c.name], last);
        }
      }
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
        for (const ClassDemandRow& r : class_rates)
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
    CountActive(workloads_.at(id));
    IndexName(workloads_.at(id));
  }
  // Runs started and failed so far, for the workloads that will run again.
  for (auto& [id, w] : workloads_) {
    if (IsFinalState(w.row.state)) continue;
    auto runs = store_->RunsOf(id);
    if (!runs.ok()) return runs.status();
    for (const RunRow& r : *runs) {
      w.attempts = std::max(w.attempts, r.attempt);
      // Runs that failed on their own count towards the retry limit across restarts.
      if (r.state == "exited" && r.exit_code.value_or(0) != 0 &&
          (r.stop_reason.rfind("exited with status", 0) == 0 ||
           r.stop_reason.rfind("ended while the daemon was down", 0) == 0))
        ++w.failures;
    }
  }
  std::vector<RunRow> live = std::move(*live_rows);
  int adopted = 0;
  for (RunRow& r : live) {
    AIRTIME_RETURN_IF_ERROR(RecoverRun(std::move(r), now));
  }
  for (const auto& [id, run] : runs_) adopted += !run.stopping;
  engine_->SetPaused(false);
  SyncWorkloadStates();
  // The ended ones held, in the order they ended (the first to end is let go first); the
  // store's counts of the others for /metrics.
  std::vector<WorkloadRec*> done;
  size_t ended_held = 0;
  for (auto& [id, w] : workloads_) {
    if (!IsFinalState(w.row.state)) continue;
    ++ended_held;
    // Ended over its checkpoint cap, and the daemon before stopped before it removed the
    // directory: this one does (a no-op when it is gone).
    if (EndedOverCheckpointCap(w.row.state, w.row.message, CheckpointDir(id)))
      checkpoint_purges_.insert(id);
    if (!w.ended_noted) done.push_back(&w);
  }
  std::stable_sort(done.begin(), done.end(), [](const WorkloadRec* a, const WorkloadRec* b) {
    return a->row.finished_at.value_or(a->row.submitted_at) <
           b->row.finished_at.value_or(b->row.submitted_at);
  });
  for (WorkloadRec* w : done) NoteEnded(*w);
  auto counts = store_->CountWorkloads();
  if (!counts.ok()) return counts.status();
  for (const auto& [id, w] : workloads_) --(*counts)[{w.row.state, w.row.kind}];
  for (const auto& [key, n] : *counts)
    if (n > 0) evicted_counts_[key] = n;
  int64_t stored = 0;
  for (const auto& [key, n] : *counts) stored += std::max<int64_t>(0, n);
  startup_note_ += "; store " + store_->path() + ": " +
                   std::to_string(workloads_.size() + static_cast<size_t>(stored)) +
                   " workload(s), " + std::to_string(active) + " not ended (" +
                   std::to_string(ended_held) + " ended kept in memory); " +
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
    recorded.port = static_cast<int>(run.port);
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
