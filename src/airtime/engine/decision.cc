#include "airtime/engine/decision.h"

namespace airtime {

const char* DecisionTypeName(DecisionType t) {
  switch (t) {
    case DecisionType::kStart:
      return "start";
    case DecisionType::kPreempt:
      return "preempt";
    case DecisionType::kRelease:
      return "release";
    case DecisionType::kScale:
      return "scale";
    case DecisionType::kHold:
      return "hold";
    case DecisionType::kResize:
      return "resize";
    case DecisionType::kUnhold:
      return "unhold";
    case DecisionType::kRetime:
      return "retime";
  }
  return "?";
}

}  // namespace airtime
