#include "airtime/server/parsed_submissions.h"

namespace airtime {

std::shared_ptr<const StatusOr<Scenario>> ParsedSubmissions::Get(
    int64_t id, const std::function<Parsed()>& parse) {
  if (auto it = at_.find(id); it != at_.end()) {
    order_.splice(order_.begin(), order_, it->second);
    return it->second->scenario;
  }
  Parsed p = parse();
  auto scenario = std::make_shared<const StatusOr<Scenario>>(std::move(p.scenario));
  if (!p.keep || p.bytes > max_bytes_) return scenario;  // for this call only
  while (bytes_ + p.bytes > max_bytes_ && !order_.empty()) {
    bytes_ -= order_.back().bytes;
    at_.erase(order_.back().id);
    order_.pop_back();
  }
  order_.push_front({id, p.bytes, scenario});
  at_[id] = order_.begin();
  bytes_ += p.bytes;
  return scenario;
}

}  // namespace airtime
