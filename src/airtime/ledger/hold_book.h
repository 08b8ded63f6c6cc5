// HoldBook: the 3 a.m. report. Scores each hold-or-hand-off call on a service's headroom
// (HoldDecision) against the demand that came while it stood.
//
// A call stands from its time until the service's next call (or the end of the books) and
// keeps its replicas (needed + held when made). Meanwhile, whenever the demand comes to need
// more replicas than a moment before (a rise: "did the burst come?"), the first cold start
// of the rise is what warm replicas save: a scaler that kept only what the demand needed
// would have had the earlier count ready until replicas started at the rise were. A rise
// usually brings the next call (the scaler adds replicas), so a call keeps being scored for
// one cold start after it is replaced: its kept replicas serve while the new ones load.
//   - A hold is credited the requests its kept replicas above the earlier count serve in
//     those windows (value protected), and charged what the replicas it keeps beyond each
//     moment's need would have earned for the waiting work (value forgone: those
//     replica-hours x a replica's GPUs x the waiting work's value per GPU-hour when decided).
//   - A hand-off is credited what one replica's GPUs earned for that work (value earned, the
//     same estimate) and charged the requests above its kept replicas, up to one replica's
//     capacity, in those windows (value lost).
// Regret is what the other choice would have gained: forgone - protected for a hold,
// lost - earned for a hand-off, when positive. Requests are valued at their value per
// request as the decision recorded it. Pure and deterministic; the simulator's Metrics and
// the daemon drive it alike.
//
// Bounded for a daemon that runs for months: with a cap (SetMaxClosed) only the newest closed
// calls are kept, the oldest dropped first; the summaries still cover every call, dropped
// ones included. Save and Carry take the book across a daemon's restart.
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "airtime/engine/hold_decision.h"

namespace airtime {

struct ScoredHold {
  HoldDecision decision;
  TimeMs until = kNever;  // when the next call replaced it, or the books closed; kNever: stands
  double hours = 0;       // how long it has stood, as the books saw it
  // Replica-hours kept beyond what the demand needed while it stood: the replicas the call
  // keeps (needed + held when made) less those the demand of each moment needs.
  double held_replica_hours = 0;
  bool came = false;              // demand rose above what the needed replicas serve meanwhile
  double protected_requests = 0;  // holds: served by the held replicas in a rise's first cold start
  double protected_value = 0;     // the same, valued
  double forgone_value = 0;       // holds: what the held GPUs would have earned for waiting work
  double earned_value = 0;        // hand-offs: what the GPUs earned for waiting work instead
  double lost_value = 0;          // hand-offs: requests a warm replica would have served
  double regret = 0;              // what the other choice would have gained (>= 0)
};

struct HoldSummary {
  int holds = 0, handoffs = 0;
  int holds_came = 0, handoffs_came = 0;  // calls during which a burst came
  double held_gpu_hours = 0;              // GPU-hours of replicas held beyond the need
  double protected_requests = 0;          // served within the SLO thanks to the holds
  double protected_value = 0, forgone_value = 0, earned_value = 0, lost_value = 0;
  double regret = 0;
  // Whether the holds earned more than they cost: protected >= forgone.
  bool holds_paid() const { return protected_value >= forgone_value; }
  // Adds another summary's counts and figures (several services', or a service's in parts).
  void Add(const HoldSummary& other);
  // Adds one call.
  void Add(const ScoredHold& call);
};

// What a book holds, in a form that outlives it: summaries of the calls left out, per
// service name, and the calls themselves (oldest first; standing ones scored so far, `until`
// kNever). The summaries of `base` plus those of `calls` are the book's.
struct HoldBookState {
  std::map<std::string, HoldSummary> base;
  std::vector<ScoredHold> calls;
};

class HoldBook {
 public:
  // Keeps at most `n` closed calls (standing ones are not counted), dropping the oldest
  // first; their figures stay in Summaries(). Default: no cap.
  void SetMaxClosed(size_t n);
  // Closes the service's standing call at `d.at` and opens this one.
  void Record(const HoldDecision& d);
  // The service's demand was `demand_rps` over [from, to).
  void Advance(WorkloadId service, TimeMs from, TimeMs to, double demand_rps);
  // The service ended at `end` (cancelled): its standing call closes then, and the calls it
  // replaced stop being scored. Nothing happens for a service without calls.
  void End(WorkloadId service, TimeMs end);
  // Closes every standing call at `end` (calls stay open to later Advance calls otherwise;
  // the daemon reads them open).
  void Finish(TimeMs end);

  // Every call, in the order recorded; standing calls scored so far.
  std::vector<ScoredHold> Calls() const;
  // Per service name, over every call so far (dropped and carried ones included).
  std::map<std::string, HoldSummary> Summaries() const;
  // Calls kept, closed and standing.
  size_t size() const;

  // The newest `max_calls` calls (standing ones scored so far), the others folded into the
  // summaries of `base`.
  HoldBookState Save(size_t max_calls = std::numeric_limits<size_t>::max()) const;
  // Takes on a saved book's calls, as closed calls older than any recorded here (call it
  // before the first Record): standing ones are closed at `closed_at` (when the book that
  // saved them stopped seeing demand), scored as they were. The cap applies.
  void Carry(HoldBookState state, TimeMs closed_at);

 private:
  struct Open {
    ScoredHold s;
    size_t order = 0;         // position among all calls
    TimeMs rise_at = kNever;  // when the demand last needed more replicas than a moment before
    int rise_base = 0;        // the replicas it needed before that rise
    int last_need = -1;       // the replicas the demand needed at the last interval
    double held_ms = 0;       // how long it has stood, for the forgone / earned figures
  };
  // Scores `o` over [from, to) at `demand_rps`; `standing`: it is still the service's call
  // (else a replaced one, within a cold start of its replacement).
  static void Accrue(Open& o, TimeMs from, TimeMs to, double demand_rps, bool standing);
  static void Rescore(ScoredHold& s, double held_ms);
  void Retire(Open& o);
  void Close(size_t order, ScoredHold s);  // keeps it, dropping the oldest beyond the cap
  // Every call kept, by order; standing ones rescored.
  std::vector<std::pair<size_t, ScoredHold>> All() const;

  std::map<WorkloadId, Open> open_;
  std::map<WorkloadId, std::vector<Open>> replaced_;  // scored until a cold start after `until`
  std::map<size_t, ScoredHold> closed_;               // by order
  std::map<std::string, HoldSummary> dropped_;        // and carried in as summaries only
  size_t max_closed_ = std::numeric_limits<size_t>::max();
  size_t next_order_ = 0;
};

}  // namespace airtime
