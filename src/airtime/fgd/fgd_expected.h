// The published FGD experiment results (fgd_expected_allocation.csv in the shared traces:
// hkust-adsl/kubernetes-scheduler-simulator, analysis_allo_discrete.csv, filtered), one curve
// per (pod list, policy, seed): the allocation ratio at arrived demand 0..130 % of capacity.
// Pure function over a file; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "airtime/base/status.h"

namespace airtime {

struct FgdPublishedCurve {
  std::string workload;  // "openb_pod_list_default"
  std::string policy;    // "05-BestFit"
  double tune = 0;
  uint64_t seed = 0;
  int total_gpus = 0;
  std::vector<double> used;  // bins 0..130 (NaN where the file has no value)
};

StatusOr<std::vector<FgdPublishedCurve>> ReadFgdPublished(const std::string& path);

// Mean over the seeds of `workload` and `policy` at `bin`; NaN when none has a value.
double FgdPublishedMean(const std::vector<FgdPublishedCurve>& curves, const std::string& workload,
                        const std::string& policy, int bin);

}  // namespace airtime
