// The FGD placement experiment (USENIX ATC'23, "Beware of Fragmentation"), run through the
// engine: one pod at a time into a fresh Engine per policy and seed, nothing ever leaves.
//
// Protocol (../shared/traces/README.md, "FGD placement experiment"): the pods are sorted by
// name and shuffled with the seed; then pods drawn uniformly with replacement from the
// name-sorted list are cloned (new unique names) and appended until the total request
// (num_gpu x gpu_milli) reaches `tune` x the cluster's GPU capacity. Each pod arrives in that
// order into an Engine(EngineOptions{seed}); a pod that does not start at its arrival is
// cancelled (no retry). After every arrival (failed and CPU-only ones too) the driver records
// arrived = requested milli-GPUs so far and used = allocated milli-GPUs; x = arrived as % of
// capacity rounded to an integer, and the curve's value at x is the mean of used % over the
// arrivals that fall in bin x. Policies are registry specs ("bestfit", "fgd", ...); an FGD
// scorer gets the typical tasks of the original pod list (TypicalTasks, 95% coverage), and
// "random" (when the registry has none) is a uniformly random feasible node per pod.
//
// Pure functions over files plus the engine; the only clock read is for wall times.
// Thread-compatible: separate calls share nothing.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/policies/fgd/fgd.h"
#include "airtime/traces/openb.h"

namespace airtime {

inline constexpr int kFgdBins = 131;  // arrived demand 0..130 % of capacity

struct FgdOptions {
  std::string nodes_csv;  // openb_node_list_gpu_node.csv for the published figures
  std::string pods_csv;
  std::vector<std::string> policies;  // registry specs
  int seeds = 10;
  uint64_t first_seed = 42;
  double tune = 1.3;
  int threads = 1;  // runs (seed x policy) at once, each on its own thread; results do not
                    // depend on it
  // Called after each (seed, policy) run, from the thread that ran it: progress.
  std::function<void()> on_run_done = nullptr;
};

// One curve: per bin, the mean allocation ratio (% of GPU capacity) of the arrivals whose
// arrived demand rounds to that bin; NaN for a bin no arrival fell in.
struct FgdCurve {
  std::vector<double> used = std::vector<double>(kFgdBins, 0.0);
  std::vector<int> arrivals = std::vector<int>(kFgdBins, 0);

  double at(int bin) const { return used[static_cast<size_t>(bin)]; }
};

struct FgdSeedRun {
  uint64_t seed = 0;
  FgdCurve curve;
  int64_t pods_arrived = 0;  // originals plus clones
  int64_t pods_cloned = 0;
  int64_t pods_failed = 0;  // did not start at arrival (cancelled)
  int64_t gpu_pods_failed = 0;
  int64_t arrived_milli = 0;    // requested by every arrival
  int64_t failed_milli = 0;     // requested by the pods that failed
  int64_t allocated_milli = 0;  // at the end (= arrived_milli - failed_milli: nothing leaves)
  double wall_seconds = 0;
};

struct FgdPolicyReport {
  std::string policy;  // the spec as given
  FgdCurve mean;       // per bin, mean over the seeds that have the bin; arrivals summed
  std::vector<FgdSeedRun> seeds;
  int64_t pods_arrived = 0;  // summed over seeds
  int64_t pods_failed = 0;
  double wall_seconds = 0;
};

struct FgdReport {
  std::string nodes_csv, pods_csv;
  int64_t capacity_milli = 0;  // 1000 x installed GPUs
  size_t original_pods = 0;
  std::vector<FgdTask> typical_tasks;  // given to FGD scorers
  std::vector<FgdPolicyReport> policies;
  double wall_seconds = 0;

  const FgdPolicyReport* Find(const std::string& policy) const;
};

StatusOr<FgdReport> RunFgdProtocol(const FgdOptions& options);

// ---- The steps, for tests and other drivers.

// The arrival order for one seed: `pods` sorted by name, shuffled with Rng(seed), then clones
// of uniform draws from the sorted list appended until the requested milli-GPUs reach
// tune x capacity_milli. Clones are named "<name>#<k>" (k counts clones from 1).
std::vector<OpenbPod> FgdArrivals(std::vector<OpenbPod> pods, int64_t capacity_milli, double tune,
                                  uint64_t seed, int64_t* cloned = nullptr);

// The typical tasks of a pod list (TypicalTasks over the pods' shapes, 95% coverage).
std::vector<FgdTask> FgdTypicalTasks(const std::vector<OpenbPod>& pods);

// Runs one seed of one policy over `arrivals` (already in order). `typical` goes to an FGD
// scorer when the policy has one (null: it learns from arrivals).
StatusOr<FgdSeedRun> RunFgdSeed(const Cluster& cluster, const std::vector<OpenbPod>& arrivals,
                                const std::string& policy, uint64_t seed,
                                const std::vector<FgdTask>* typical);

}  // namespace airtime
