// ReadLogRange: bytes of a run's log file for GET /v1/workloads/{id}/logs.
//
// A run's directory may be writable by the workload (its own user under isolation), so the
// workload could put a link where its log should be, to make the daemon read another file
// (another tenant's log, the store, /etc/shadow). The log is therefore opened with
// O_NOFOLLOW, and must be a regular file with one link (a hard link to a file the workload
// could not read is refused too); anything else is an error that says so.
#pragma once

#include <cstdint>
#include <string>

#include "airtime/base/status.h"

namespace airtime {

struct LogRange {
  int64_t offset = 0;  // of data's first byte
  int64_t size = 0;    // the file's size when read
  std::string data;
};

// Up to `limit` bytes of `path` from `offset` (-1: the last `limit` bytes); an offset past
// the end gives none. A missing file is kNotFound ("no log yet: PATH does not exist").
StatusOr<LogRange> ReadLogRange(const std::string& path, int64_t offset, int64_t limit);

}  // namespace airtime
