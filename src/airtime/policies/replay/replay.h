// replay: starts each workload at its observed time on its observed node (and GPUs, when
// given), and nothing else. It decides nothing: it lets the engine, the ledger and the
// metrics count an observed schedule (a Slurm run's, read from its jobs' own marks) exactly
// as they count any policy's, so that two schedules' returns compare with no second
// implementation of the value (ledger/metrics.cc).
//
// Parameter: schedule=FILE (required; the path may not hold ':'), a CSV file, one row per
// run:
//
//   job,start_s,end_s,node[,gpus]
//   train-3,12.5,20.1,n4,0;1;2;3
//   svc,0,none,n9,5
//
// `job` names a workload; `start_s` and `end_s` are seconds from the replay's start (the
// time 0 of the workloads' submit_at); `end_s` is `none` for a run that had not ended;
// `node` is a node of the cluster; `gpus` (optional) the run's GPU indices on that node,
// separated by ';' (as many as the workload's shape asks for). A first line that starts with
// `job` is a header. Lines that are empty or start with '#' are skipped.
//
// What it does with them. A workload may start, on a node, only while one of its rows on that
// node is due (start_s <= now < end_s) and that row is not already taken by a run of it
// there; it asks the engine for a cycle at every row's start and end. On the row's GPUs
// when given and free (else the engine's choice on that node). A job still running at its
// row's end is stopped there (the observed run was stopped: preempted, requeued or
// failed), and goes back to the queue with its saved progress; a job whose work ends by
// then completes, as the simulator computes it. So the workloads' `work` should be what the
// observed runs did (a job that slept 3 s: work 3s at speed 1 on every GPU type). A
// service's replica target is the number of its rows due. A row that cannot start when it
// is due (its GPUs still held in the replay) starts at the next cycle that finds room
// while the row is still due. Single-node placements only; no preemption of its own.
//
// Errors name the file, the line and the field: an unreadable file, a row with too few
// fields, a number that is not one (or negative, or an end before the start), a node the
// cluster does not have, a GPU index the node does not have, and (when the caller knows the
// workloads in advance: the simulator) a job that is not one of them.
#pragma once

#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"
#include "airtime/policies/registry.h"

namespace airtime {

struct ReplayRow {
  std::string job;
  TimeMs start = 0;
  TimeMs end = kNever;  // kNever: `none`
  NodeIndex node = 0;
  std::vector<GpuIndex> gpus;  // cluster-wide indices; empty: not given
  int line = 0;                // in the file, from 1
};

// Reads a schedule file for `cluster`; when `workloads` is not null, every row's job must be
// one of them.
StatusOr<std::vector<ReplayRow>> LoadReplaySchedule(const std::string& path, const Cluster& cluster,
                                                    const std::vector<WorkloadSpec>* workloads);

// The same from text (`path` names it in errors).
StatusOr<std::vector<ReplayRow>> ParseReplaySchedule(const std::string& text,
                                                     const std::string& path,
                                                     const Cluster& cluster,
                                                     const std::vector<WorkloadSpec>* workloads);

// The replay policy over rows already read.
Policy MakeReplayPolicy(std::vector<ReplayRow> rows);

void RegisterReplay(PolicyRegistry& registry);

}  // namespace airtime
