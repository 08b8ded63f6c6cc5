// TenantUsers: which unprivileged user runs each tenant's workloads on an isolating daemon.
//
// The file DATA/tenant-users holds one "TENANT USER[:GROUP]" a line (USER and GROUP names
// or numeric ids; blank lines and lines starting with '#' are skipped). A tenant without a
// line runs as the user `airtime-TENANT` when that user exists; otherwise its workloads are
// refused (they never fall back to the daemon's user). Root and the daemon's own user are
// refused whatever the file says. Workloads submitted with an admin token run as the tenant
// they are submitted for ("default" when the submission names none). The file is read once
// at start, like the token file.
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "airtime/base/status.h"
#include "airtime/exec/run_user.h"

namespace airtime {

inline constexpr char kTenantUsersFileName[] = "tenant-users";
inline constexpr char kDefaultTenantUserPrefix[] = "airtime-";

class TenantUsers {
 public:
  TenantUsers() = default;
  // A missing file is an empty mapping; errors name the path and line ("tenant-users:3: ...").
  static StatusOr<TenantUsers> Load(const std::string& path);
  static StatusOr<TenantUsers> Parse(std::string_view text, std::string_view origin);

  // The user for `tenant` (see above). FailedPrecondition names the tenant and what to do.
  StatusOr<RunUser> Resolve(const std::string& tenant) const;

 private:
  struct Entry {
    std::string user, group;
  };
  std::map<std::string, Entry> entries_;
  std::string origin_ = kTenantUsersFileName;
};

}  // namespace airtime
