#include "airtime/policies/registry.h"

#include <algorithm>

#include "airtime/base/strings.h"

namespace airtime {

StatusOr<double> PolicyParams::GetDouble(const std::string& key, double fallback) const {
  auto it = values.find(key);
  if (it == values.end()) return fallback;
  auto v = ParseDouble(it->second);
  if (!v)
    return InvalidArgument("policy parameter '" + key + "': expected a number, got '" + it->second +
                           "'");
  return *v;
}

std::string PolicyParams::GetString(const std::string& key, const std::string& fallback) const {
  auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

const PolicyRegistry& PolicyRegistry::Builtin() {
  static const PolicyRegistry* r = [] {
    auto* reg = new PolicyRegistry();
    RegisterBuiltinPolicies(*reg);
    return reg;
  }();
  return *r;
}

void PolicyRegistry::Register(std::string name, std::string description,
                              std::vector<std::string> params, PolicyFactory factory,
                              bool compared) {
  Entry e{std::move(name), std::move(description), std::move(params), std::move(factory), compared};
  for (Entry& old : entries_) {
    if (old.name == e.name) {
      old = std::move(e);
      return;
    }
  }
  entries_.push_back(std::move(e));
}

const PolicyRegistry::Entry* PolicyRegistry::Find(std::string_view name) const {
  for (const Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

StatusOr<Policy> PolicyRegistry::Make(std::string_view spec, const Cluster& cluster,
                                      const std::vector<WorkloadSpec>* workloads) const {
  auto parts = Split(spec, ':');
  std::string name = ToLower(Trim(parts[0]));
  const Entry* entry = Find(name);
  if (entry == nullptr)
    return InvalidArgument("unknown policy '" + name + "' (known: " + Join(names(), ", ") + ")");
  PolicyParams params;
  params.workloads = workloads;
  for (size_t i = 1; i < parts.size(); ++i) {
    // Split at the first '=': a value may hold '=' itself ("quota=research=16;product=32").
    const size_t eq = parts[i].find('=');
    std::string key(Trim(parts[i].substr(0, eq)));
    if (eq == std::string_view::npos || key.empty())
      return InvalidArgument("policy '" + name + "': parameter '" + std::string(parts[i]) +
                             "' is not key=value");
    const auto& known = entry->params;
    if (std::find(known.begin(), known.end(), key) == known.end())
      return InvalidArgument("policy '" + name + "': unknown parameter '" + key + "' (known: " +
                             (known.empty() ? std::string("none") : Join(known, ", ")) + ")");
    if (params.values.count(key))
      return InvalidArgument("policy '" + name + "': parameter '" + key + "' given twice");
    params.values[key] = std::string(Trim(parts[i].substr(eq + 1)));
  }
  auto policy = entry->factory(cluster, params);
  if (policy.ok() && policy->name.empty()) policy->name = name;
  return policy;
}

std::vector<std::string> PolicyRegistry::names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_) out.push_back(e.name);
  return out;
}

std::vector<std::string> PolicyRegistry::compared_names() const {
  std::vector<std::string> out;
  for (const Entry& e : entries_)
    if (e.compared) out.push_back(e.name);
  return out;
}

const std::string& PolicyRegistry::description(const std::string& name) const {
  static const std::string kNone;
  const Entry* e = Find(name);
  return e == nullptr ? kNone : e->description;
}

const std::vector<std::string>& PolicyRegistry::params(const std::string& name) const {
  static const std::vector<std::string> kNone;
  const Entry* e = Find(name);
  return e == nullptr ? kNone : e->params;
}

}  // namespace airtime
