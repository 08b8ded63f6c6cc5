#include "airtime/slurm/records.h"

namespace airtime::slurm {

bool SlurmNode::Usable() const {
  if (state == "down" || state == "error" || state == "future" || state == "unknown") return false;
  for (const std::string& f : state_flags) {
    if (f == "DRAIN" || f == "DRAINING" || f == "DRAINED" || f == "FAIL" || f == "NOT_RESPONDING" ||
        f == "MAINTENANCE" || f == "POWERED_DOWN" || f == "POWERING_DOWN")
      return false;
  }
  return true;
}

}  // namespace airtime::slurm
