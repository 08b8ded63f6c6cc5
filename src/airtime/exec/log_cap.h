// Log caps: a run's output logs (stdout.log, stderr.log) cut in place once over a cap, so
// that a workload writing without end cannot fill the data directory's file system (and so
// pause every tenant's starts, docs/server.md "A full disk").
//
// A log over its cap is cut as logrotate's copytruncate cuts one: its last `keep` bytes go
// to NAME.1 (written beside it and renamed over the previous cut's), the log is truncated
// to nothing, and a note is appended: when, at what size, where its tail went. The process
// keeps writing through its own descriptor, which the shim opened with O_APPEND, so its
// next write lands at the new end (before the note, if it writes at that instant); what
// it wrote between the copy and the truncation is lost. A run's logs then take at most
// about cap + keep bytes each, plus what the process writes between two checks.
// Only a regular file reached without following a symbolic link is cut, with one link
// unless it is owned by a user other than root and the daemon's (the run user's own log,
// which that user could link elsewhere to escape its cap); the file that takes its tail is
// made new (a workload's user may be able to write its run directory: log_read.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "airtime/base/status.h"
#include "airtime/base/time.h"

namespace airtime {

struct LogCut {
  int64_t size = 0;  // the log's size when it was cut
  int64_t kept = 0;  // bytes of its tail copied to NAME.1
};

// The tail a cut keeps for a cap: a quarter of it, at most 4 MiB.
int64_t LogCutKeep(int64_t cap);

// Cuts RUN_DIR/NAME when it holds more than `cap` bytes (> 0); nullopt when it does not,
// or is absent. `now` dates the note. An error names the file and what failed.
StatusOr<std::optional<LogCut>> CapLog(const std::string& run_dir, const std::string& name,
                                       int64_t cap, TimeMs now);

// What identifies the last cut of the log at `log_path`: its tail file's (PATH.1) inode,
// modification time and size, which each cut writes anew; "" while it has none. A reader
// that sees it change knows the log was cut since, even where the log has grown back past
// where the reader was (its size alone would not say).
std::string LogCutMark(const std::string& log_path);

}  // namespace airtime
