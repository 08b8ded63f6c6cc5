// Free space on the data directory's file system, and the rule that pauses starts when it
// runs low: a run needs room for its claim, exit and log files, and the store for its rows.
#pragma once

#include <cstdint>
#include <string>

#include "airtime/base/status.h"

namespace airtime {

// Bytes an unprivileged process may still write on the file system of `dir` (statvfs:
// f_bavail * f_frsize). An error names the directory.
StatusOr<uint64_t> FreeBytes(const std::string& dir);

// The size of the file system of `dir` (statvfs: f_blocks * f_frsize).
StatusOr<uint64_t> TotalBytes(const std::string& dir);

// Why starts are paused, or "" when `free_bytes` is at least `min_bytes` (a `min_bytes` of
// 0 never pauses). Names the directory and both figures in MiB, rounded down.
std::string DiskPauseReason(const std::string& dir, uint64_t free_bytes, uint64_t min_bytes);

}  // namespace airtime
