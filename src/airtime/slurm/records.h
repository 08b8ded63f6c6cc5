// What Slurm reports, in airtime's terms, whatever the API version that carried it: nodes,
// partitions and jobs. api_shapes.h turns a version's JSON into these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "airtime/slurm/gres.h"

namespace airtime::slurm {

struct SlurmNode {
  std::string name;                      // "n3"
  std::string address;                   // Slurm's NodeAddr ("10.0.3.17"); "": its name
  std::string state;                     // base state, lower case: "idle", "mixed", "down"...
  std::vector<std::string> state_flags;  // "DRAIN", "NOT_RESPONDING"...
  std::string reason;                    // why it is down or drained ("" when none)
  std::vector<std::string> partitions;
  std::vector<Gres> gres;       // configured ("gpu:h100:8")
  std::vector<Gres> gres_used;  // in use, with indices ("gpu:h100:3(IDX:0-2)")
  int64_t cpus = 0;
  int64_t real_memory_mb = 0;

  // Whether jobs may start on it: not down, drained, draining or failing.
  bool Usable() const;
};

struct SlurmPartition {
  std::string name;
  std::vector<std::string> nodes;  // expanded
  int64_t priority_tier = 0;
  bool is_default = false;
  std::string state;  // "UP", "DOWN", "DRAIN", "INACTIVE"
};

// The GPUs a job holds on one node: Slurm chooses the indices itself. Whole GPUs (gres/gpu),
// or `shards` gres/shard of the GPU(s) at `indices` (one GPU in Slurm 22.05).
struct NodeGpus {
  std::string node;
  std::string type;  // "" when the job asked for untyped GPUs (shards are always untyped)
  std::vector<int> indices;
  int64_t shards = 0;  // 0: whole GPUs
};

struct SlurmJob {
  int64_t id = 0;
  std::string name;
  std::string comment;
  std::string state;         // upper case: "PENDING", "RUNNING", "COMPLETED", "CANCELLED"...
  std::string state_reason;  // "JobHeldUser", "Resources", "None"...
  std::string partition;
  std::string user;
  std::vector<std::string> nodes;           // allocated, expanded; empty while pending
  std::vector<std::string> required_nodes;  // ReqNodeList, expanded
  std::vector<NodeGpus> gpus;               // per allocated node, in `nodes` order (and a
                                            // node's shards after its whole GPUs)
  int64_t priority = 0;                     // 0 while held; -1: Slurm did not say (unset)
  int64_t restarts = 0;                     // times requeued
  int64_t submit_time = 0;                  // Unix seconds
  int64_t start_time = 0;                   // Unix seconds; 0 when not started
  int64_t exit_code = 0;                    // the batch script's wait status (v0.0.38)

  bool Held() const { return state == "PENDING" && priority == 0; }
};

}  // namespace airtime::slurm
