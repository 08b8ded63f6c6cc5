#include "airtime/model/interference.h"

#include <algorithm>
#include <cctype>

namespace airtime {
namespace {

bool SameName(std::string_view x, std::string_view y) {
  return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), [](char c, char d) {
           return std::tolower(static_cast<unsigned char>(c)) ==
                  std::tolower(static_cast<unsigned char>(d));
         });
}

}  // namespace

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
    if (SameName(f, family)) return f;
  return "";
}

double InterferenceModel::Factor(std::string_view family, std::string_view other) const {
  for (const Pair& p : pairs_)
    if ((SameName(p.a, family) && SameName(p.b, other)) ||
        (SameName(p.b, family) && SameName(p.a, other)))
      return p.factor;
  return default_;
}

}  // namespace airtime
