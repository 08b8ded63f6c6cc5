// A job airtime asks Slurm to run: what it holds, where it may go and how it is told to
// checkpoint. Version-free; api_shapes.h turns it into a version's JSON.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace airtime::slurm {

// Slurm's --signal: send `signal` `seconds_before` the job's time limit. The batch-shell form
// (--signal=B:...) is what a script that runs the workload itself needs; slurmrestd v0.0.38
// refuses it ("Invalid SIGNAL specification"), so there the signal goes to the job's steps.
struct GraceSignal {
  std::string signal = "USR1";  // a name without SIG ("USR1", "TERM") or a number
  int64_t seconds_before = 60;
};

struct JobRequest {
  std::string name;       // shown by squeue
  std::string comment;    // airtime's explanation, shown by squeue -o %k
  std::string partition;  // "" for the default partition
  std::string gpu_type;   // "h100"; "" for any type
  int64_t gpus_per_node = 0;
  // A fraction of one GPU per node: this many gres/shard (--gres=shard:K), instead of whole
  // GPUs (gpus_per_node 0, gpu_type ignored). Slurm 22.05 takes a job's shards on a node
  // from one GPU, any GPU of the node not allocated whole with enough shards free.
  int64_t shards_per_node = 0;
  int64_t nodes = 1;
  // The nodes it must run on (sbatch -w, Slurm's ReqNodeList); empty: any.
  std::vector<std::string> required_nodes;
  std::string script;  // the batch script, starting with "#!"
  std::string working_directory = "/tmp";
  std::string standard_output;  // "" for Slurm's default (slurm-%j.out in the working dir)
  std::map<std::string, std::string> environment;
  bool hold = true;  // submit held (released later by SlurmClient::Release)
  bool requeue = true;
  std::optional<GraceSignal> grace_signal;
  std::optional<int64_t> time_limit_minutes;
};

}  // namespace airtime::slurm
