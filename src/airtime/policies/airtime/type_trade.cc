#include "airtime/policies/airtime/type_trade.h"

#include <algorithm>

#include "airtime/engine/engine.h"

namespace airtime {

bool TypeTrade::CouldStartOn(const Job& job, GpuTypeId type, const Engine& engine) {
  const ClusterState& state = engine.state();
  const Shape& shape = job.s().shape;
  const auto t = static_cast<size_t>(type);
  if (shape.gpu_count > state.free_whole_of_type(type)) return false;
  if (!open_known_[t]) {
    open_known_[t] = 1;
    open_[t].clear();
    for (NodeIndex n : engine.nodes_of_type()[t])
      if (state.node(n).up && state.node(n).free_whole > 0) open_[t].push_back(n);
  }
  auto allowed = [&](NodeIndex n) {
    for (const auto& f : engine.policy().filters)
      if (!f->Allows(job, n, engine)) return false;
    return true;
  };
  const bool one_node = std::any_of(open_[t].begin(), open_[t].end(), [&](NodeIndex n) {
    return state.FitsOnNode(shape, n) && allowed(n);
  });
  // A gang that may span nodes: enough free GPUs of the type (checked above) on allowed nodes.
  if (one_node || shape.locality == Locality::kNode) return one_node;
  return std::any_of(open_[t].begin(), open_[t].end(), allowed);
}

TypeTrade::Claim TypeTrade::ClaimOf(const Job& job, const GpuCatalog& catalog) const {
  // The fastest and next fastest types the job may use and whose GPUs hold its memory.
  const Shape& shape = job.s().shape;
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
  Claim c;
  c.gpus = shape.gpu_count;
  c.id = job.id;
  c.trade.from = best;  // -1: no type holds it
  if (best < 0) return c;
  c.gain = job.value_density * (best_speed - (next < 0 ? 0 : next_speed));
  c.trade.to = next < 0 ? best : next;
  c.trade.to_speed = next_speed;
  c.trade.gain = c.gain;
  return c;
}

void TypeTrade::BeforeAllocate(Engine& engine) {
  engine.cycle_state().Publish<SpeedRankView>(this);
  trades_.clear();
  last_job_ = kNoWorkload;
  const auto& nodes_of_type = engine.nodes_of_type();
  const ClusterState& state = engine.state();
  const size_t types = nodes_of_type.size();
  stop_at_free_.resize(types, INT32_MAX);
  present_.clear();
  bool any_free = false;
  for (size_t t = 0; t < types; ++t) {
    if (nodes_of_type[t].empty()) continue;
    present_.push_back(static_cast<GpuTypeId>(t));
    const int free = state.free_whole_of_type(static_cast<GpuTypeId>(t));
    if (free < stop_at_free_[t]) stop_at_free_[t] = INT32_MAX;  // something started there
    any_free = any_free || free > 0;
  }
  if (present_.size() < 2 || !any_free) return;  // one type, or nothing free
  by_type_.resize(types);
  for (auto& claims : by_type_) claims.clear();
  open_.resize(types);
  open_known_.assign(types, 0);

  const GpuCatalog& catalog = engine.catalog();
  size_t scanned = 0;
  for (WorkloadId id : engine.queue()) {
    if (scanned++ >= scan_) break;
    const Job& job = engine.job(id);
    const Shape& shape = job.s().shape;
    if (!job.queued || job.is_service() || job.never_fits || shape.mode != ShareMode::kWhole ||
        shape.gpu_count == 0)
      continue;
    // The job's claim does not change while it waits: worked out once.
    if (static_cast<size_t>(id) >= claim_of_.size()) claim_of_.resize(engine.job_count());
    Cached& cached = claim_of_[static_cast<size_t>(id)];
    if (!cached.known) {
      cached.known = true;
      cached.claim = ClaimOf(job, catalog);
    }
    const Claim& c = cached.claim;
    if (c.trade.from < 0 || stop_at_free_[static_cast<size_t>(c.trade.from)] != INT32_MAX) continue;
    by_type_[static_cast<size_t>(c.trade.from)].push_back(c);
  }

  for (GpuTypeId type : present_) {
    auto& claims = by_type_[static_cast<size_t>(type)];
    if (claims.size() < 2) continue;
    int free = state.free_whole_of_type(type);
    int asked = 0;
    for (const Claim& c : claims) asked += c.gpus;
    if (asked <= free) continue;  // enough for every job that prefers this type
    // Largest claims first; equal claims keep queue order. Only a job that could start on
    // this type now holds a claim on its free GPUs (a gang that finds no node with room
    // must not keep them from work that fits), and only one that could start on its next
    // type now is traded (nothing waits for a trade).
    std::stable_sort(claims.begin(), claims.end(),
                     [](const Claim& a, const Claim& b) { return a.gain > b.gain; });
    for (const Claim& c : claims) {
      const Job& job = engine.job(c.id);
      if (!CouldStartOn(job, type, engine)) continue;
      if (c.gpus <= free) {
        free -= c.gpus;
      } else if (c.trade.to != c.trade.from && CouldStartOn(job, c.trade.to, engine)) {
        trades_[c.id] = c.trade;
      }
    }
  }
}

void TypeTrade::AfterAllocate(Engine& engine) {
  // Jobs were traded off a type that can still take one of them: the claims they gave way
  // to did not start. Stop trading on it until something starts there.
  for (const auto& [id, trade] : trades_) {
    const int free = engine.state().free_whole_of_type(trade.from);
    if (free >= engine.job(id).s().shape.gpu_count)
      stop_at_free_[static_cast<size_t>(trade.from)] = free;
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
  // Below every type: packing or fragmentation must not send the job back to this one.
  return last_trade_->to_speed - kDemoted;
}

}  // namespace airtime
