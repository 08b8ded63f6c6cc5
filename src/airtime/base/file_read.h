// ReadFileBounded: the whole content of a regular file, read with a size budget.
//
// Every file airtime reads from outside (cluster and workload YAML, traces, interference
// tables) goes through this, so that no input can make the reader run without end: a path
// that is not a regular file (a directory, a FIFO, /dev/zero, a socket) is refused before any
// byte is read, and at most `max_bytes` are read. The file is opened non-blocking, so that a
// FIFO with no writer cannot hang the open either. Errors name the file and what it is for:
//   NotFound         "cannot open trace file 'PATH': No such file or directory"
//   InvalidArgument  "trace file 'PATH' is a character device, not a regular file"
//   InvalidArgument  "PATH: larger than the 1073741824-byte limit for a trace file"
// Thread-safe.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

// `what` names the kind of file in messages ("trace file", "workload file").
StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes,
                                      std::string_view what);

}  // namespace airtime
