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

// The published name of a policy spec's policy ("bestfit:x=1" -> "05-BestFit"; random,
// bestfit and fgd), or "" when the published figures have no such policy.
std::string FgdPublishedPolicy(const std::string& spec);

// Where the published figures of a pod list lie: fgd_expected_allocation.csv in the pod
// list's folder, as in the shared traces; and the pod list's name in them, its file name
// without ".csv" ("openb_pod_list_default").
std::string FgdPublishedPathFor(const std::string& pods_csv);
std::string FgdPublishedWorkload(const std::string& pods_csv);

}  // namespace airtime
