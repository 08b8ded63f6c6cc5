#include "airtime/policies/type_trade.h"

#include <algorithm>

#include "airtime/engine/engine.h"

namespace airtime {

void TypeTrade::BeforeAllocate(Engine& engine) {
  trades_.clear();
  last_job_ = kNoWorkload;
  const auto& nodes_of_type = engine.nodes_of_type();
  const size_t types = nodes_of_type.size();
  present_.clear();
  bool any_free = false;
  for (size_t t = 0; t < types; ++t) {
    if (nodes_of_type[t].empty()) continue;
    present_.push_back(static_cast<GpuTypeId>(t));
    any_free = any_free || engine.state().free_whole_of_type(static_cast<GpuTypeId>(t)) > 0;
  }
  if (present_.size() < 2 || !any_free) return;  // one type, or nothing free
  by_type_.resize(types);
  for (auto& claims : by_type_) claims.clear();

  const GpuCatalog& catalog = engine.catalog();
  size_t scanned = 0;
  for (WorkloadId id : engine.queue()) {
    if (scanned++ >= scan_) break;
    const Job& job = engine.job(id);
    const Shape& shape = job.s().shape;
    if (!job.queued || job.is_service() || job.never_fits || shape.mode != ShareMode::kWhole ||
        shape.gpu_count == 0)
      continue;
    // The fastest and next fastest types the job may use and whose GPUs hold its memory.
    GpuTypeId best = -1, next = -1;
    double best_speed = 0, next_speed = 0;
    for (GpuTypeId type : present_) {
      if (!shape.AllowsType(type) || catalog.type(type).memory_gb < shape.memory_gb) continue;
      const double speed = job.s().SpeedOn(type, catalog);
      if (speed <= 0) continue;
      if (best < 0 || speed > best_speed) {
        next = best;
        next_speed = best_speed;
        best = type;
        best_speed = speed;
      } else if (next < 0 || speed > next_speed) {
        next = type;
        next_speed = speed;
      }
    }
    if (best < 0) continue;
    Claim c;
    c.gain = job.value_density * (best_speed - (next < 0 ? 0 : next_speed));
    c.gpus = shape.gpu_count;
    c.id = id;
    c.trade.from = best;
    c.trade.to = next < 0 ? best : next;
    c.trade.to_speed = next_speed;
    c.trade.gain = c.gain;
    by_type_[static_cast<size_t>(best)].push_back(c);
  }

  const ClusterState& state = engine.state();
  for (size_t t = 0; t < types; ++t) {
    auto& claims = by_type_[t];
    if (claims.size() < 2) continue;
    int free = state.free_whole_of_type(static_cast<GpuTypeId>(t));
    int asked = 0;
    for (const Claim& c : claims) asked += c.gpus;
    if (asked <= free) continue;  // enough for every job that prefers this type
    // Only a job that could start on this type now holds a claim on its free GPUs: a gang
    // that finds no node with room for it must not keep them from work that fits.
    open_.clear();
    for (NodeIndex n : nodes_of_type[t])
      if (state.node(n).free_whole > 0) open_.push_back(n);
    const int all_free = free;
    auto could_start = [&](const Claim& c) {
      const Shape& shape = engine.job(c.id).s().shape;
      if (c.gpus > all_free) return false;
      if (shape.locality == Locality::kAny) return true;
      return std::any_of(open_.begin(), open_.end(),
                         [&](NodeIndex n) { return state.FitsOnNode(shape, n); });
    };
    // Largest claims first; equal claims keep queue order.
    std::stable_sort(claims.begin(), claims.end(),
                     [](const Claim& a, const Claim& b) { return a.gain > b.gain; });
    for (const Claim& c : claims) {
      if (!could_start(c)) continue;
      if (c.gpus <= free) {
        free -= c.gpus;
      } else if (c.trade.to != c.trade.from) {
        trades_[c.id] = c.trade;
      }
    }
  }
}

double TypeTrade::RankSpeed(const Job& job, GpuTypeId type, const Engine& engine) const {
  const double own = job.s().SpeedOn(type, engine.catalog());
  if (trades_.empty()) return own;
  // The engine scores every node for one job in a row: one lookup per job.
  if (job.id != last_job_ || engine.cycles() != last_cycle_) {
    last_job_ = job.id;
    last_cycle_ = engine.cycles();
    auto it = trades_.find(job.id);
    last_trade_ = it == trades_.end() ? nullptr : &it->second;
  }
  if (last_trade_ == nullptr || last_trade_->from != type) return own;
  // Just under the next type: that type wins where it has room, and this one still beats
  // every slower type.
  return last_trade_->to_speed * (1 - 1e-6);
}

}  // namespace airtime
