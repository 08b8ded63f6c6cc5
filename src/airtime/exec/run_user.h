// RunUser: the unprivileged user a workload runs as, and how the shim becomes it.
//
// The daemon (root) resolves a user name (and optional group) to ids with the system's user
// database; the shim receives them on its command line ("--user UID:GID:G1,G2,...") and,
// in the forked workload process after the log files are open and before exec, drops to
// them: setgroups(supplementary groups), setgid, setuid, then checks that the real, effective
// and saved ids are all the user's and that setuid(0) fails, and sets no_new_privs so that
// no setuid program can give root back. Root (uid 0) is never a RunUser.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

struct RunUser {
  std::string name;  // for HOME/USER/LOGNAME and messages
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (getgrouplist), the primary one included
  std::string home;
};

// Looks `user` up (a name or a numeric uid) and, when `group` is not empty, uses that group
// (name or gid) as the primary group. NotFound names the missing user or group;
// PermissionDenied for uid 0.
StatusOr<RunUser> LookupRunUser(const std::string& user, const std::string& group = "");

// "UID:GID:G1,G2" for the shim's --user; ParseRunUserArg reads it back (name and home are
// not carried: the daemon sets HOME/USER/LOGNAME in the environment).
std::string FormatRunUserArg(const RunUser& user);
StatusOr<RunUser> ParseRunUserArg(const std::string& text);

// In the process that is about to exec the workload: becomes `user` for good. On failure the
// returned text says which step failed (errno included); "" on success. Async-signal-safe
// enough for a fork of the single-threaded shim.
std::string DropPrivileges(const RunUser& user);

// Whether `user` may search (x) `dir` and every directory above it, from the mode bits
// (ACLs are not looked at). OkStatus, or PermissionDenied naming the first directory that
// stops it; NotFound when a component does not exist.
Status CheckSearchableBy(const std::string& dir, const RunUser& user);

}  // namespace airtime
