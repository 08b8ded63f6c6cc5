// The views the airtime policy's plug-ins share through the engine's CycleState: each is
// published by the plug-in that computes it, early in the cycle, and read by the others later
// in the same cycle. A reader that finds no view (its publisher is not in the policy) acts as
// if there were nothing to see: no headroom forecast, no trades, no reservation.
#pragma once

#include <cstdint>
#include <map>

#include "airtime/engine/plugins.h"

namespace airtime {

struct GangReservation;

// The headroom services are forecast to need (ForecastScale); read by BurstHold.
class HeadroomView {
 public:
  virtual ~HeadroomView() = default;
  // GPUs (milli) of each type that services are forecast to need beyond their live replicas
  // over [now, until].
  virtual std::map<GpuTypeId, int64_t> ForecastNeed(const Engine& engine, TimeMs until) const = 0;
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
