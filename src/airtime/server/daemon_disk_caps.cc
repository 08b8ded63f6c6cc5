// Daemon: the data directory's file system kept from filling (docs/server.md "A full
// disk"). A workload that writes without end, to its logs or to its checkpoint directory,
// would fill it by itself and so pause every tenant's starts (--min-free-mib).
//
// Run logs over --max-log-mib are cut (log_cap.h): one over the cap keeps its tail in NAME.1
// and starts again with a note. Every disk_check_interval a round off the loop (a cut copies
// up to 4 MiB of tail, and a checkpoint directory may hold many files: decisions and API
// calls must not wait on them) looks at each live run's stdout.log and stderr.log, and
// measures the checkpoint directory of each workload that has a run (checkpoint_cap.h). A
// run's logs are looked at once more when it ends, on the loop. A workload over its
// checkpoint cap ends as failed, with its service's other members (they share its reason to
// run); a later round removes the directory once none of its runs is left to write to it.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "airtime/exec/log_cap.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/checkpoint_cap.h"
#include "airtime/server/daemon.h"
#include "airtime/server/disk_space.h"

namespace airtime {

TimeMs WallNow();

StatusOr<std::optional<LogCut>> Daemon::CutLog(const std::string& run_dir, const char* name,
                                               TimeMs now) {
  // One cut at a time: the round's, off the loop, and a run's as it ends, on it.
  std::lock_guard<std::mutex> lock(log_cut_mu_);
  return CapLog(run_dir, name, options_.max_log_mib * 1024 * 1024, now);
}

void Daemon::NoteLogCut(const LogCheck& check, const char* name,
                        const StatusOr<std::optional<LogCut>>& cut) {
  if (!cut.ok()) {
    // Said once per run and file: a log that cannot be cut now will not be cut later. (An
    // ended run's is not remembered: its run will not be looked at again.)
    const std::string key = check.run_dir + "/" + name;
    if (log_cap_warned_.insert(key).second)
      std::cerr << "airtime server: run " << check.run << ": " << cut.status().message() << "\n";
    if (runs_.count(check.run) == 0) log_cap_warned_.erase(key);
    return;
  }
  if (!cut->has_value()) return;
  ++log_cuts_;
  log_bytes_dropped_ += (*cut)->size - (*cut)->kept;
  std::cerr << "airtime server: run " << check.run << " (workload " << check.workload
            << "): " << name << " reached " << (*cut)->size << " bytes, over --max-log-mib "
            << options_.max_log_mib << ": cut, its last " << (*cut)->kept << " bytes kept in "
            << name << ".1\n";
}

void Daemon::CapLogsOf(const RunRow& run, TimeMs now) {
  if (options_.max_log_mib <= 0 || run.run_dir.empty()) return;
  const LogCheck check{run.id, run.workload_id, run.run_dir};
  for (const char* name : {kStdoutLog, kStderrLog})
    NoteLogCut(check, name, CutLog(run.run_dir, name, now));
}

std::string Daemon::CheckpointDir(int64_t workload) const {
  return options_.data_dir + "/checkpoints/" + std::to_string(workload);
}

Status Daemon::ResolveCheckpointCap() {
  constexpr uint64_t kMiB = 1024 * 1024;
  if (options_.max_checkpoint_mib >= 0) {
    checkpoint_cap_bytes_ = static_cast<uint64_t>(options_.max_checkpoint_mib) * kMiB;
    return OkStatus();
  }
  StatusOr<uint64_t> total = TotalBytes(options_.data_dir);
  if (!total.ok())
    return FailedPrecondition(total.status().message() +
                              " (needed for the default --max-checkpoint-mib; give one)");
  checkpoint_cap_bytes_ = std::max<uint64_t>(DefaultCheckpointCap(*total), kMiB);
  return OkStatus();
}

void Daemon::CheckDiskUse(TimeMs now) {
  if (disk_check_busy_) return;  // the last round is still at it
  std::vector<LogCheck> logs;
  if (options_.max_log_mib > 0)
    for (const auto& [id, run] : runs_)
      if (!run.row.run_dir.empty())
        logs.push_back({run.row.id, run.row.workload_id, run.row.run_dir});
  // Only a workload with a run can write to its directory (replicas share one: once each).
  std::set<int64_t> measured, purged;
  for (const auto& [id, run] : runs_) measured.insert(run.row.workload_id);
  for (int64_t w : checkpoint_purges_)
    if (!measured.count(w)) purged.insert(w);
  if (logs.empty() && measured.empty() && purged.empty()) return;
  if (disk_checker_.joinable()) disk_checker_.join();
  disk_check_busy_ = true;
  struct Measure {
    int64_t workload;
    std::string dir;
  };
  std::vector<Measure> measures, purges;
  for (int64_t w : measured) measures.push_back({w, CheckpointDir(w)});
  for (int64_t w : purged) purges.push_back({w, CheckpointDir(w)});
  disk_checker_ = std::thread([this, logs = std::move(logs), measures = std::move(measures),
                               purges = std::move(purges), now] {
    struct LogResult {
      LogCheck check;
      const char* name;
      StatusOr<std::optional<LogCut>> cut;
    };
    std::vector<LogResult> cuts;
    for (const LogCheck& c : logs)
      for (const char* name : {kStdoutLog, kStderrLog})
        cuts.push_back({c, name, CutLog(c.run_dir, name, now)});
    struct UsageResult {
      Measure measure;
      DirUsage usage;
    };
    std::vector<UsageResult> usages;
    for (const Measure& m : measures)
      usages.push_back({m, MeasureDir(m.dir, kMaxCheckpointEntries)});
    struct Removal {
      Measure measure;
      uintmax_t entries;  // what went (0: it was gone already)
      std::string error;  // "" once it is gone
    };
    std::vector<Removal> removed;
    for (const Measure& m : purges) {
      std::error_code ec;
      const uintmax_t n = std::filesystem::remove_all(m.dir, ec);
      removed.push_back({m, ec ? 0 : n, ec ? ec.message() : ""});
    }
    Post([this, cuts = std::move(cuts), usages = std::move(usages), removed = std::move(removed),
          now] {
      for (const LogResult& r : cuts) NoteLogCut(r.check, r.name, r.cut);
      for (const UsageResult& r : usages) {
        if (!r.usage.failed.empty()) {
          // The daemon's own trouble: the workload is not ended for it. Said once a directory.
          if (checkpoint_warned_.insert(r.measure.dir).second)
            std::cerr << "airtime server: workload " << r.measure.workload << ": cannot measure "
                      << r.measure.dir << " (" << r.usage.failed
                      << "); its checkpoint cap waits for the next round that can\n";
          continue;
        }
        checkpoint_warned_.erase(r.measure.dir);
        const std::string why = CheckpointOverCap(r.measure.dir, r.usage, checkpoint_cap_bytes_);
        if (!why.empty()) EndOverCheckpointCap(r.measure.workload, why);
      }
      for (const auto& [m, entries, error] : removed) {
        if (!error.empty()) {
          if (checkpoint_warned_.insert(m.dir).second)
            std::cerr << "airtime server: workload " << m.workload << ": cannot remove " << m.dir
                      << ", over its checkpoint cap: " << error << "\n";
          continue;
        }
        checkpoint_warned_.erase(m.dir);
        checkpoint_purges_.erase(m.workload);
        if (entries > 0)
          std::cerr << "airtime server: workload " << m.workload << ": " << m.dir
                    << " removed (over its checkpoint cap)\n";
      }
      disk_check_busy_ = false;
    });
  });
}

void Daemon::EndOverCheckpointCap(int64_t workload, const std::string& why) {
  auto it = workloads_.find(workload);
  if (it == workloads_.end()) return;
  WorkloadRec& w = it->second;
  std::vector<WorkloadRec*> live;
  std::vector<int64_t> group = {workload};
  if (w.spec->realtime.is_member()) group = members_of_.at(w.spec->realtime.group);
  for (int64_t m : group) {
    WorkloadRec& r = workloads_.at(m);
    if (!IsFinalState(r.row.state)) live.push_back(&r);
  }
  if (live.empty()) return;  // ended while the round measured it
  const std::string message = CheckpointCapEnd(why);
  const Status st = EndWorkloads(live, "failed", message, std::max(WallNow(), engine_->now()));
  if (!st.ok()) {
    // The next round finds it over the cap again and tries again.
    std::cerr << "airtime server: workload " << workload << ": " << why
              << ", but it could not be ended: " << st.message() << "\n";
    return;
  }
  checkpoint_cap_ends_ += static_cast<int64_t>(live.size());
  checkpoint_purges_.insert(workload);
  std::cerr << "airtime server: workload " << workload << " (" << w.row.name << "): " << message
            << "\n";
}

}  // namespace airtime
