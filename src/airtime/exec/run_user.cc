// RunUser: see run_user.h.
#include "airtime/exec/run_user.h"

#include <grp.h>
#include <pwd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

bool ParseId(const std::string& text, unsigned long* out) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  *out = std::strtoul(text.c_str(), nullptr, 10);
  return *out <= 0xfffffffeUL;
}

}  // namespace

StatusOr<RunUser> LookupRunUser(const std::string& user, const std::string& group) {
  std::vector<char> buf(16384);
  passwd pw{};
  passwd* found = nullptr;
  unsigned long id = 0;
  int rc = ParseId(user, &id)
               ? getpwuid_r(static_cast<uid_t>(id), &pw, buf.data(), buf.size(), &found)
               : getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    return NotFound("user '" + user + "' does not exist" +
                    (rc != 0 ? std::string(" (") + std::strerror(rc) + ")" : ""));
  }
  RunUser out;
  out.name = pw.pw_name;
  out.uid = pw.pw_uid;
  out.gid = pw.pw_gid;
  out.home = pw.pw_dir != nullptr ? pw.pw_dir : "/";
  if (out.uid == 0) return Status(StatusCode::kPermissionDenied, "user '" + user + "' is root");
  if (!group.empty()) {
    std::vector<char> gbuf(16384);
    struct group gr {};
    struct group* gfound = nullptr;
    if (ParseId(group, &id)) {
      getgrgid_r(static_cast<gid_t>(id), &gr, gbuf.data(), gbuf.size(), &gfound);
    } else {
      getgrnam_r(group.c_str(), &gr, gbuf.data(), gbuf.size(), &gfound);
    }
    if (gfound == nullptr) return NotFound("group '" + group + "' does not exist");
    out.gid = gr.gr_gid;
  }
  int count = 64;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  if (getgrouplist(out.name.c_str(), out.gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count));
    if (getgrouplist(out.name.c_str(), out.gid, groups.data(), &count) < 0) count = 0;
  }
  groups.resize(static_cast<size_t>(std::max(count, 0)));
  if (std::find(groups.begin(), groups.end(), out.gid) == groups.end()) groups.push_back(out.gid);
  // Root's group would give what the uid change takes away.
  std::erase(groups, gid_t{0});
  out.groups = std::move(groups);
  return out;
}

std::string FormatRunUserArg(const RunUser& user) {
  std::vector<std::string> groups;
  for (gid_t g : user.groups) groups.push_back(std::to_string(g));
  return std::to_string(user.uid) + ":" + std::to_string(user.gid) + ":" + Join(groups, ",");
}

StatusOr<RunUser> ParseRunUserArg(const std::string& text) {
  auto bad = [&] {
    return InvalidArgument("--user: expected UID:GID:G1,G2,..., found '" + text + "'");
  };
  const size_t a = text.find(':');
  const size_t b = a == std::string::npos ? a : text.find(':', a + 1);
  if (b == std::string::npos) return bad();
  unsigned long uid = 0, gid = 0;
  if (!ParseId(text.substr(0, a), &uid) || !ParseId(text.substr(a + 1, b - a - 1), &gid))
    return bad();
  RunUser out;
  out.uid = static_cast<uid_t>(uid);
  out.gid = static_cast<gid_t>(gid);
  std::string rest = text.substr(b + 1);
  size_t start = 0;
  while (start < rest.size()) {
    size_t comma = rest.find(',', start);
    if (comma == std::string::npos) comma = rest.size();
    unsigned long g = 0;
    if (!ParseId(rest.substr(start, comma - start), &g)) return bad();
    out.groups.push_back(static_cast<gid_t>(g));
    start = comma + 1;
  }
  if (out.uid == 0 || out.gid == 0) return InvalidArgument("--user: refusing to run as root");
  std::erase(out.groups, gid_t{0});
  return out;
}

std::string DropPrivileges(const RunUser& user) {
  if (user.uid == 0 || user.gid == 0) return "refusing to run as root";
  if (setgroups(user.groups.size(), user.groups.data()) != 0)
    return std::string("setgroups: ") + std::strerror(errno);
  if (setresgid(user.gid, user.gid, user.gid) != 0)
    return std::string("setresgid: ") + std::strerror(errno);
  if (setresuid(user.uid, user.uid, user.uid) != 0)
    return std::string("setresuid: ") + std::strerror(errno);
  uid_t r = 0, e = 0, s = 0;
  gid_t rg = 0, eg = 0, sg = 0;
  if (getresuid(&r, &e, &s) != 0 || r != user.uid || e != user.uid || s != user.uid)
    return "uid did not change";
  if (getresgid(&rg, &eg, &sg) != 0 || rg != user.gid || eg != user.gid || sg != user.gid)
    return "gid did not change";
  if (setuid(0) == 0 || seteuid(0) == 0) return "could regain root after dropping it";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
  return "";
}

Status CheckSearchableBy(const std::string& dir, const RunUser& user) {
  std::error_code ec;
  std::filesystem::path path = std::filesystem::absolute(dir, ec).lexically_normal();
  if (ec) return InvalidArgument("'" + dir + "': " + ec.message());
  for (std::filesystem::path p = path;; p = p.parent_path()) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) {
      return errno == ENOENT ? NotFound("'" + p.string() + "' does not exist")
                             : Internal("stat '" + p.string() + "': " + std::strerror(errno));
    }
    bool ok;
    if (st.st_uid == user.uid) {
      ok = st.st_mode & S_IXUSR;
    } else if (st.st_gid == user.gid ||
               std::find(user.groups.begin(), user.groups.end(), st.st_gid) != user.groups.end()) {
      ok = st.st_mode & S_IXGRP;
    } else {
      ok = st.st_mode & S_IXOTH;
    }
    if (!ok) {
      return Status(StatusCode::kPermissionDenied,
                    "user '" + (user.name.empty() ? std::to_string(user.uid) : user.name) +
                        "' cannot enter '" + p.string() + "'");
    }
    if (p == p.root_path() || p.parent_path() == p) break;
  }
  return OkStatus();
}

}  // namespace airtime
