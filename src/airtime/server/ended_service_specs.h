// EndedServiceSpecs: what calls read of the services the daemon let go, kept across calls.
//
// A workload the daemon let go is read back from the store for each call that names or
// lists it (daemon_retention.cc). Its row says all that such calls ask of a job; of a
// service they also read its request classes and, for a member of a service with model
// variants, its service and variant. Those came from parsing its accepted submission again,
// at every call: 0.1-0.7 s for a 1 MiB body, on the loop every other call waits for, so a
// listing of 20 ended services from large submissions took 14 s, and again each time.
// Nothing changes once a workload has ended, so its spec is kept here, trimmed of what no
// such call reads (demand curves, commands, environments): when the daemon lets it go, or,
// after a restart, from the one parse of its submission. The least recently used go first
// past the bound.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <utility>

#include "airtime/model/workload.h"

namespace airtime {

class EndedServiceSpecs {
 public:
  explicit EndedServiceSpecs(size_t max_specs) : max_specs_(max_specs) {}

  // The spec kept for workload `index` of submission `submission`, or null. Shared: a
  // caller's copy outlives the entry.
  std::shared_ptr<const WorkloadSpec> Find(int64_t submission, int32_t index);
  // Keeps `spec`, trimmed, for that workload.
  void Keep(int64_t submission, int32_t index, const WorkloadSpec& spec);

  // `spec` less what calls on an ended workload never read.
  static WorkloadSpec Trim(const WorkloadSpec& spec);

  size_t size() const { return order_.size(); }

 private:
  using Key = std::pair<int64_t, int32_t>;
  struct Entry {
    Key key;
    std::shared_ptr<const WorkloadSpec> spec;
  };
  size_t max_specs_;
  std::list<Entry> order_;  // most recently used first
  std::map<Key, std::list<Entry>::iterator> at_;
};

}  // namespace airtime
