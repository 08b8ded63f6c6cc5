// Process identity: telling "the process we started" from "a process that now has its pid".
//
// A pid alone is reused by the kernel. A process is identified by (pid, start time, boot):
// the start time is field 22 of /proc/PID/stat (clock ticks since boot, fixed for the
// process's life) and the boot is /proc/sys/kernel/random/boot_id (a new random value at
// each boot, so ticks from an earlier boot never match). All functions read /proc only.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "airtime/base/status.h"

namespace airtime {

struct ProcStat {
  char state = '?';  // field 3: 'R', 'S', 'Z' (zombie: exited, not yet reaped), ...
  int64_t start_ticks = 0;
};

// Parses the text of /proc/PID/stat. comm (field 2) may contain spaces and parentheses, so
// the fields are read after the LAST ')'. nullopt when malformed.
std::optional<ProcStat> ParseProcStat(std::string_view stat);

// NotFound when there is no process `pid`; Internal for other read errors.
StatusOr<ProcStat> ReadProcStat(pid_t pid);

// The current boot id (cached after the first successful read).
StatusOr<std::string> CurrentBootId();

// True when `pid` exists (zombies included), started at `start_ticks`, in boot `boot_id`.
// An empty boot_id is not compared.
bool SameProcess(pid_t pid, int64_t start_ticks, const std::string& boot_id);

}  // namespace airtime
