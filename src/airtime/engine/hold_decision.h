// HoldDecision: one hold-or-hand-off call on a service's headroom (the 3 a.m. call).
//
// A scaler that keeps replicas beyond what a service's current demand needs records each
// change of that choice through Engine::RecordHold, with the forecast it used and both
// expected values: holding the marginal replica warm, and handing its GPUs to the densest
// waiting work. The engine passes the records out with the cycle (CycleResult::holds); the
// ledger's HoldBook scores each one afterwards against the demand that came.
#pragma once

#include <cstdint>
#include <string>

#include "airtime/base/time.h"
#include "airtime/engine/ids.h"

namespace airtime {

struct HoldDecision {
  TimeMs at = 0;
  WorkloadId service = kNoWorkload;
  std::string name;  // the service's

  // The forecast used.
  double demand_rps = 0;    // the demand when decided
  double forecast_rps = 0;  // the forecast peak over the next cold start and lead
  double error_p90 =
      0;  // 0.9 quantile of the forecast's past errors (peak / forecast); 0: none yet

  // The choice: `held` replicas beyond the `needed` ones the current demand takes.
  int needed = 0;
  int held = 0;
  bool hold() const { return held > 0; }

  // Both expected values, of the marginal replica (the last one held, or for a hand-off the
  // first one not held), over one forecast slot: the requests it is expected to serve within
  // a cold start of a burst, and what its GPUs would earn for the densest waiting work
  // instead (less that work's loss giving them back). 0 where nothing prices them.
  double hold_value = 0;
  double handoff_value = 0;
  std::string why;  // the scaler's own words

  // What scoring needs to know of the service, as of the decision.
  double capacity_rps = 0;     // per replica
  double per_request = 0;      // value of a request served within the SLO
  DurationMs cold_start = 0;   // of a replica
  double replica_gpus = 0;     // GPUs one replica holds
  double waiting_density = 0;  // value per GPU-hour of the densest waiting work (0: none)
};

}  // namespace airtime
