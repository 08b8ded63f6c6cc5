// TenantUsers: see tenant_users.h.
#include "airtime/server/tenant_users.h"

#include <unistd.h>

#include <fstream>
#include <sstream>

namespace airtime {

StatusOr<TenantUsers> TenantUsers::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    if (access(path.c_str(), F_OK) != 0) {
      TenantUsers empty;
      empty.origin_ = path;
      return empty;
    }
    return FailedPrecondition("cannot read " + path);
  }
  std::stringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

StatusOr<TenantUsers> TenantUsers::Parse(std::string_view text, std::string_view origin) {
  TenantUsers out;
  out.origin_ = std::string(origin);
  std::istringstream in{std::string(text)};
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string where = std::string(origin) + ":" + std::to_string(n) + ": ";
    std::istringstream words(line);
    std::string tenant, user, extra;
    if (!(words >> tenant) || tenant[0] == '#') continue;
    if (!(words >> user) || (words >> extra))
      return InvalidArgument(where + "expected 'TENANT USER[:GROUP]', found '" + line + "'");
    Entry e;
    const size_t colon = user.find(':');
    e.user = user.substr(0, colon);
    if (colon != std::string::npos) e.group = user.substr(colon + 1);
    if (e.user.empty() || (colon != std::string::npos && e.group.empty()))
      return InvalidArgument(where + "empty user or group in '" + user + "'");
    if (!out.entries_.emplace(tenant, e).second)
      return InvalidArgument(where + "tenant '" + tenant + "' has a line already");
  }
  return out;
}

StatusOr<RunUser> TenantUsers::Resolve(const std::string& tenant) const {
  auto it = entries_.find(tenant);
  StatusOr<RunUser> user = it != entries_.end() ? LookupRunUser(it->second.user, it->second.group)
                                                : LookupRunUser(kDefaultTenantUserPrefix + tenant);
  if (!user.ok()) {
    if (it != entries_.end())
      return FailedPrecondition("tenant '" + tenant + "': " + origin_ + " says user '" +
                                it->second.user + "': " + user.status().message());
    return FailedPrecondition("tenant '" + tenant + "' has no user to run as: add a line '" +
                              tenant + " USER' to " + origin_ + " or create the user " +
                              kDefaultTenantUserPrefix + tenant);
  }
  if (user->uid == geteuid())
    return FailedPrecondition("tenant '" + tenant + "': user '" + user->name +
                              "' is the daemon's own user: refused");
  return user;
}

}  // namespace airtime
