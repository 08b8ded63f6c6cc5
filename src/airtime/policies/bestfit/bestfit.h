// bestfit: first come, first served without head-of-line blocking (a workload that does not
// fit is passed over) and best-fit placement: the node left with the least free GPU and CPU.
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {
void RegisterBestFit(PolicyRegistry& registry);
}  // namespace airtime
