// squeue's brief job list: every job slurmctld still knows, one line each, with only what
// the poll of the Slurm backend needs to follow a job's life (id, state, reason, restarts,
// exit status, priority, user). No name, comment, nodes or GPU indices: those come from
// one job's full record (SlurmClient::Job) when they are needed.
//
// Why squeue and not slurmrestd's GET /jobs: squeue reads slurmctld's binary RPC and prints
// a few fields; GET /jobs writes every field of every job as JSON (at 1,000 jobs 3.9 MB and
// 0.2 s in slurmrestd, against squeue's 15-27 ms: docs/slurm.md). The fields are named
// `squeue --Format` fields, not columns of a version's JSON (checked on 22.05, the lab's,
// and against squeue's source up to 25.11: its field names are the same, and exit_code is
// printed as EXIT:SIGNAL from 23.11 on, which is read too); a release that renamed one would
// fail every poll with the line it printed, not be misread. The output is untrusted: a malformed
// line is an InvalidArgument that quotes it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/slurm/records.h"

namespace airtime::slurm {

// squeue's arguments for the brief list (-h -t all --Format=...): fields separated by '|'.
std::vector<std::string> SqueueBriefArgs();

// The jobs of `out`, squeue's output for SqueueBriefArgs(): id, state, state_reason,
// restarts, exit_code (the wait status, as slurmrestd v0.0.38 gives it), priority, user; the
// other fields of SlurmJob are left empty.
StatusOr<std::vector<SlurmJob>> ParseSqueueBrief(std::string_view out);

}  // namespace airtime::slurm
