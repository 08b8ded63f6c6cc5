// ParsedSubmissions: the submissions of ended services, parsed back, kept across calls.
//
// A workload the daemon let go is read back from the store for each call that names it
// (daemon_retention.cc); a service's spec comes from parsing its accepted submission again.
// That parse is the cost of such a call: about 0.1 s for a 1 MiB body, so a page of 200
// ended services from large submissions took seconds, on the loop every other call waits
// for, at every listing. A submission never changes once accepted, so its parse is kept:
// the most recently used first, within a budget of submission text (the parse of a body
// holds a few times its size). One that does not fit alone is parsed for the call only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <unordered_map>

#include "airtime/base/status.h"
#include "airtime/config/workload_yaml.h"

namespace airtime {

class ParsedSubmissions {
 public:
  // What a parse gives: the body's size in bytes, and the scenario (or why it failed).
  // `keep` false: not kept (the body could not be read this time).
  struct Parsed {
    size_t bytes = 0;
    StatusOr<Scenario> scenario = Scenario{};
    bool keep = true;
  };
  explicit ParsedSubmissions(size_t max_bytes) : max_bytes_(max_bytes) {}

  // Submission `id`'s parse: kept, or made by `parse` now (and kept if it fits). Shared:
  // a caller's copy outlives the entry's eviction.
  std::shared_ptr<const StatusOr<Scenario>> Get(int64_t id, const std::function<Parsed()>& parse);

  size_t bytes() const { return bytes_; }
  size_t size() const { return order_.size(); }

 private:
  struct Entry {
    int64_t id = 0;
    size_t bytes = 0;
    std::shared_ptr<const StatusOr<Scenario>> scenario;
  };
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::list<Entry> order_;  // most recently used first
  std::unordered_map<int64_t, std::list<Entry>::iterator> at_;
};

}  // namespace airtime
