#include "airtime/model/interference.h"

#include <algorithm>

#include "airtime/base/strings.h"

namespace airtime {
InterferenceModel::InterferenceModel(std::vector<Pair> pairs, double default_factor)
    : pairs_(std::move(pairs)), default_(default_factor) {
  for (const Pair& p : pairs_)
    for (const std::string* f : {&p.a, &p.b})
      if (std::find(families_.begin(), families_.end(), *f) == families_.end())
        families_.push_back(*f);
  std::sort(families_.begin(), families_.end());
}

const InterferenceModel& InterferenceModel::Gavel() {
  static const InterferenceModel* const model = new InterferenceModel(
      {
#include "airtime/model/interference_gavel.inc"
      },
      AIRTIME_INTERFERENCE_DEFAULT);
  return *model;
}

std::string InterferenceModel::Canonical(std::string_view family) const {
  for (const std::string& f : families_)
    if (EqualsIgnoreCase(f, family)) return f;
  return "";
}

double InterferenceModel::Factor(std::string_view family, std::string_view other) const {
  const Pair* reversed = nullptr;
  for (const Pair& p : pairs_) {
    if (EqualsIgnoreCase(p.a, family) && EqualsIgnoreCase(p.b, other)) return p.factor;
    if (!reversed && EqualsIgnoreCase(p.b, family) && EqualsIgnoreCase(p.a, other)) reversed = &p;
  }
  return reversed ? reversed->factor : default_;
}

}  // namespace airtime
