#include "airtime/policies/airtime_policy.h"
#include "airtime/policies/bestfit.h"
#include "airtime/policies/fgd.h"
#include "airtime/policies/fifo.h"
#include "airtime/policies/kai.h"
#include "airtime/policies/lyra.h"
#include "airtime/policies/registry.h"
#include "airtime/policies/slurm.h"
#include "airtime/policies/static_partition.h"
#include "airtime/policies/tiresias.h"

namespace airtime {

void RegisterBuiltinPolicies(PolicyRegistry& registry) {
  RegisterFifo(registry);
  RegisterStatic(registry);
  RegisterBestFit(registry);
  RegisterFgd(registry);
  RegisterKai(registry);
  RegisterLyra(registry);
  RegisterSlurm(registry);
  RegisterTiresias(registry);
  RegisterAirtime(registry);
}

}  // namespace airtime
