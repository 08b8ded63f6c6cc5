// Run directory files: see run_files.h.
#include "airtime/exec/run_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

// kResourceExhausted for a full file system, else kInternal.
Status WriteError(const std::string& what, int err) {
  return Status(NoSpaceErrno(err) ? StatusCode::kResourceExhausted : StatusCode::kInternal,
                ErrnoMessage(what, err));
}

// Creates `path` (failing if it exists), writes `text` and fsyncs it.
Status WriteNewFileSynced(const std::string& path, const std::string& text) {
  int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return WriteError("create " + path, errno);
  int err = WriteAll(fd, text);
  if (err == 0 && fsync(fd) != 0) err = errno;
  close(fd);
  if (err != 0) {
    unlink(path.c_str());
    return WriteError("write " + path, err);
  }
  return OkStatus();
}

void SyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;  // best effort: the rename itself already happened
  fsync(fd);
  close(fd);
}

std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  for (std::string_view w : Split(Trim(line), ' ')) {
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

}  // namespace

int WriteAll(int fd, std::string_view text) {
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    done += static_cast<size_t>(n);
  }
  return 0;
}

StatusOr<std::string> ReadSmallFile(const std::string& path) {
  // O_NONBLOCK: a FIFO in a damaged run directory must not block the daemon's start.
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0 && (errno == ENOENT || errno == ESRCH)) return NotFound(path + ": no such file");
  if (fd < 0) return Internal(ErrnoMessage("open " + path, errno));
  std::string text;
  char buf[4096];
  while (true) {
    ssize_t n = read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      // A /proc file of a process that vanishes while we read gives ESRCH.
      if (err == ESRCH) return NotFound(path + ": process gone");
      return Internal(ErrnoMessage("read " + path, err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxSmallFileBytes) {
      close(fd);
      return InvalidArgument(path + ": larger than " + std::to_string(kMaxSmallFileBytes) +
                             " bytes; not a run or /proc file");
    }
  }
  close(fd);
  return text;
}

bool NoSpaceErrno(int err) { return err == ENOSPC || err == EDQUOT; }

std::string ErrnoMessage(const std::string& what, int err) {
  return what + ": " + std::strerror(err);
}

std::string RunPath(const std::string& run_dir, const char* name) { return run_dir + "/" + name; }

std::string FormatClaim(const Claim& claim) {
  if (claim.kind == Claim::Kind::kAbandoned) return "abandoned\n";
  std::string out =
      "started " + std::to_string(claim.pid) + " " + std::to_string(claim.start_ticks);
  if (!claim.boot_id.empty()) out += " " + claim.boot_id;
  return out + "\n";
}

std::optional<Claim> ParseClaim(const std::string& text) {
  std::vector<std::string_view> w = Words(text);
  Claim claim;
  if (w.size() == 1 && w[0] == "abandoned") return claim;
  if ((w.size() != 3 && w.size() != 4) || w[0] != "started") return std::nullopt;
  std::optional<int64_t> pid = ParseInt(w[1]);
  std::optional<int64_t> ticks = ParseInt(w[2]);
  if (!pid || !ticks || *pid <= 0 || *ticks < 0) return std::nullopt;
  claim.kind = Claim::Kind::kStarted;
  claim.pid = static_cast<pid_t>(*pid);
  claim.start_ticks = *ticks;
  if (w.size() == 4) claim.boot_id = std::string(w[3]);
  return claim;
}

Status WriteClaim(const std::string& run_dir, const Claim& claim) {
  // A private temporary name, then link(): the claim appears complete or not at all.
  std::string tmp = RunPath(run_dir, ".claim.") + std::to_string(getpid()) + ".tmp";
  unlink(tmp.c_str());  // a leftover of an earlier process with the same pid
  AIRTIME_RETURN_IF_ERROR(WriteNewFileSynced(tmp, FormatClaim(claim)));
  std::string path = RunPath(run_dir, kClaimFile);
  int rc = link(tmp.c_str(), path.c_str());
  int err = errno;
  unlink(tmp.c_str());
  if (rc != 0 && err == EEXIST) {
    return Status(StatusCode::kAlreadyExists, path + ": the run is already claimed");
  }
  if (rc != 0) return Internal(ErrnoMessage("link " + tmp + " to " + path, err));
  SyncDir(run_dir);
  return OkStatus();
}

StatusOr<Claim> ReadClaim(const std::string& run_dir) {
  std::string path = RunPath(run_dir, kClaimFile);
  StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  std::optional<Claim> claim = ParseClaim(*text);
  if (!claim) return InvalidArgument(path + ": unreadable claim '" + *text + "'");
  return *claim;
}

std::string FormatRunOwner(const RunOwner& owner) {
  return std::to_string(owner.workload_id) + " " + owner.name + "\n";
}

std::optional<RunOwner> ReadRunOwner(const std::string& run_dir) {
  StatusOr<std::string> text = ReadSmallFile(RunPath(run_dir, kRunOwnerFile));
  if (!text.ok() || text->size() > 4096) return std::nullopt;
  const std::string_view line = Trim(*text);
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  std::optional<int64_t> id = ParseInt(line.substr(0, space));
  if (!id || *id <= 0) return std::nullopt;
  return RunOwner{*id, std::string(line.substr(space + 1))};
}

std::string FormatExit(const ExitRecord& record) {
  return std::string(record.signaled ? "signal " : "exit ") + std::to_string(record.value) + "\n";
}

std::optional<ExitRecord> ParseExit(const std::string& text) {
  std::vector<std::string_view> w = Words(text);
  if (w.size() != 2 || (w[0] != "exit" && w[0] != "signal")) return std::nullopt;
  std::optional<int64_t> value = ParseInt(w[1]);
  if (!value || *value < 0 || *value > 255) return std::nullopt;
  return ExitRecord{w[0] == "signal", static_cast<int>(*value)};
}

Status WriteExitFile(const std::string& run_dir, const ExitRecord& record) {
  std::string tmp = RunPath(run_dir, "exit.tmp");
  std::string path = RunPath(run_dir, kExitFile);
  unlink(tmp.c_str());
  AIRTIME_RETURN_IF_ERROR(WriteNewFileSynced(tmp, FormatExit(record)));
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return Internal(ErrnoMessage("rename " + tmp + " to " + path, errno));
  }
  SyncDir(run_dir);
  return OkStatus();
}

StatusOr<ExitRecord> ReadExitFile(const std::string& run_dir) {
  std::string path = RunPath(run_dir, kExitFile);
  StatusOr<std::string> text = ReadSmallFile(path);
  if (!text.ok()) return text.status();
  std::optional<ExitRecord> record = ParseExit(*text);
  if (!record) return InvalidArgument(path + ": unreadable exit record '" + *text + "'");
  return *record;
}

}  // namespace airtime
