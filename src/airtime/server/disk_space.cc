// Free space and the start pause: see disk_space.h.
#include "airtime/server/disk_space.h"

#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>

namespace airtime {

StatusOr<uint64_t> FreeBytes(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0)
    return Internal("statvfs " + dir + ": " + std::strerror(errno));
  return static_cast<uint64_t>(st.f_bavail) * static_cast<uint64_t>(st.f_frsize);
}

StatusOr<uint64_t> TotalBytes(const std::string& dir) {
  struct statvfs st {};
  if (statvfs(dir.c_str(), &st) != 0)
    return Internal("statvfs " + dir + ": " + std::strerror(errno));
  return static_cast<uint64_t>(st.f_blocks) * static_cast<uint64_t>(st.f_frsize);
}

std::string DiskPauseReason(const std::string& dir, uint64_t free_bytes, uint64_t min_bytes) {
  if (free_bytes >= min_bytes) return "";
  constexpr uint64_t kMiB = 1024 * 1024;
  return "starts paused: " + dir + "'s file system has " + std::to_string(free_bytes / kMiB) +
         " MiB free, below the " + std::to_string(min_bytes / kMiB) +
         " MiB needed to start a run (--min-free-mib); starts resume when space is freed";
}

}  // namespace airtime
