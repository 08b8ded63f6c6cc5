// PolicyRegistry: the policies airtime ships, by name.
//
// A policy is built per engine from a spec string "name" or "name:key=value:key=value"
// (for example "static:inference_share=0.4"). A value runs from the first '=' to the next
// ':' and may itself hold '=' ("kai:quota=research=16;product=32"). The registry is
// explicit: the built-in policies are added by RegisterBuiltinPolicies, nothing registers
// itself at start-up. It keeps the order of registration: names(), the list an unknown name's
// error gives, `airtime policies` and the default policy list of `airtime sim` (every
// registered policy compared by default, cli/sim_args.h) all follow it. A policy that cannot
// run without an input of its own (replay, which needs a schedule file) is registered as not
// compared: it is listed and made by name, but not in the default list.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/engine/plugins.h"
#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"

namespace airtime {

struct PolicyParams {
  std::map<std::string, std::string> values;
  // The workloads the policy will be given, when the caller knows them in advance (the
  // simulator does; the daemon does not: null). A policy that refers to workloads by name
  // (replay) checks its input against them.
  const std::vector<WorkloadSpec>* workloads = nullptr;

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
  // `compared`: whether `airtime sim` compares it by default (compared_names()).
  void Register(std::string name, std::string description, std::vector<std::string> params,
                PolicyFactory factory, bool compared = true);
  // Builds a policy from "name[:k=v...]"; unknown names and parameters are errors that list
  // what is known. `workloads`: PolicyParams::workloads.
  StatusOr<Policy> Make(std::string_view spec, const Cluster& cluster,
                        const std::vector<WorkloadSpec>* workloads = nullptr) const;
  // In registration order.
  std::vector<std::string> names() const;
  // Those registered as compared by default, in registration order.
  std::vector<std::string> compared_names() const;
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
    bool compared = true;
  };
  const Entry* Find(std::string_view name) const;
  std::vector<Entry> entries_;  // in registration order
};

void RegisterBuiltinPolicies(PolicyRegistry& registry);

}  // namespace airtime
