#include "airtime/base/file_read.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

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

// Closes the descriptor on every return path.
class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

StatusOr<std::string> ReadFileBounded(const std::string& path, size_t max_bytes,
                                      std::string_view what) {
  const std::string named = std::string(what) + " '" + path + "'";
  // O_NONBLOCK: opening a FIFO that nobody writes to returns at once instead of waiting.
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    const int err = errno;
    std::string message = "cannot open " + named + ": " + std::strerror(err);
    if (err == ENOENT || err == ENOTDIR) return NotFound(message);
    if (err == EACCES || err == EPERM) return Status(StatusCode::kPermissionDenied, message);
    return InvalidArgument(message);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0)
    return Status(StatusCode::kUnavailable, "cannot stat " + named + ": " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    return InvalidArgument(named + " is " + KindOf(st.st_mode) + ", not a regular file");
  const std::string too_large = path + ": larger than the " + std::to_string(max_bytes) +
                                "-byte limit for a " + std::string(what);
  if (st.st_size > 0 && static_cast<uint64_t>(st.st_size) > max_bytes)
    return InvalidArgument(too_large);
  // A regular file needs no O_NONBLOCK; clear it so that reads behave plainly.
  ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);

  std::string text;
  // st_size is only a hint (files in /proc report 0, a file may grow while read): the loop
  // stops at max_bytes + 1 whatever the size said.
  text.reserve(static_cast<size_t>(st.st_size > 0 ? st.st_size : 0));
  char buffer[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status(StatusCode::kUnavailable,
                    "error reading " + named + ": " + std::strerror(errno));
    }
    if (text.size() + static_cast<size_t>(n) > max_bytes) return InvalidArgument(too_large);
    text.append(buffer, static_cast<size_t>(n));
  }
  return text;
}

}  // namespace airtime
