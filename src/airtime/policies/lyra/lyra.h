// lyra: capacity loaning between inference and training (Lyra, EuroSys'23; "Aryl" on
// arXiv), on airtime's engine.
//
// Pools: as in `static` (AssignPools: node `pool` labels, else the first inference_share of
// each GPU type's nodes serve inference). The inference pool is Lyra's inference cluster:
// realtime services run there and only there. Every other kind belongs to the training
// pool -- Lyra's training cluster takes all offline work, batch inference included -- and,
// when it is preemptible, may also run on inference servers on loan.
//
// Loaning: at each cycle every inference server that holds no service replica (for
// loan_after, default 0) is put on loan to the training side, except `reserve` idle
// servers per GPU type kept back, and except servers a waiting service replica could use. Loans are
// whole servers, as in the paper. Replicas are placed best-fit on servers not on loan, so they pack
// and whole servers fall idle; offline work prefers its own pool, then loaned servers (best fit).
//
// Reclaiming: when a service needs a replica and no server off loan has room, Lyra takes
// loaned servers back one at a time, cheapest first by server preemption cost -- for each
// guest, the work it would lose since its last checkpoint (the engine's progress model)
// plus its restart cost, times its GPUs -- until the replica fits. Every guest on a
// reclaimed server is preempted (one spanning several servers loses all of them) and goes
// back to the queue. The replica starts at once, paying its cold start as it would anyway:
// loaning costs a service no latency. Services are never preempted.
//
// Order: services first, then by arrival; work that does not fit is passed over.
//
// Not modelled: elastic scaling. Lyra grows and shrinks elastic training jobs on loaned
// servers (a multiple-choice knapsack over JCT reductions) and shrinks them before it
// preempts; airtime's workloads have one fixed shape and the engine has no resize decision,
// so every guest is treated as an inelastic job and is preempted, not shrunk.
//
// Parameters: inference_share (default 0.5, as `static`); reserve (idle inference servers
// per GPU type kept off loan, default 0); loan_after (how long a server must have held no
// replica before it is loaned, default 0: at once; a few minutes damps loan-and-reclaim
// churn when demand hovers around a server's worth -- not in the paper's description).
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {
void RegisterLyra(PolicyRegistry& registry);
}  // namespace airtime
