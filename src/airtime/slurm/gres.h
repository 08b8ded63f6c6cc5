// Slurm GRES (generic resource) strings, as slurmrestd and scontrol print them:
//   "gpu:h100:8"                 a node's configured GPUs (type h100, 8 of them)
//   "gpu:h100:8(S:0-1)"          the same, with the sockets they are near
//   "gpu:h100:3(IDX:0-2)"        a node's GPUs in use, or a job's GPUs on one node
//   "gpu:a100:0(IDX:N/A)"        none in use
//   "gres:gpu:a100:2"            a job's request per node (tres_per_node)
//   "gpu:2", "gpu"               untyped
//   "shard:h100:8000"            a node's gres/shard (GPU sharing, Slurm 22.05 up: a job's
//                                shards on a node all come from one GPU)
//   "shard:500(IDX:0)"           a job's shards on one node, and the GPU they came from
//   "shard:h100:2(IDX:0-1)"      a node's shards in use: the GPUs with some in use (22.05's
//                                count here is the number of GPUs, not of shards)
// A string may list several, comma-separated ("gpu:h100:4,shard:8"); commas inside the
// parentheses belong to the index list ("IDX:0,2-3"). The text is untrusted: a malformed
// entry is an InvalidArgument that quotes it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "airtime/base/status.h"

namespace airtime::slurm {

struct Gres {
  std::string name;  // "gpu"
  std::string type;  // "h100"; "" when untyped
  int64_t count = 0;
  std::vector<int> indices;  // from "(IDX:...)"; empty when absent or N/A
};

// Every entry of a GRES list; "", "(null)" and "N/A" are an empty list.
StatusOr<std::vector<Gres>> ParseGresList(std::string_view text);

// A Slurm index list "0-1,3" -> {0, 1, 3}; "N/A" and "" -> {}. Indices above 4095 are refused.
StatusOr<std::vector<int>> ParseIndexList(std::string_view text);

// The GPUs of a GRES list (entries named "gpu"), summed over their types.
int64_t GpuCount(const std::vector<Gres>& list);

// The gres/shard of a GRES list (entries named "shard"), summed; at most 2^62.
int64_t ShardCount(const std::vector<Gres>& list);

}  // namespace airtime::slurm
