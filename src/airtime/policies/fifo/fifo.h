// fifo: strict first come, first served with first-fit placement. The first workload that
// does not fit blocks every workload behind it (head-of-line blocking), as many clusters run
// today. No preemption.
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {
void RegisterFifo(PolicyRegistry& registry);
}  // namespace airtime
