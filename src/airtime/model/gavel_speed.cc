#include "airtime/model/gavel_speed.h"

#include <algorithm>

#include "airtime/base/strings.h"

namespace airtime {
namespace {

struct FamilySpeed {
  const char* family;
  double p100, k80;  // relative to a V100
};

constexpr FamilySpeed kSpeeds[] = {
#include "airtime/model/gavel_speed.inc"
};

}  // namespace

std::optional<double> GavelSpeedVsV100(std::string_view family, std::string_view type) {
  for (const FamilySpeed& s : kSpeeds) {
    if (!EqualsIgnoreCase(s.family, family)) continue;
    if (type == "P100") return s.p100;
    if (type == "K80") return s.k80;
    return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace airtime
