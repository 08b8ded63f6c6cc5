#include "airtime/engine/cluster_state.h"

#include <algorithm>

namespace airtime {

ClusterState::ClusterState(const Cluster& cluster)
    : cluster_(&cluster),
      gpus_(cluster.gpu_count()),
      nodes_(cluster.node_count()),
      free_whole_by_type_(cluster.catalog().size(), 0),
      free_milli_by_type_(cluster.catalog().size(), 0),
      reserved_milli_by_type_(cluster.catalog().size(), 0),
      down_milli_by_type_(cluster.catalog().size(), 0),
      foreign_milli_by_type_(cluster.catalog().size(), 0),
      contribution_(cluster.node_count()),
      open_bits_((cluster.node_count() + 63) / 64, 0) {
  for (size_t n = 0; n < cluster.node_count(); ++n) {
    const Node& node = cluster.node(static_cast<NodeIndex>(n));
    NodeSummary& s = nodes_[n];
    s.cpu_free = node.cpu_milli;
    s.memory_free = node.memory_mib;
    s.free_whole = node.gpu_count;
    s.max_free_milli = node.gpu_count > 0 ? 1000 : 0;
    s.max_free_slices = node.gpu_count > 0 && node.mig_enabled ? 7 : 0;
    s.free_milli = 1000 * node.gpu_count;
    if (node.gpu_count > 0) {
      free_whole_by_type_[static_cast<size_t>(node.gpu_type)] += node.gpu_count;
      free_milli_by_type_[static_cast<size_t>(node.gpu_type)] += 1000LL * node.gpu_count;
      contribution_[n] = {node.gpu_count, 1000 * node.gpu_count, 0, 0};
      open_bits_[n / 64] |= uint64_t{1} << (n % 64);
    }
  }
}

int ClusterState::MigSlicesFor(const Shape& shape, GpuTypeId t) const {
  const MigProfile* p = cluster_->catalog().type(t).FindMig(shape.mig_profile);
  return p ? p->compute_slices : 0;
}

bool ClusterState::GpuTakes(const Shape& shape, GpuIndex g) const {
  const GpuRef& ref = cluster_->gpu(g);
  const Node& node = cluster_->node(ref.node);
  const GpuSlot& s = gpus_[static_cast<size_t>(g)];
  if (!nodes_[static_cast<size_t>(ref.node)].up || s.reserved || s.foreign_whole()) return false;
  if (!shape.AllowsType(node.gpu_type)) return false;
  const double mem = cluster_->catalog().type(node.gpu_type).memory_gb;
  switch (shape.mode) {
    case ShareMode::kWhole:
      return s.holders == 0 && s.foreign_milli == 0 && shape.memory_gb <= mem;
    case ShareMode::kFraction:
      if (s.holders > 0 && s.mode != ShareMode::kFraction) return false;
      if (shape.gpu_milli > s.free_milli()) return false;
      return shape.memory_gb <= 0 ||
             s.memory_used_gb + mem * s.foreign_milli / 1000.0 + shape.memory_gb <= mem + 1e-6;
    case ShareMode::kMig: {
      if (!node.mig_enabled || s.foreign_milli > 0) return false;
      if (s.holders > 0 && s.mode != ShareMode::kMig) return false;
      const MigProfile* p = cluster_->catalog().type(node.gpu_type).FindMig(shape.mig_profile);
      if (!p) return false;
      return s.mig_slices + p->compute_slices <= 7 && s.memory_used_gb + p->memory_gb <= mem + 1e-6;
    }
  }
  return false;
}

bool ClusterState::FitsOnNode(const Shape& shape, NodeIndex n) const {
  const NodeSummary& s = nodes_[static_cast<size_t>(n)];
  const Node& node = cluster_->node(n);
  if (!s.up) return false;
  if (node.cpu_milli > 0 && shape.cpu_milli > s.cpu_free) return false;
  if (node.memory_mib > 0 && shape.memory_mib > s.memory_free) return false;
  if (shape.gpu_count == 0) return true;
  if (node.gpu_count < shape.gpu_count || !shape.AllowsType(node.gpu_type)) return false;
  switch (shape.mode) {
    case ShareMode::kWhole:
      return s.free_whole >= shape.gpu_count &&
             shape.memory_gb <= cluster_->catalog().type(node.gpu_type).memory_gb;
    case ShareMode::kFraction:
      if (shape.gpu_count == 1 && shape.memory_gb <= 0) return s.max_free_milli >= shape.gpu_milli;
      return UnitsOnNode(shape, n) >= shape.gpu_count;
    case ShareMode::kMig:
      if (s.max_free_slices < MigSlicesFor(shape, node.gpu_type)) return false;
      return UnitsOnNode(shape, n) >= shape.gpu_count;
  }
  return false;
}

int ClusterState::UnitsOnNode(const Shape& shape, NodeIndex n) const {
  const Node& node = cluster_->node(n);
  if (!nodes_[static_cast<size_t>(n)].up || !shape.AllowsType(node.gpu_type)) return 0;
  if (shape.mode == ShareMode::kWhole) return nodes_[static_cast<size_t>(n)].free_whole;
  int units = 0;
  const GpuIndex first = cluster_->first_gpu(n);
  for (int i = 0; i < node.gpu_count; ++i) units += GpuTakes(shape, first + i) ? 1 : 0;
  return units;
}

int ClusterState::SelectOnNode(const Shape& shape, NodeIndex n, int count,
                               std::vector<GpuIndex>* out) const {
  const Node& node = cluster_->node(n);
  const GpuIndex first = cluster_->first_gpu(n);
  if (shape.mode == ShareMode::kWhole) {
    int chosen = 0;
    for (int i = 0; i < node.gpu_count && chosen < count; ++i) {
      if (GpuTakes(shape, first + i)) {
        out->push_back(first + i);
        ++chosen;
      }
    }
    return chosen;
  }
  // Shares and slices: tightest fit first (the GPU with the most already used), so that
  // empty GPUs stay whole for whole-GPU work.
  GpuIndex cand[64];
  int k = 0;
  for (int i = 0; i < node.gpu_count && k < 64; ++i)
    if (GpuTakes(shape, first + i)) cand[k++] = first + i;
  std::stable_sort(cand, cand + k, [&](GpuIndex a, GpuIndex b) {
    return gpus_[static_cast<size_t>(a)].free_milli() < gpus_[static_cast<size_t>(b)].free_milli();
  });
  int chosen = std::min(k, count);
  for (int i = 0; i < chosen; ++i) out->push_back(cand[i]);
  return chosen;
}

void ClusterState::FillPlacement(const Shape& shape, Placement* p) const {
  p->mode = shape.mode;
  p->cpu_milli = shape.cpu_milli;
  p->memory_mib = shape.memory_mib;
  if (p->host_node < 0 && !p->gpus.empty()) p->host_node = cluster_->gpu(p->gpus[0]).node;
  if (p->gpus.empty()) return;
  const GpuTypeId t = cluster_->gpu_type(p->gpus[0]);
  const GpuType& type = cluster_->catalog().type(t);
  switch (shape.mode) {
    case ShareMode::kWhole:
      p->milli = 1000;
      p->mig_slices = 0;
      p->memory_gb = type.memory_gb;
      break;
    case ShareMode::kFraction:
      p->milli = shape.gpu_milli;
      p->mig_slices = 0;
      p->memory_gb = shape.memory_gb;
      break;
    case ShareMode::kMig: {
      const MigProfile* m = type.FindMig(shape.mig_profile);
      p->mig_slices = m ? m->compute_slices : 7;
      p->milli = p->mig_slices * 1000 / 7;
      p->memory_gb = m ? m->memory_gb : type.memory_gb;
      break;
    }
  }
}

void ClusterState::Apply(const Placement& p) {
  NodeIndex last = -1;
  for (GpuIndex g : p.gpus) {
    GpuSlot& s = gpus_[static_cast<size_t>(g)];
    s.used_milli = static_cast<int16_t>(s.used_milli + p.milli);
    s.mig_slices = static_cast<int8_t>(s.mig_slices + p.mig_slices);
    s.memory_used_gb += static_cast<float>(p.memory_gb);
    s.mode = p.mode;
    ++s.holders;
    allocated_milli_ += p.milli;
  }
  for (GpuIndex g : p.gpus) {
    NodeIndex n = cluster_->gpu(g).node;
    if (n != last) Refresh(n);
    last = n;
  }
  if (p.host_node >= 0) {
    nodes_[static_cast<size_t>(p.host_node)].cpu_free -= p.cpu_milli;
    nodes_[static_cast<size_t>(p.host_node)].memory_free -= p.memory_mib;
  }
}

void ClusterState::Release(const Placement& p) {
  NodeIndex last = -1;
  for (GpuIndex g : p.gpus) {
    GpuSlot& s = gpus_[static_cast<size_t>(g)];
    s.used_milli = static_cast<int16_t>(s.used_milli - p.milli);
    s.mig_slices = static_cast<int8_t>(s.mig_slices - p.mig_slices);
    s.memory_used_gb -= static_cast<float>(p.memory_gb);
    if (--s.holders == 0) {
      s.memory_used_gb = 0;
      s.used_milli = 0;
      s.mig_slices = 0;
    }
    allocated_milli_ -= p.milli;
  }
  for (GpuIndex g : p.gpus) {
    NodeIndex n = cluster_->gpu(g).node;
    if (n != last) Refresh(n);
    last = n;
  }
  if (p.host_node >= 0) {
    nodes_[static_cast<size_t>(p.host_node)].cpu_free += p.cpu_milli;
    nodes_[static_cast<size_t>(p.host_node)].memory_free += p.memory_mib;
  }
}

void ClusterState::SetNodeUp(NodeIndex n, bool up) {
  nodes_[static_cast<size_t>(n)].up = up;
  Refresh(n);
}

void ClusterState::SetReserved(GpuIndex g, bool reserved) {
  gpus_[static_cast<size_t>(g)].reserved = reserved;
  Refresh(cluster_->gpu(g).node);
}

void ClusterState::SetForeign(GpuIndex g, int milli) {
  gpus_[static_cast<size_t>(g)].foreign_milli = static_cast<int16_t>(std::clamp(milli, 0, 1000));
  Refresh(cluster_->gpu(g).node);
}

void ClusterState::Refresh(NodeIndex n) {
  const Node& node = cluster_->node(n);
  NodeSummary& s = nodes_[static_cast<size_t>(n)];
  if (node.gpu_count == 0) return;
  const size_t t = static_cast<size_t>(node.gpu_type);
  const GpuIndex first = cluster_->first_gpu(n);
  int free_whole = 0, max_milli = 0, max_slices = 0, free_milli = 0, reserved_milli = 0;
  int foreign_milli = 0;
  for (int i = 0; i < node.gpu_count; ++i) {
    const GpuSlot& g = gpus_[static_cast<size_t>(first + i)];
    if (g.foreign_whole()) {
      foreign_milli += 1000 - g.used_milli;
      continue;
    }
    // A share, at most what airtime's allocations leave of the GPU (a foreign job that Slurm
    // started beside one the engine placed there, in the moment before the engine learns).
    foreign_milli += std::min(static_cast<int>(g.foreign_milli), 1000 - g.used_milli);
    if (g.reserved) {
      reserved_milli += g.free_milli();
      continue;
    }
    if (g.holders == 0 && g.foreign_milli == 0) ++free_whole;
    const int fm = g.free_milli();
    free_milli += fm;
    if (g.holders == 0 || g.mode == ShareMode::kFraction) max_milli = std::max(max_milli, fm);
    if (node.mig_enabled && g.foreign_milli == 0 && (g.holders == 0 || g.mode == ShareMode::kMig))
      max_slices = std::max(max_slices, 7 - g.mig_slices);
  }
  s.free_whole = free_whole;
  s.max_free_milli = max_milli;
  s.max_free_slices = max_slices;
  s.free_milli = free_milli;
  const uint64_t bit = uint64_t{1} << (static_cast<size_t>(n) % 64);
  uint64_t& word = open_bits_[static_cast<size_t>(n) / 64];
  word = s.up && free_milli > 0 ? word | bit : word & ~bit;
  // Replace the node's contribution to the per-type totals.
  Contribution& c = contribution_[static_cast<size_t>(n)];
  free_whole_by_type_[t] -= c.whole;
  free_milli_by_type_[t] -= c.milli;
  reserved_milli_by_type_[t] -= c.reserved;
  down_milli_by_type_[t] -= c.down;
  foreign_milli_by_type_[t] -= c.foreign;
  c.whole = s.up ? free_whole : 0;
  c.milli = s.up ? free_milli : 0;
  c.reserved = s.up ? reserved_milli : 0;
  c.down = s.up ? 0 : 1000 * node.gpu_count;
  c.foreign = s.up ? foreign_milli : 0;
  foreign_milli_by_type_[t] += c.foreign;
  free_whole_by_type_[t] += c.whole;
  free_milli_by_type_[t] += c.milli;
  reserved_milli_by_type_[t] += c.reserved;
  down_milli_by_type_[t] += c.down;
}

}  // namespace airtime
