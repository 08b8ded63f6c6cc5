// Daemon: run logs cut over --max-log-mib (log_cap.h, docs/server.md "Limits"). Every
// log_check_interval each live run's stdout.log and stderr.log are looked at, off the loop
// (a cut copies up to 4 MiB of tail: decisions and API calls must not wait on it), and once
// more when the run ends, on the loop; one over the cap keeps its tail in NAME.1 and starts
// again with a note. A workload that writes without end thus takes a bounded part of the
// data directory's file system, instead of filling it and pausing every tenant's starts.
#include <iostream>

#include "airtime/exec/log_cap.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/daemon.h"

namespace airtime {

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

void Daemon::CapRunLogs(TimeMs now) {
  if (options_.max_log_mib <= 0 || log_check_busy_) return;  // the last round is still at it
  std::vector<LogCheck> checks;
  for (const auto& [id, run] : runs_)
    if (!run.row.run_dir.empty())
      checks.push_back({run.row.id, run.row.workload_id, run.row.run_dir});
  if (checks.empty()) return;
  if (log_checker_.joinable()) log_checker_.join();
  log_check_busy_ = true;
  log_checker_ = std::thread([this, checks = std::move(checks), now] {
    struct Result {
      LogCheck check;
      const char* name;
      StatusOr<std::optional<LogCut>> cut;
    };
    std::vector<Result> results;
    for (const LogCheck& c : checks)
      for (const char* name : {kStdoutLog, kStderrLog})
        results.push_back({c, name, CutLog(c.run_dir, name, now)});
    Post([this, results = std::move(results)] {
      for (const Result& r : results) NoteLogCut(r.check, r.name, r.cut);
      log_check_busy_ = false;
    });
  });
}

}  // namespace airtime
