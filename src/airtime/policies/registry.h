// PolicyRegistry: the policies airtime ships, by name.
//
// A policy is built per engine from a spec string "name" or "name:key=value:key=value"
// (for example "static:inference_share=0.4"). A value runs from the first '=' to the next
// ':' and may itself hold '=' ("kai:quota=research=16;product=32"). The registry is
// explicit: the built-in policies are added by RegisterBuiltinPolicies, nothing registers
// itself at start-up. It keeps the order of registration: names(), the list an unknown name's
// error gives, `airtime policies` and the default policy list of `airtime sim` (every
// registered policy, cli/sim_args.h) all follow it.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/engine/plugins.h"
#include "airtime/model/cluster.h"

namespace airtime {

struct PolicyParams {
  std::map<std::string, std::string> values;

  // Typed reads; a malformed value is an InvalidArgument naming the key.
  StatusOr<double> GetDouble(const std::string& key, double fallback) const;
  std::string GetString(const std::string& key, const std::string& fallback) const;
};

using PolicyFactory = std::function<StatusOr<Policy>(const Cluster&, const PolicyParams&)>;

class PolicyRegistry {
 public:
  // The registry with every built-in policy.
  static const PolicyRegistry& Builtin();

  // A name registered again keeps its place and takes the new description, keys and factory.
  void Register(std::string name, std::string description, std::vector<std::string> params,
                PolicyFactory factory);
  // Builds a policy from "name[:k=v...]"; unknown names and parameters are errors that list
  // what is known.
  StatusOr<Policy> Make(std::string_view spec, const Cluster& cluster) const;
  // In registration order.
  std::vector<std::string> names() const;
  // The one-line description and the parameter keys of a registered policy; empty for an
  // unknown name.
  const std::string& description(const std::string& name) const;
  const std::vector<std::string>& params(const std::string& name) const;

 private:
  struct Entry {
    std::string name;
    std::string description;
    std::vector<std::string> params;
    PolicyFactory factory;
  };
  const Entry* Find(std::string_view name) const;
  std::vector<Entry> entries_;  // in registration order
};

void RegisterBuiltinPolicies(PolicyRegistry& registry);

}  // namespace airtime
