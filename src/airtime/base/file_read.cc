#include "airtime/base/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "airtime/base/unique_fd.h"

namespace airtime {
namespace {

const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a plain file";
}

// Opens `path` for reading if it is a regular file; `named` is "WHAT 'PATH'" for messages.
StatusOr<int> OpenRegular(const std::string& path, const std::string& named, struct stat* st) {
  // O_NONBLOCK: opening a FIFO that nobody writes to returns at once instead of waiting.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    std::string message = "cannot open " + named + ": " + std::strerror(err);
    if (err == ENOENT || err == ENOTDIR) return NotFound(message);
    if (err == EACCES || err == EPERM) return Status(StatusCode::kPermissionDenied, message);
    return InvalidArgument(message);
  }
  if (::fstat(fd, st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status(StatusCode::kUnavailable, "cannot stat " + named + ": " + std::strerror(err));
  }
  if (!S_ISREG(st->st_mode)) {
    ::close(fd);
    return InvalidArgument(named + " is " + KindOf(st->st_mode) + ", not a regular file");
  }
  // A regular file needs no O_NONBLOCK; clear it so that reads behave plainly.
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

// Appends to `out` what `fd` holds from `offset` on, failing once `out` would pass `limit`.
// Returns false on a read error (errno set) and sets *over when the limit was passed.
bool ReadFrom(int fd, off_t offset, size_t limit, std::string* out, bool* over) {
  char buffer[1 << 16];
  *over = false;
  while (true) {
    const ssize_t n = ::pread(fd, buffer, sizeof buffer, offset);
    if (n == 0) return true;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (out->size() + static_cast<size_t>(n) > limit) {
      *over = true;
      return true;
    }
    out->append(buffer, static_cast<size_t>(n));
    offset += n;
  }
}

}  // namespace

StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes,
                                      std::string_view what) {
  const std::string named = std::string(what) + " '" + path + "'";
  struct stat st {};
  auto opened = OpenRegular(path, named, &st);
  if (!opened.ok()) return opened.status();
  UniqueFd fd(*opened);
  const std::string too_large = path + ": larger than the " + std::to_string(max_bytes) +
                                "-byte limit for a " + std::string(what);
  if (st.st_size > 0 && static_cast<uint64_t>(st.st_size) > max_bytes)
    return InvalidArgument(too_large);
  std::string text;
  // st_size is only a hint (files in /proc report 0, a file may grow while read): reading
  // stops past max_bytes whatever the size said.
  text.reserve(static_cast<size_t>(st.st_size > 0 ? st.st_size : 0));
  bool over = false;
  if (!ReadFrom(fd.get(), 0, max_bytes, &text, &over))
    return Status(StatusCode::kUnavailable, "error reading " + named + ": " + std::strerror(errno));
  if (over) return InvalidArgument(too_large);
  return text;
}

StatusOr<std::string> ReadFileTail(const std::string& path, size_t max_bytes,
                                   std::string_view what) {
  const std::string named = std::string(what) + " '" + path + "'";
  struct stat st {};
  auto opened = OpenRegular(path, named, &st);
  if (!opened.ok()) return opened.status();
  UniqueFd fd(*opened);
  const off_t start =
      st.st_size > static_cast<off_t>(max_bytes) ? st.st_size - static_cast<off_t>(max_bytes) : 0;
  std::string text;
  bool over = false;
  if (!ReadFrom(fd.get(), start, max_bytes, &text, &over))
    return Status(StatusCode::kUnavailable, "error reading " + named + ": " + std::strerror(errno));
  // A file that grew while read: `text` holds its first max_bytes from `start`, still a tail.
  return text;
}

}  // namespace airtime
