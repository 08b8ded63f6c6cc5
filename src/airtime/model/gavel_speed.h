// Per-model-family speeds on older GPU types, as Gavel measured them (the Gavel data in
// ../shared/traces/gavel; scripts/gen-interference-table.py derives the table).
//
// Gavel ran its models alone on K80s, P100s and V100s. The catalogue gives one relative
// speed per type, the same for every workload; a model family's own ratio can differ a lot
// (a ResNet-50 on a P100 does 0.66 of its V100 speed, an LM 0.84, Gavel's recommendation
// model, host-bound, more than on the V100). The workload loader applies these ratios to
// a workload that names its `family`, for the types it does not give a `speed` for itself.
#pragma once

#include <optional>
#include <string_view>

namespace airtime {

// `family`'s speed on `type` ("P100" or "K80") relative to its speed on a V100; nullopt for
// another type or a family Gavel did not measure. Case-insensitive family.
std::optional<double> GavelSpeedVsV100(std::string_view family, std::string_view type);

}  // namespace airtime
