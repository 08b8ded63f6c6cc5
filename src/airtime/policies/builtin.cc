#include "airtime/policies/airtime/airtime_policy.h"
#include "airtime/policies/bestfit/bestfit.h"
#include "airtime/policies/fgd/fgd.h"
#include "airtime/policies/fifo/fifo.h"
#include "airtime/policies/kai/kai.h"
#include "airtime/policies/lyra/lyra.h"
#include "airtime/policies/registry.h"
#include "airtime/policies/replay/replay.h"
#include "airtime/policies/slurm/slurm.h"
#include "airtime/policies/static/static_partition.h"
#include "airtime/policies/tiresias/tiresias.h"

namespace airtime {

// The order here is the registry's: `airtime sim` compares every registered policy in it by
// default (the baselines first, airtime last), and `airtime policies` lists them in it.
// replay, which needs a schedule of its own, is listed last and not compared by default.
void RegisterBuiltinPolicies(PolicyRegistry& registry) {
  RegisterFifo(registry);
  RegisterStatic(registry);
  RegisterBestFit(registry);
  RegisterFgd(registry);
  RegisterSlurm(registry);
  RegisterTiresias(registry);
  RegisterKai(registry);
  RegisterLyra(registry);
  RegisterAirtime(registry);
  RegisterReplay(registry);
}

}  // namespace airtime
