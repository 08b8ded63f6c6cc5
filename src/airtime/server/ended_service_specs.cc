#include "airtime/server/ended_service_specs.h"

namespace airtime {

std::shared_ptr<const WorkloadSpec> EndedServiceSpecs::Find(int64_t submission, int32_t index) {
  auto it = at_.find({submission, index});
  if (it == at_.end()) return nullptr;
  order_.splice(order_.begin(), order_, it->second);
  return it->second->spec;
}

void EndedServiceSpecs::Keep(int64_t submission, int32_t index, const WorkloadSpec& spec) {
  const Key key{submission, index};
  if (auto it = at_.find(key); it != at_.end()) {
    order_.erase(it->second);
    at_.erase(it);
  }
  order_.push_front({key, std::make_shared<const WorkloadSpec>(Trim(spec))});
  at_[key] = order_.begin();
  while (order_.size() > max_specs_) {
    at_.erase(order_.back().key);
    order_.pop_back();
  }
}

WorkloadSpec EndedServiceSpecs::Trim(const WorkloadSpec& spec) {
  WorkloadSpec t = spec;
  t.exec = ExecSpec{};
  t.field_lines.clear();  // for messages at submission only
  t.field_lines.shrink_to_fit();
  t.realtime.demand.clear();
  t.realtime.demand.shrink_to_fit();
  t.realtime.history.clear();
  t.realtime.history.shrink_to_fit();
  for (RequestClass& c : t.realtime.classes) {
    c.demand.clear();
    c.demand.shrink_to_fit();
    c.history.clear();
    c.history.shrink_to_fit();
  }
  for (ModelVariant& v : t.realtime.variants) {
    v.command.clear();
    v.env.clear();
  }
  return t;
}

}  // namespace airtime
