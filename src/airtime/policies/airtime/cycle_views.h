// The views the airtime policy's plug-ins share through the engine's CycleState: each is
// published by the plug-in that computes it, early in the cycle, and read by the others later
// in the same cycle. A reader that finds no view (its publisher is not in the policy) acts as
// if there were nothing to see: no headroom forecast, no trades, no reservation.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "airtime/engine/plugins.h"

namespace airtime {

struct GangReservation;

// The headroom services are forecast to need (ForecastScale); read by BurstHold and
// ServiceHomeScore.
class HeadroomView {
 public:
  virtual ~HeadroomView() = default;
  // GPUs (milli) of each type that services are forecast to need beyond their live replicas
  // over [now, until].
  virtual std::map<GpuTypeId, int64_t> ForecastNeed(const Engine& engine, TimeMs until) const = 0;
  // A service that only some nodes of its GPU type can host (a MIG profile needs MIG-enabled
  // nodes) and whose forecast need over [now, until] beyond its live replicas the free
  // capacity of those nodes would no longer cover with `placement` there.
  struct Shortfall {
    const Job* service = nullptr;  // nullptr: none
    int64_t need = 0;              // milli-GPUs it needs beyond its live replicas
    int64_t missing = 0;           // what would be missing (at most the placement's)
  };
  virtual Shortfall ShortOnItsNodes(const Engine& engine, const Placement& placement,
                                    TimeMs until) const = 0;
  // Whether node `n` is one of the few homes of a service: of its GPU type, only some nodes
  // can host that service's replicas (a MIG profile needs MIG-enabled nodes), and `n` is one.
  virtual bool ServiceHome(NodeIndex n, const Engine& engine) const = 0;
  // The service whose realtime SLO would break if `short_milli` GPUs of `type` that it is
  // forecast to need were missing until `until`: the requests its forecast demand would then
  // miss exceed the error budget it may spend by then. nullptr: none.
  virtual const Job* SloAtRisk(const Engine& engine, GpuTypeId type, int64_t short_milli,
                               TimeMs until) const = 0;
  // Whether `service` has missed more requests so far than its SLO target allows (its error
  // budget is spent): SLOs first, a replica its current demand needs then takes GPUs back
  // whatever the gain (ValuePreempt).
  virtual bool BelowSlo(const Job& service, const Engine& engine) const = 0;
  // A replica that a service's SLO buffer asks for, while the service is below its SLO target
  // (BelowSlo), and that the free GPUs could not take, one node's GPUs together: the node
  // that can host it with the most GPUs free now (ties: where the rest are expected free
  // soonest) is claimed for it, and other work keeps off what the replica needs there
  // (SloClaimFilter) instead of taking each GPU as it frees.
  struct SloClaim {
    WorkloadId service = kNoWorkload;
    NodeIndex node = 0;
    int gpus = 0;        // the replica's GPUs, to be kept free on `node`
    TimeMs at = kNever;  // when that many of its GPUs are expected free (kNever: never)
  };
  // This cycle's claims (at most one per service).
  virtual const std::vector<SloClaim>& SloClaims() const = 0;
};

// The speed a job ranks each GPU type by, after this cycle's trades (TypeTrade); read by
// SpeedScore.
class SpeedRankView {
 public:
  virtual ~SpeedRankView() = default;
  virtual double RankSpeed(const Job& job, GpuTypeId type, const Engine& engine) const = 0;
};

// This cycle's gang reservation (GangReserve); read by ReservationScore, ReservedNodeFilter
// and MoveUp.
class ReservationView {
 public:
  virtual ~ReservationView() = default;
  virtual const GangReservation& reservation() const = 0;
  // Whether `job` started now on `node` would still hold GPUs at the reservation's time.
  virtual bool RunsPast(const Job& job, NodeIndex node, const Engine& engine) const = 0;
  // Whether the replicas of `service` may use the reserved node.
  virtual bool LetIn(WorkloadId service) const = 0;
  // Whether replicas are kept off the reserved node in this cycle.
  virtual bool KeepsReplicasOff() const = 0;
};

}  // namespace airtime
