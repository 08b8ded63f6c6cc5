// Daemon: run logs cut over --max-log-mib (log_cap.h, docs/server.md "Limits"). Every
// log_check_interval each live run's stdout.log and stderr.log are looked at, and once more
// when the run ends; one over the cap keeps its tail in NAME.1 and starts again with a note.
// A workload that writes without end thus takes a bounded part of the data directory's file
// system, instead of filling it and pausing every tenant's starts.
#include <iostream>

#include "airtime/exec/log_cap.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/daemon.h"

namespace airtime {

void Daemon::CapLogsOf(const RunRow& run, TimeMs now) {
  if (options_.max_log_mib <= 0 || run.run_dir.empty()) return;
  const int64_t cap = options_.max_log_mib * 1024 * 1024;
  for (const char* name : {kStdoutLog, kStderrLog}) {
    auto cut = CapLog(run.run_dir, name, cap, now);
    if (!cut.ok()) {
      // Said once per run and file: a log that cannot be cut now will not be cut later.
      if (log_cap_warned_.insert(run.run_dir + "/" + name).second)
        std::cerr << "airtime server: run " << run.id << ": " << cut.status().message() << "\n";
      continue;
    }
    if (!cut->has_value()) continue;
    ++log_cuts_;
    log_bytes_dropped_ += (*cut)->size - (*cut)->kept;
    std::cerr << "airtime server: run " << run.id << " (workload " << run.workload_id
              << "): " << name << " reached " << (*cut)->size << " bytes, over --max-log-mib "
              << options_.max_log_mib << ": cut, its last " << (*cut)->kept << " bytes kept in "
              << name << ".1\n";
  }
}

void Daemon::CapRunLogs(TimeMs now) {
  for (const auto& [id, run] : runs_) CapLogsOf(run.row, now);
}

}  // namespace airtime
