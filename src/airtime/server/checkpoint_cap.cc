// The checkpoint cap: see checkpoint_cap.h.
#include "airtime/server/checkpoint_cap.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "airtime/base/strings.h"

namespace airtime {

DirUsage MeasureDir(const std::string& dir, uint64_t max_entries) {
  DirUsage usage;
  // Where the walk cannot go on: a directory its owner made unreadable, or the directory
  // replaced by a link or a file, is the workload's doing (`unreadable`); any other error
  // (out of descriptors or memory, an I/O error, a stale NFS handle) is the daemon's
  // (`failed`), and says nothing of the workload.
  auto unreadable = [&](const std::string& path) {
    const int e = errno;
    const bool theirs = e == EACCES || e == EPERM || e == ELOOP || e == ENOTDIR;
    (theirs ? usage.unreadable : usage.failed) = path + ": " + std::strerror(e);
    return usage;
  };
  // By descriptors, each directory opened relative to its parent without following links:
  // a tenant that swaps a directory for a link while it is walked sends the walk nowhere.
  const int top = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (top < 0) return errno == ENOENT ? usage : unreadable(dir);
  struct Open {
    DIR* d;
    std::string path;
  };
  std::vector<Open> stack;
  DIR* d = fdopendir(top);
  if (d == nullptr) {
    unreadable(dir);
    close(top);
    return usage;
  }
  stack.push_back({d, dir});
  while (!stack.empty() && usage.unreadable.empty() && usage.failed.empty() && !usage.more &&
         !usage.deep) {
    Open& cur = stack.back();
    errno = 0;
    const dirent* e = readdir(cur.d);
    if (e == nullptr) {
      if (errno != 0) unreadable(cur.path);
      closedir(cur.d);
      stack.pop_back();
      continue;
    }
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    if (usage.entries >= max_entries) {
      usage.more = true;
      break;
    }
    ++usage.entries;
    const int parent = dirfd(cur.d);
    struct stat st {};
    if (fstatat(parent, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) continue;  // gone since it was listed (a temporary file renamed)
      unreadable(cur.path + "/" + e->d_name);
      break;
    }
    usage.bytes += static_cast<uint64_t>(st.st_blocks) * 512;
    if (!S_ISDIR(st.st_mode)) continue;
    if (stack.size() > kMaxCheckpointDepth) {  // each level holds a descriptor
      usage.deep = true;
      break;
    }
    const int fd = openat(parent, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP) continue;  // changed since
      unreadable(cur.path + "/" + e->d_name);
      break;
    }
    DIR* sub = fdopendir(fd);
    if (sub == nullptr) {
      unreadable(cur.path + "/" + e->d_name);
      close(fd);
      break;
    }
    std::string path = cur.path + "/" + e->d_name;  // `cur` moves as the stack grows
    stack.push_back({sub, std::move(path)});
  }
  for (Open& o : stack) closedir(o.d);
  return usage;
}

std::string CheckpointOverCap(const std::string& dir, const DirUsage& usage, uint64_t cap_bytes) {
  if (!usage.unreadable.empty())
    return "its checkpoint directory " + dir + " cannot be measured (" + usage.unreadable +
           "): a directory the daemon cannot read could hide any amount";
  if (usage.deep)
    return "its checkpoint directory " + dir + " nests directories more than " +
           std::to_string(kMaxCheckpointDepth) + " deep, the most it may";
  if (usage.more)
    return "its checkpoint directory " + dir + " holds more than " +
           std::to_string(kMaxCheckpointEntries) + " files, the most one may hold";
  if (cap_bytes == 0 || usage.bytes <= cap_bytes) return "";
  return "its checkpoint directory " + dir + " holds " +
         FormatMib(static_cast<double>(usage.bytes)) + ", over the cap of " +
         FormatMib(static_cast<double>(cap_bytes)) + " (--max-checkpoint-mib)";
}

namespace {
const std::string kCapEndPrefix = "failed: its checkpoint directory ";
}

std::string CheckpointCapEnd(const std::string& why) {
  return "failed: " + why + "; ended, and the directory is removed";
}

bool EndedOverCheckpointCap(const std::string& state, const std::string& message,
                            const std::string& dir) {
  // Its own directory: a service's other variants end with the message that names this one.
  return state == "failed" && message.rfind(kCapEndPrefix + dir + " ", 0) == 0;
}

}  // namespace airtime
