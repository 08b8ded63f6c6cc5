// static: separate inference and training pools, strict FIFO in each, first fit.
//
// Inference-side kinds (realtime, batch, embed, eval) run only on inference nodes, the
// others (training, finetune, quantize) only on training nodes. Nodes labelled
// `pool: inference` / `pool: training` in the cluster file keep their label; unlabelled
// nodes are split per GPU type in node order, the first `inference_share` (default 0.5) of
// each type's nodes going to inference. The other common setup besides one FIFO queue.
#pragma once

#include <vector>

#include "airtime/engine/plugins.h"
#include "airtime/policies/registry.h"

namespace airtime {

// Which pool every node is in: 0 inference, 1 training.
std::vector<int> AssignPools(const Cluster& cluster, double inference_share);

void RegisterStatic(PolicyRegistry& registry);

}  // namespace airtime
