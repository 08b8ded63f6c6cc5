#include "airtime/exec/log_cap.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string_view>
#include <vector>

#include "airtime/base/strings.h"
#include "airtime/base/unique_fd.h"
#include "airtime/exec/run_files.h"

namespace airtime {
namespace {

// Writes all of `text` to `fd`; an error names `what`.
Status WriteTo(int fd, std::string_view text, const std::string& what) {
  const int err = WriteAll(fd, text);
  return err == 0 ? OkStatus() : Internal(ErrnoMessage("write " + what, err));
}

}  // namespace

int64_t LogCutKeep(int64_t cap) { return std::min<int64_t>(cap / 4, int64_t{4} << 20); }

std::string LogCutMark(const std::string& log_path) {
  struct stat st;
  if (lstat((log_path + ".1").c_str(), &st) != 0) return "";
  return std::to_string(st.st_ino) + "-" +
         std::to_string(int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec) + "-" +
         std::to_string(st.st_size);
}

StatusOr<std::optional<LogCut>> CapLog(const std::string& run_dir, const std::string& name,
                                       int64_t cap, TimeMs now) {
  const std::string path = run_dir + "/" + name;
  UniqueFd dir(open(run_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (dir.get() < 0) {
    if (errno == ENOENT) return std::optional<LogCut>();
    return Internal(ErrnoMessage("open " + run_dir, errno));
  }
  UniqueFd log(
      openat(dir.get(), name.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (log.get() < 0) {
    if (errno == ENOENT) return std::optional<LogCut>();
    return Internal(ErrnoMessage("open " + path, errno));
  }
  struct stat st {};
  if (fstat(log.get(), &st) != 0) return Internal(ErrnoMessage("stat " + path, errno));
  // A second link to a file the daemon (or root) owns could be a way to make it cut that
  // file; a link to the run user's own log is that user's doing (protected_hardlinks lets a
  // user link only files it owns or may write), and must not switch its cap off.
  const bool own_log = st.st_uid != 0 && st.st_uid != geteuid();
  if (!S_ISREG(st.st_mode) || (st.st_nlink != 1 && !own_log))
    return FailedPrecondition(path + " is not a regular file of one link: not cut");
  if (st.st_size <= cap) return std::optional<LogCut>();

  LogCut cut;
  cut.size = st.st_size;
  // Its tail, into NAME.1 (a temporary file renamed over the last cut's).
  const int64_t keep = std::min<int64_t>(LogCutKeep(cap), st.st_size);
  std::vector<char> tail(static_cast<size_t>(keep));
  size_t got = 0;
  while (got < tail.size()) {
    const ssize_t r = pread(log.get(), tail.data() + got, tail.size() - got,
                            static_cast<off_t>(st.st_size - keep) + static_cast<off_t>(got));
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return Internal(ErrnoMessage("read " + path, errno));
    if (r == 0) break;
    got += static_cast<size_t>(r);
  }
  const std::string kept_name = name + ".1", tmp_name = name + ".1.tmp";
  {
    // A new file: whatever a workload that may write its run directory left under the
    // temporary name goes first, and the new one cannot be a link it made.
    (void)unlinkat(dir.get(), tmp_name.c_str(), 0);
    UniqueFd out(openat(dir.get(), tmp_name.c_str(),
                        O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (out.get() < 0) return Internal(ErrnoMessage("create " + run_dir + "/" + tmp_name, errno));
    AIRTIME_RETURN_IF_ERROR(
        WriteTo(out.get(), std::string_view(tail.data(), got), run_dir + "/" + tmp_name));
    // The same owner as the log (the run user's, when isolating).
    if (fchown(out.get(), st.st_uid, st.st_gid) != 0 && errno != EPERM)
      return Internal(ErrnoMessage("chown " + run_dir + "/" + tmp_name, errno));
  }
  if (renameat(dir.get(), tmp_name.c_str(), dir.get(), kept_name.c_str()) != 0)
    return Internal(ErrnoMessage("rename " + run_dir + "/" + tmp_name, errno));
  cut.kept = static_cast<int64_t>(got);
  if (ftruncate(log.get(), 0) != 0) return Internal(ErrnoMessage("truncate " + path, errno));
  const std::string note = "[airtime " + FormatTime(now) + "] " + name + " reached " +
                           FormatMib(static_cast<double>(cut.size)) + ", over its cap of " +
                           FormatMib(static_cast<double>(cap)) + ": its last " +
                           std::to_string(cut.kept) + " bytes are in " + kept_name +
                           ", the rest of its output before this line was dropped\n";
  AIRTIME_RETURN_IF_ERROR(WriteTo(log.get(), note, path));
  return std::optional<LogCut>(cut);
}

}  // namespace airtime
