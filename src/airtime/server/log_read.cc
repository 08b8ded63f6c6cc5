// ReadLogRange: a bounded read of a log that a workload cannot redirect.
#include "airtime/server/log_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "airtime/base/unique_fd.h"

namespace airtime {
StatusOr<LogRange> ReadLogRange(const std::string& path, int64_t offset, int64_t limit) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    if (err == ENOENT) return NotFound("no log yet: " + path + " does not exist");
    if (err == ELOOP) return FailedPrecondition(path + ": is a symbolic link, not a log; not read");
    return Internal(path + ": cannot open: " + std::strerror(err));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return Internal(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return FailedPrecondition(path + ": not a regular file; not read");
  if (st.st_nlink != 1) {
    return FailedPrecondition(path + ": has " + std::to_string(st.st_nlink) +
                              " hard links, a log has one; not read");
  }
  LogRange r;
  r.size = static_cast<int64_t>(st.st_size);
  limit = std::max<int64_t>(0, limit);
  r.offset = offset < 0 ? std::max<int64_t>(0, r.size - limit) : offset;
  if (r.offset >= r.size) {
    r.offset = std::min(r.offset, r.size);
    return r;
  }
  const int64_t want = std::min(limit, r.size - r.offset);
  r.data.resize(static_cast<size_t>(want));
  int64_t got = 0;
  while (got < want) {
    const ssize_t n = pread(fd.get(), r.data.data() + got, static_cast<size_t>(want - got),
                            static_cast<off_t>(r.offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Internal(path + ": cannot read: " + std::strerror(errno));
    if (n == 0) break;  // truncated since the stat
    got += n;
  }
  r.data.resize(static_cast<size_t>(got));
  return r;
}

}  // namespace airtime
