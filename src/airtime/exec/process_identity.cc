// Process identity: see process_identity.h.
#include "airtime/exec/process_identity.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/exec/run_files.h"

namespace airtime {

std::optional<ProcStat> ParseProcStat(std::string_view stat) {
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string_view::npos) return std::nullopt;
  std::vector<std::string_view> fields;  // fields[0] is field 3 (state)
  for (std::string_view f : Split(Trim(stat.substr(close_paren + 1)), ' ')) {
    if (!f.empty()) fields.push_back(f);
  }
  constexpr size_t kStartTimeIndex = 22 - 3;
  if (fields.size() <= kStartTimeIndex || fields[0].size() != 1) return std::nullopt;
  std::optional<int64_t> ticks = ParseInt(fields[kStartTimeIndex]);
  if (!ticks || *ticks < 0) return std::nullopt;
  return ProcStat{fields[0][0], *ticks};
}

StatusOr<ProcStat> ReadProcStat(pid_t pid) {
  if (pid <= 0) return InvalidArgument("no process " + std::to_string(pid));
  std::string path = "/proc/" + std::to_string(pid) + "/stat";
  StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  std::optional<ProcStat> stat = ParseProcStat(*text);
  if (!stat) return Internal(path + ": cannot parse '" + *text + "'");
  return *stat;
}

StatusOr<std::string> CurrentBootId() {
  static std::mutex mu;
  static std::string cached;
  std::lock_guard<std::mutex> lock(mu);
  if (!cached.empty()) return cached;
  const std::string path = "/proc/sys/kernel/random/boot_id";
  StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  std::string id(Trim(*text));
  if (id.empty()) return Internal(path + ": empty");
  cached = id;
  return cached;
}

bool SameProcess(pid_t pid, int64_t start_ticks, const std::string& boot_id) {
  if (!boot_id.empty()) {
    StatusOr<std::string> current = CurrentBootId();
    if (!current.ok() || *current != boot_id) return false;
  }
  StatusOr<ProcStat> stat = ReadProcStat(pid);
  return stat.ok() && stat->start_ticks == start_ticks;
}

}  // namespace airtime
