// slurm: Slurm's multifactor priority plug-in with EASY backfill, as sites run it.
//
// Priority (higher first; ties by submission) is Slurm's weighted sum of normalised factors,
// each within [0, 1]:
//   age        time waiting since submission over max_age, capped at 1 (PriorityMaxAge);
//   job size   GPUs asked for over GPUs installed; larger jobs score higher, as Slurm does
//              by default (favor_small=1 inverts it, PriorityFavorSmall);
//   fair-share the classic formula F = 2^(-U/S) of the workload's tenant, where U is the
//              tenant's share of all tenants' recent GPU usage (GPU-time held, decayed with
//              half-life half_life, PriorityDecayHalfLife) and S its share of all tenants'
//              shares (equal unless `shares` says otherwise); no usage yet: F = 1;
//   QoS        the workload's priority field over qos_max, clamped to [0, 1].
// Priorities change with time (age, usage), so the queue is re-sorted every cycle.
//
// EASY backfill: the highest-priority waiting workload that does not fit gets a reservation
// at the earliest time enough GPUs of its shape free up, from the running allocations'
// expected ends (the engine knows run times exactly; Slurm uses time limits). A
// lower-priority workload may then start only when it cannot delay that reservation: it
// finishes by then on the GPUs it would get, or the reserved workload still fits at the
// reservation time with it running. Placement is best fit, steering workloads that would
// run past the reservation away from the nodes it could use. If no release of running work
// ever makes room (down nodes, services that never end), the next blocked workload gets
// the reservation instead. backfill=0 turns backfill off: Slurm's main scheduler, which
// stops at the first workload that cannot start. No preemption.
//
// As a Slurm site runs it (all off by default, which is EASY backfill at every event with
// exact run times):
//   bf_interval  backfill passes only in cycles at multiples of it (Slurm's bf_interval;
//                the policy asks the engine for a cycle then while a job waits); the cycles
//                between are the main scheduler's, which stops at the first workload that
//                cannot start;
//   limit_pad, limit_round  backfill plans with time limits, not run times: a run's limit
//                is its run time plus limit_pad, rounded up to a multiple of limit_round
//                (Slurm keeps limits in whole minutes), for running work and candidates;
//   sched_tick   nothing starts but at multiples of it (the lab's slurmctld starts work on a
//                1-s grid, whatever the events); the policy asks for a cycle at the next tick
//                when a start found room and waited for it;
//   phase        where the grids lie: passes at phase + k * bf_interval, ticks at
//                phase + k * sched_tick (Slurm's timers run from slurmctld's start);
//   services_first  services sort ahead of every job and are blocked apart from them (a
//                partition of higher PriorityTier for the replicas);
//   placement    bestfit, or firstfit: the lowest-indexed node with room (Slurm's node
//                selection at equal node weights).
//
// Parameters (defaults): w_age (1000), w_fairshare (10000), w_size (1000), w_qos (10000),
// max_age (7d), half_life (7d; 0: no decay), favor_small (0), qos_max (100),
// shares ("tenant@weight,..."; unlisted tenants weigh 1), backfill (1), bf_interval (0),
// sched_tick (0), phase (0), limit_pad (0), limit_round (0), services_first (0),
// placement (bestfit).
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {

// Slurm's classic fair-share factor: 2^(-usage/shares), both normalised to [0, 1] over all
// tenants. 1 when the tenant has no usage; 0 when it has usage and no shares.
double SlurmFairShare(double usage_norm, double shares_norm);

void RegisterSlurm(PolicyRegistry& registry);

}  // namespace airtime
