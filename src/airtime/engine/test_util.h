// Helpers for tests that build small clusters and workloads in a line or two.
#pragma once

#include <string>
#include <vector>

#include "airtime/model/cluster.h"
#include "airtime/model/workload.h"

namespace airtime::testing {

struct NodeGroup {
  std::string type;
  int gpus_per_node = 8;
  int nodes = 1;
  std::string domain = "";  // shared NVLink domain for the group ("" each node alone)
  std::string pool = "";
  bool mig = false;
};

inline Cluster MakeCluster(const std::vector<NodeGroup>& groups) {
  std::vector<Node> nodes;
  int k = 0;
  for (const auto& g : groups) {
    for (int i = 0; i < g.nodes; ++i) {
      Node n;
      n.name = g.type + "-" + std::to_string(k++);
      n.gpu_type = *GpuCatalog::Builtin().Find(g.type);
      n.gpu_count = g.gpus_per_node;
      n.nvlink_domain = g.domain;
      n.pool = g.pool;
      n.mig_enabled = g.mig;
      nodes.push_back(n);
    }
  }
  return *Cluster::Build("test", nodes);
}

inline WorkloadSpec MakeJob(const std::string& name, WorkloadKind kind, int gpus,
                            double work_seconds, TimeMs submit = 0) {
  WorkloadSpec s;
  s.name = name;
  s.kind = kind;
  s.shape.gpu_count = gpus;
  s.work_seconds = work_seconds;
  s.submit_at = submit;
  s.value.on_completion = 10;
  return s;
}

inline WorkloadSpec MakeService(const std::string& name, double capacity_rps, int gpus = 1) {
  WorkloadSpec s;
  s.name = name;
  s.kind = WorkloadKind::kRealtime;
  s.shape.gpu_count = gpus;
  s.realtime.capacity_rps = capacity_rps;
  s.realtime.latency_slo_ms = 200;
  s.realtime.max_replicas = 64;
  s.realtime.cold_start = 60 * 1000;
  s.value.per_1k_requests = 1;
  return s;
}

}  // namespace airtime::testing
