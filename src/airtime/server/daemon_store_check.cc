// Daemon: opening the store with its start-up check (store_marks.h), recovery from an
// accepted store loss, the store marks, and the start pause on a full disk.
#include <signal.h>

#include <ctime>
#include <fstream>
#include <iostream>
#include <map>

#include "airtime/base/strings.h"
#include "airtime/exec/process_identity.h"
#include "airtime/exec/run_files.h"
#include "airtime/exec/shim.h"
#include "airtime/server/daemon.h"
#include "airtime/server/disk_space.h"

namespace airtime {

TimeMs WallNow();

namespace {

constexpr DurationMs kNoSpacePause = 10 * kSecond;

std::string UtcTime(TimeMs at) {
  const time_t t = static_cast<time_t>(at / 1000);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Appends `record` to DATA/store-loss.log and says it on stderr.
Status LogStoreLoss(const std::string& data_dir, const std::string& record) {
  const std::string log_path = data_dir + "/" + kStoreLossLog;
  std::ofstream log(log_path, std::ios::app);
  log << record;
  log.flush();
  if (!log) return FailedPrecondition("cannot record the store loss in " + log_path);
  std::cerr << "airtime server: " << record;
  return OkStatus();
}

}  // namespace

Status Daemon::OpenStore() {
  auto check = OpenAndCheckStore(options_.data_dir);
  if (!check.ok()) return check.status();
  store_ = std::move(check->store);
  if (!check->damage.problems.empty()) {
    if (!options_.accept_store_loss)
      return FailedPrecondition(StoreDamageMessage(options_.data_dir, check->damage));
    if (!store_) {  // the database was missing or empty: a new one
      auto store = Store::Open(options_.data_dir);
      if (!store.ok()) return store.status();
      store_ = std::move(*store);
    }
    AIRTIME_RETURN_IF_ERROR(AcceptStoreLoss(*check, &store_loss_note_));
  }
  auto extent = store_->Extent();
  if (!extent.ok()) return extent.status();
  marks_ = MarksOf(*extent);
  // Run ids the last daemon reserved and did not use are skipped: one of them may name a
  // run whose row a crash took (a Slurm job by that name would be mistaken for a new run's).
  // The marks keep them reserved, not as the store's highest run: a crash that takes this
  // unmarked commit leaves a store that still matches its marks, and the next start skips
  // them again.
  if (check->damage.run_high > marks_.run) {
    AIRTIME_RETURN_IF_ERROR(store_->RaiseIdFloors(0, 0, check->damage.run_high));
    marks_.run_reserved = check->damage.run_high;
  }
  // Written before anything else happens: from now on, this store is the one of record.
  if (Status st = WriteStoreMarks(options_.data_dir, marks_); !st.ok())
    return FailedPrecondition("cannot write the store marks: " + st.message());
  return OkStatus();
}

// The user accepted the loss: record it, stop what the store no longer knows, keep finished
// work finished, and keep ids above everything seen.
Status Daemon::AcceptStoreLoss(const StoreCheck& check, std::string* note) {
  const TimeMs now = WallNow();
  const StoreDamage& d = check.damage;
  std::vector<std::string> lines;
  auto workloads = store_->LoadWorkloads(/*active_only=*/false);
  if (!workloads.ok()) return workloads.status();
  std::map<int64_t, WorkloadRow> by_id;
  for (WorkloadRow& w : *workloads) by_id.emplace(w.id, std::move(w));
  int stopped = 0, completed = 0, lost = 0;
  for (int64_t id : d.unknown_run_dirs) {
    const std::string dir = options_.data_dir + "/runs/" + std::to_string(id);
    const std::optional<RunOwner> owner = ReadRunOwner(dir);
    const std::string who =
        owner ? "workload '" + owner->name + "' (id " + std::to_string(owner->workload_id) + ")"
              : "an unknown workload";
    StatusOr<Claim> claim = ReadClaim(dir);
    if (claim.ok() && claim->kind == Claim::Kind::kStarted &&
        SameProcess(claim->pid, claim->start_ticks, claim->boot_id)) {
      // Its GPUs are free as far as the store knows: it must not keep running beside new work.
      (void)killpg(claim->pid, SIGKILL);
      ++stopped;
      lines.push_back("run " + std::to_string(id) + " of " + who + " was still running as pid " +
                      std::to_string(claim->pid) + ": stopped (SIGKILL to its process group)");
    }
    StatusOr<ExitRecord> exit = ReadExitFile(dir);
    auto w = owner ? by_id.find(owner->workload_id) : by_id.end();
    const bool same = w != by_id.end() && w->second.name == owner->name;
    if (!same) {
      ++lost;
      lines.push_back("run " + std::to_string(id) + " of " + who +
                      ": the store no longer has this workload; it is not run again");
      continue;
    }
    WorkloadRow& row = w->second;
    if (exit.ok() && exit->Code() == 0 && !IsFinalState(row.state) && row.kind != "realtime") {
      row.state = "succeeded";
      row.finished_at = now;
      row.exit_code = 0;
      row.message = "completed (run " + std::to_string(id) + ", found in " + dir +
                    "/exit after the store lost it)";
      AIRTIME_RETURN_IF_ERROR(store_->UpdateWorkload(row));
      ++completed;
      lines.push_back("run " + std::to_string(id) + " of " + who +
                      " had finished (exit 0): the workload is marked succeeded");
    } else {
      lines.push_back("run " + std::to_string(id) + " of " + who + ": " +
                      (exit.ok() ? "ended with code " + std::to_string(exit->Code())
                                 : std::string("no exit record")) +
                      "; the workload keeps its state in the store (" + row.state + ")");
    }
  }
  AIRTIME_RETURN_IF_ERROR(store_->RaiseIdFloors(d.submission_high, d.workload_high, d.run_high));
  lines.push_back("new submissions, workloads and runs get ids above " +
                  std::to_string(d.submission_high) + ", " + std::to_string(d.workload_high) +
                  " and " + std::to_string(d.run_high));
  std::string record = UtcTime(now) + " airtime server --accept-store-loss: " + store_->path() +
                       " did not match the data directory:\n";
  for (const std::string& p : d.problems) record += "  problem: " + p + "\n";
  for (const std::string& l : lines) record += "  action: " + l + "\n";
  AIRTIME_RETURN_IF_ERROR(LogStoreLoss(options_.data_dir, record));
  (void)store_->SetMeta("store_loss_accepted_at", std::to_string(now));
  *note = "store loss accepted (" + std::to_string(d.problems.size()) + " problem(s); " +
          std::to_string(completed) + " workload(s) marked succeeded from their exit files, " +
          std::to_string(stopped) + " unknown run(s) stopped, " + std::to_string(lost) +
          " run(s) of lost workloads): see " + options_.data_dir + "/" + kStoreLossLog;
  return OkStatus();
}

// After the backend opened: runs it still has under this daemon's name whose rows the store
// lost (a crash of the machine inside a block of reserved run ids, store_marks.h). Left
// alone they would look like someone else's work while their workloads ran again. Refused
// as a damaged store is; --accept-store-loss ends them, and their workloads run again as
// the store has them (from their checkpoints).
Status Daemon::CheckUnrecordedRuns() {
  auto extent = store_->Extent();
  if (!extent.ok()) return extent.status();
  auto runs = actuator_->Unrecorded(extent->run_ids);
  if (!runs.ok()) return runs.status();
  if (runs->empty()) return OkStatus();
  std::string list;
  for (size_t i = 0; i < runs->size() && i < 10; ++i)
    list += (i ? ", " : "") + std::string("run ") + std::to_string((*runs)[i].run_id) + " of '" +
            (*runs)[i].workload + "' as " + (*runs)[i].what;
  if (runs->size() > 10) list += " and " + std::to_string(runs->size() - 10) + " more";
  const std::string problem = store_->path() + " has no record of " + std::to_string(runs->size()) +
                              " run(s) the backend still has " +
                              "under this daemon's name: " + list;
  if (!options_.accept_store_loss)
    return FailedPrecondition(
        problem +
        ". The store lost its last commits (a crash of the machine, or a database restored "
        "from an older copy). Restore the database with its WAL, or start once with "
        "--accept-store-loss: these runs are ended then, and their workloads run again as "
        "the store has them.");
  std::string record =
      UtcTime(WallNow()) + " airtime server --accept-store-loss: " + problem + "\n";
  int ended = 0;
  for (const UnrecordedRun& r : *runs) {
    const Status st = actuator_->EndUnrecorded(r);
    ended += st.ok();
    record += "  action: run " + std::to_string(r.run_id) + " (" + r.what +
              "): " + (st.ok() ? std::string("ended") : "not ended: " + st.message()) + "\n";
  }
  AIRTIME_RETURN_IF_ERROR(LogStoreLoss(options_.data_dir, record));
  store_loss_note_ += std::string(store_loss_note_.empty() ? "" : "; ") + std::to_string(ended) +
                      " of " + std::to_string(runs->size()) +
                      " run(s) the store had lost ended in the backend";
  return OkStatus();
}

bool Daemon::SaveMarks() {
  Status st = WriteStoreMarks(options_.data_dir, marks_);
  if (!st.ok() && !marks_warned_) {
    std::cerr << "airtime server: " << st.message()
              << " (the start-up check of the store is weaker until it can be written)\n";
    marks_warned_ = true;
  }
  if (st.ok()) marks_warned_ = false;
  return st.ok();
}

std::string Daemon::StartsPaused(TimeMs now) {
  std::string why;
  if (options_.min_free_mib > 0) {
    StatusOr<uint64_t> free = FreeBytes(options_.data_dir);
    if (free.ok())
      why = DiskPauseReason(options_.data_dir, *free,
                            static_cast<uint64_t>(options_.min_free_mib) * 1024 * 1024);
  }
  if (why.empty() && now < no_space_until_) why = no_space_why_;
  start_pause_ = why;
  return why;
}

void Daemon::NotStarted(RunRec run, WorkloadRec& w, const std::string& why, TimeMs now) {
  no_space_until_ = now + kNoSpacePause;
  no_space_why_ = "starts paused until " + UtcTime(no_space_until_) + ": " + why;
  if (w.attempts > 0) --w.attempts;  // not an attempt of the workload's
  if (run.row.id > 0) {
    run.row.state = "abandoned";
    run.row.ended_at = now;
    run.row.stop_reason = "not started: " + why;
    (void)store_->UpdateRun(run.row);
  }
  run_of_allocation_.erase(run.allocation);
  runs_.erase(run.row.id);
  engine_wake_ = std::min(engine_wake_, no_space_until_);
  // The engine hears a failure (the job goes back to the queue; nothing had run), but the
  // daemon counts none: starts are paused, so it is not started again at once.
  Feed(Event::Failure(now, run.allocation), exit_seen_);
}

}  // namespace airtime
