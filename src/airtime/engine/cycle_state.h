// CycleState: what plug-ins share within one decision cycle, instead of pointers to one
// another (as the Kubernetes scheduler framework's CycleState and KAI-Scheduler's session).
//
// A plug-in whose results others use (the headroom a forecast needs, a gang's reservation,
// the GPU types traded this cycle) publishes a view of them under the view's type, in the
// cycle's first steps (Scale, or a cycle plug-in's BeforeAllocate); plug-ins that use them
// look the view up by type later in the same cycle, and behave as if there were none when no
// plug-in of the policy published one. The engine clears the state at the start of every
// cycle, so nothing read is older than the cycle. Views are owned by their publishers, which
// outlive the cycle (a plug-in instance belongs to one engine).
#pragma once

#include <map>
#include <typeindex>

namespace airtime {

class CycleState {
 public:
  // Publishes `view` as this cycle's `View` (replacing an earlier one).
  template <class View>
  void Publish(const View* view) {
    views_[std::type_index(typeid(View))] = view;
  }
  // This cycle's `View`, or null when none was published.
  template <class View>
  const View* Find() const {
    auto it = views_.find(std::type_index(typeid(View)));
    return it == views_.end() ? nullptr : static_cast<const View*>(it->second);
  }
  void Clear() { views_.clear(); }

 private:
  std::map<std::type_index, const void*> views_;
};

}  // namespace airtime
