#include "airtime/cli/sim_args.h"

#include "airtime/base/strings.h"
#include "airtime/policies/registry.h"

namespace airtime {

std::string DefaultPolicies() { return Join(PolicyRegistry::Builtin().compared_names(), ","); }

}  // namespace airtime
