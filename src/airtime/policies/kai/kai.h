// kai: NVIDIA KAI-Scheduler (the open-source core of Run:ai) as its documentation describes
// it, on airtime's engine.
//
// Queues: one per tenant, optionally under departments (a two-level tree). Each has a
// deserved quota, an over-quota weight and a limit; fair shares are recomputed every cycle
// from them and from what each queue requests (see plugins/kai_queues.h). The cycle runs KAI's
// actions from least to most disruptive:
//   allocate     waiting work in queue order -- queues below their deserved quota first (by
//                how much of it they would use), then by weighted over-quota share (a DRF
//                order over the GPU pools, GPUs being the one resource counted); within a
//                queue by priority, then age -- placed bin-packing (best fit). Only
//                preemptible work may run over quota: the non-preemptible work of a queue
//                (realtime services included) stays within its deserved quota, counting
//                only non-preemptible work against it, as KAI does. Every queue stays
//                within its limit.
//   consolidate  a workload that fails only for fragmentation (enough free GPUs in its
//                pool, none on one node) may move preemptible single-node work elsewhere,
//                when every moved workload fits in the GPUs left free; each workload is
//                moved at most once. The moved work is stopped (it keeps its checkpoint)
//                and placed again at the next cycle, where KAI re-binds it at once.
//   reclaim      a queue below its fair share (preemptible work) or below its deserved
//                quota (any work) takes GPUs back from queues above theirs, stopping
//                their preemptible work only, most saturated queue first, lowest
//                priority and least lost work first, never taking a victim queue below
//                its fair share (or deserved quota). Departments are compared where the
//                two queues' paths diverge.
//   preempt      within one queue, work of strictly higher priority stops preemptible
//                work of lower priority (least lost work first), as much as it needs for
//                room and to keep the queue within its limit.
// A workload is a victim of reclaim (preempt) only after reclaim_min_runtime
// (preempt_min_runtime) of its current run, as KAI's min-runtime options; default 0.
// Services are never stopped. Not modelled: queue priorities (every queue is in one
// priority bucket), CPU and memory quotas, elastic (min-member) gangs.
//
// Parameters ("kai:key=value:..."; list entries separated by ';' or ',' -- use ';' on the
// command line, whose --policy list is comma-separated):
//   quota=NAME=AMOUNT;...            deserved quota of a queue (tenant) or department.
//                                    AMOUNT: GPUS, or TYPE*GPUS terms joined by '+'
//                                    (product=H100*16+L40S*8; research=24+H100*4). Any typed
//                                    term makes every GPU type its own pool.
//                                    Default: equal parts of what is left, among the
//                                    queues seen so far (no quotas: installed GPUs / tenants).
//   over_quota_weight=NAME=W;...     weight in the over-quota split (default 1; 0: none)
//   limit=NAME=AMOUNT;...            most a queue or department may hold (default none)
//   departments=DEPT=t1+t2;...       tenants t1, t2 as queues under department DEPT
//   consolidate=true|false           the consolidate action (default true)
//   preempt_min_runtime=DURATION     e.g. 30m (default 0)
//   reclaim_min_runtime=DURATION     e.g. 30m (default 0)
// Example: kai:quota=product=40;research=24:over_quota_weight=research=2
// A quota section in the cluster YAML would be a better long-term home for these numbers.
#pragma once

#include "airtime/policies/registry.h"

namespace airtime {
void RegisterKai(PolicyRegistry& registry);
}  // namespace airtime
