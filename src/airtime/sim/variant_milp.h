// VariantMilp: the offline optimum of a day of services with model variants (issue 22), a
// mixed-integer program solved with COIN-OR CBC, as Proteus (ASPLOS'24) solves its variant
// choice with Gurobi. It measures how far VariantMix's online choice is from the best mix on
// small instances (up to 3 services x 3 variants x 3 GPU types x 24 hourly slots).
//
// The day is cut into slots of `slot_hours`; in each slot s:
//
//   replicas   x[i,v,t,s], integer: replicas of service i's variant v on GPU type t (types the
//              variant has a throughput for), up to the variant's max_replicas over its types;
//              each holds the variant's GPUs for the whole slot;
//   starts     a[i,v,t,s] >= x[i,v,t,s] - x[i,v,t,s-1] (x before the first slot is 0): a
//              replica that starts in a slot serves nothing for its cold start, so the slot's
//              serving capacity is x x rps - a x rps x cold_start / slot (the cold start's
//              cost is the requests it does not serve, and the GPUs it holds meanwhile);
//   routing    r[i,c,v,s] >= 0: requests/s of class c that variant v serves (only the classes
//              it serves), at most the class's mean demand over the slot in all, at most the
//              variant's capacity over its classes;
//   floor      the mean quality of the requests served, sum q_v r / sum r, at least the
//              service's quality_floor (sum (q_v - floor) r >= 0);
//   min        at least the service's min_replicas in all;
//   GPUs       per type, the replicas' GPUs plus the deferrable work's at most those installed;
//   work       w[j,t,s] in {0, 1}: deferrable job j runs its whole gang on type t for slot s
//              (from the slot its submission falls in; at most one type a slot), holding its
//              width in GPUs; it may pause and resume between slots (checkpoints, at no
//              cost); it completes in slot s (z[j,s] binary, or continuous without
//              `integer_jobs`; at most one s) when its work is done by the end of s: sum over
//              slots to s of w x slot / its run time on t >= sum over slots to s of z[j,.];
//              completing in s earns its completion value at the end of s, decayed after its
//              deadline as the ledger decays it. Without `whole_gangs`, w is continuous: a
//              gang may run at part width.
//
// It maximizes the value the simulator's ledger counts: each request served earns the
// service's value per request x the quality of the variant that served it, each completed job
// its completion value. Relaxations against the simulator (so the optimum is optimistic, not
// a schedule a policy can reach): demand is the slot's mean (a policy must also cover the
// peaks within the slot), nothing is lost to preemption, restarts, placement or
// fragmentation, a job's work may be spread over types and slots, and the optimum knows the
// whole day's demand in advance. What it does not relax: whole
// replicas, cold starts, the quality floor, the GPUs per type, whole gangs. Its slots also
// restrict it: replicas change and jobs start only at a slot's boundary, which a policy need
// not wait for; so it is the optimum of an hourly plan, not a bound on every schedule (the
// LP bound, lp_bound.h, is one).
//
// Pure function of its input (solve_seconds apart). Not thread-safe: CBC's standard driver
// (CbcMain1), which it runs for presolve, cuts and heuristics, keeps static state; solve one
// instance at a time.
#pragma once

#include <string>
#include <vector>

#include "airtime/base/time.h"
#include "airtime/sim/sim_input.h"

namespace airtime {

struct VariantMilpInstance {
  double slot_hours = 1;
  int slots = 0;
  std::vector<std::string> types;  // GPU type names, for output
  std::vector<double> gpus;        // per type: GPUs installed

  struct Variant {
    std::string name;
    double gpus = 1;          // per replica
    std::vector<double> rps;  // per type: requests/s one replica serves; 0: cannot run there
    double quality = 1;
    std::vector<bool> serves;  // per class of its service
    double cold_start_hours = 0;
    int max_replicas = 1 << 20;  // over its types
  };
  struct Service {
    std::string name;
    double value_per_request = 0;  // value per request at quality 1
    double quality_floor = 0;
    int min_replicas = 0;
    std::vector<std::string> classes;
    std::vector<Variant> variants;
    std::vector<std::vector<double>> demand;  // [slot][class]: mean requests/s
  };
  // Deferrable work: a batch or training job the GPUs the services leave can run.
  struct Job {
    std::string name;
    double value = 0;           // on completion
    double gpus = 1;            // gang width
    std::vector<double> hours;  // per type: run time at full width; <= 0: cannot run there
    int first_slot = 0;         // the slot its submission falls in
    // The completion value by the slot it completes in (decayed after a deadline, as the
    // ledger counts it at the slot's end); empty: `value` in every slot.
    std::vector<double> value_by_slot;
  };
  std::vector<Service> services;
  std::vector<Job> jobs;
};

struct VariantMilpOptions {
  double max_seconds = 60;     // CBC's time limit; past it, the best solution found and the bound
  double relative_gap = 1e-4;  // stop when the best solution is this close to the bound
  bool integer_jobs = true;    // z[j] binary (false: a job may complete fractionally)
  bool whole_gangs = true;     // w binary (false: a gang may run at part width)
};

struct VariantMilpResult {
  // "optimal" (within relative_gap), "time limit" (value: the best solution found, bound: the
  // best bound), "infeasible", "no solution".
  std::string status;
  double value = 0;           // the best solution's objective
  double bound = 0;           // no solution is worth more than this
  double realtime_value = 0;  // of `value`: requests served x quality x value per request
  double job_value = 0;       // of `value`: completed jobs
  double solve_seconds = 0;   // wall time to build and solve
  int rows = 0, columns = 0, integers = 0;
  // The best solution: replicas[i][v][t][s], and per job the share completed and the slot
  // it completed in (-1: none).
  std::vector<std::vector<std::vector<std::vector<int>>>> replicas;
  std::vector<double> job_done;
  std::vector<int> job_slot;

  bool ok() const { return status == "optimal" || status == "time limit"; }
};

VariantMilpResult SolveVariantMilp(const VariantMilpInstance& instance,
                                   const VariantMilpOptions& options = {});

// A step curve's mean over each slot of [0, horizon), as a step curve (one point a slot).
std::vector<DemandPoint> SlotMeans(const std::vector<DemandPoint>& curve, TimeMs horizon,
                                   DurationMs slot);

// The instance of a simulation input over [0, horizon) in slots of `slot`: its services with
// variants (the members ExpandVariants made, grouped back), each class's demand the mean of
// its curve over each slot; the cluster's GPUs per type; its other workloads that are not
// services as jobs (their run time per type from their speed; submitted after the horizon:
// left out). Services without variants are left out (and named in `skipped`).
VariantMilpInstance VariantMilpInstanceOf(const SimInput& input, TimeMs horizon, DurationMs slot,
                                          std::vector<std::string>* skipped = nullptr);

}  // namespace airtime
