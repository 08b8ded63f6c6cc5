#include "airtime/ledger/ledger.h"

#include <algorithm>
#include <map>

#include "airtime/engine/variant_load.h"

namespace airtime {

const char* BucketName(Bucket b) {
  switch (b) {
    case Bucket::kUseful:
      return "useful";
    case Bucket::kIdleHeld:
      return "idle_held";
    case Bucket::kLowValueBusy:
      return "low_value_busy";
    case Bucket::kLost:
      return "lost";
    case Bucket::kStranded:
      return "stranded";
    case Bucket::kReservedHeadroom:
      return "reserved_headroom";
    case Bucket::kFreeNoDemand:
      return "free_no_demand";
    case Bucket::kBlocked:
      return "blocked";
    case Bucket::kDown:
      return "down";
    case Bucket::kForeign:
      return "foreign";
  }
  return "?";
}

Bucket GpuBuckets::main() const {
  size_t best = 0;
  for (size_t b = 1; b < milli.size(); ++b)
    if (milli[b] > milli[best]) best = b;
  return static_cast<Bucket>(best);
}

int64_t BucketTotals::sum() const {
  int64_t s = 0;
  for (int64_t v : milli_ms) s += v;
  return s;
}
double BucketTotals::gpu_hours(Bucket b) const {
  return static_cast<double>(milli_ms[static_cast<size_t>(b)]) / 3.6e9;
}
double BucketTotals::installed_gpu_hours() const {
  return static_cast<double>(installed_milli_ms) / 3.6e9;
}
int64_t BucketTotals::allocated_milli_ms() const {
  return milli_ms[static_cast<size_t>(Bucket::kUseful)] +
         milli_ms[static_cast<size_t>(Bucket::kIdleHeld)] +
         milli_ms[static_cast<size_t>(Bucket::kLowValueBusy)] +
         milli_ms[static_cast<size_t>(Bucket::kLost)] + reserved_held_milli_ms;
}
void BucketTotals::Add(const BucketTotals& other) {
  for (size_t b = 0; b < milli_ms.size(); ++b) milli_ms[b] += other.milli_ms[b];
  installed_milli_ms += other.installed_milli_ms;
  reserved_held_milli_ms += other.reserved_held_milli_ms;
}
void LedgerTotals::Add(const LedgerTotals& other) {
  BucketTotals::Add(other);
  if (by_type.size() < other.by_type.size()) by_type.resize(other.by_type.size());
  for (size_t t = 0; t < other.by_type.size(); ++t) by_type[t].Add(other.by_type[t]);
}

void Ledger::SetMeasuredUtilization(std::unordered_map<AllocationId, double> measured) {
  measured_ = std::move(measured);
  FlushAllocations();
  Classify();
}

Ledger::Ledger(const Engine& engine) : engine_(&engine), last_(engine.now()), acc_since_(last_) {
  const Cluster& c = engine.cluster();
  installed_milli_ = 1000 * static_cast<int64_t>(c.gpu_count());
  totals_.by_type.resize(c.catalog().size());
  type_slot_.assign(c.catalog().size(), -1);
  for (size_t t = 0; t < c.gpus_per_type().size(); ++t) {
    if (c.gpus_per_type()[t] == 0) continue;
    type_slot_[t] = static_cast<int>(type_rates_.size());
    type_rates_.push_back({static_cast<GpuTypeId>(t), {}, 1000LL * c.gpus_per_type()[t], 0});
  }
  Classify();
}

void Ledger::Carry(const LedgerTotals& earlier) { totals_.Add(earlier); }

void Ledger::AddRate(GpuTypeId t, Bucket b, int64_t milli) {
  rate_[static_cast<size_t>(b)] += milli;
  const int slot = type_slot_[static_cast<size_t>(t)];
  if (slot >= 0) type_rates_[static_cast<size_t>(slot)].rate[static_cast<size_t>(b)] += milli;
}

namespace {

// `amount` split over `split` in proportion to its milli, exactly (the last takes the rest).
template <typename F>
void Spread(const std::vector<std::pair<GpuTypeId, int64_t>>& split, int64_t amount, F&& add) {
  int64_t total = 0;
  for (const auto& [t, m] : split) total += m;
  int64_t left = amount;
  for (size_t i = 0; i < split.size(); ++i) {
    const int64_t part =
        i + 1 == split.size() || total == 0
            ? left
            : static_cast<int64_t>(static_cast<__int128>(amount) * split[i].second / total);
    add(split[i].first, part);
    left -= part;
    if (total == 0) break;
  }
}

// The table parts[i][k] with rows adding up to weights[i] and columns to amounts[k] (which
// add up to the weights' total), each part within a few milli of its proportional share:
// the floors of the shares, then the remainders filled row by row. Rows are GPU types (an
// allocation spanning several) or the GPUs of one type.
std::vector<std::array<int64_t, 3>> SplitExactly(const std::vector<int64_t>& weights,
                                                 const std::array<int64_t, 3>& amounts) {
  std::vector<std::array<int64_t, 3>> parts(weights.size());
  if (weights.size() == 1) {
    parts[0] = amounts;
    return parts;
  }
  int64_t total = 0;
  for (int64_t m : weights) total += m;
  std::vector<int64_t> row_left(weights.size());
  std::array<int64_t, 3> col_left = amounts;
  for (size_t i = 0; i < weights.size(); ++i) {
    row_left[i] = weights[i];
    for (size_t k = 0; k < amounts.size(); ++k) {
      const int64_t p =
          total > 0 ? static_cast<int64_t>(static_cast<__int128>(amounts[k]) * weights[i] / total)
                    : 0;
      parts[i][k] = p;
      row_left[i] -= p;
      col_left[k] -= p;
    }
  }
  for (size_t i = 0; i < weights.size(); ++i)
    for (size_t k = 0; k < amounts.size() && row_left[i] > 0; ++k) {
      const int64_t x = std::min(row_left[i], col_left[k]);
      if (x <= 0) continue;
      parts[i][k] += x;
      row_left[i] -= x;
      col_left[k] -= x;
    }
  return parts;
}

}  // namespace

std::vector<int64_t> Ledger::WeightsOf(const TypeSplit& split) {
  std::vector<int64_t> w;
  w.reserve(split.size());
  for (const auto& [t, m] : split) w.push_back(m);
  return w;
}

GpuTypeId Ledger::OneTypeOf(const Cluster& c, const Placement& p) {
  const GpuTypeId first = c.gpu_type(p.gpus[0]);
  for (GpuIndex g : p.gpus)
    if (c.gpu_type(g) != first) return kNoGpuType;
  return first;
}

Ledger::TypeSplit Ledger::SplitOf(const Cluster& c, const Placement& p) {
  TypeSplit split;
  for (GpuIndex g : p.gpus) {
    const GpuTypeId t = c.gpu_type(g);
    auto it = std::find_if(split.begin(), split.end(), [&](const auto& e) { return e.first == t; });
    if (it == split.end())
      split.push_back({t, p.milli});
    else
      it->second += p.milli;
  }
  return split;
}

void Ledger::Advance(TimeMs to) {
  if (to <= last_) return;
  const int64_t dt = to - last_;
  for (int b = 0; b < kBucketCount; ++b)
    totals_.milli_ms[static_cast<size_t>(b)] += rate_[static_cast<size_t>(b)] * dt;
  totals_.installed_milli_ms += installed_milli_ * dt;
  totals_.reserved_held_milli_ms += reserved_held_rate_ * dt;
  for (const TypeRates& r : type_rates_) {
    BucketTotals& t = totals_.by_type[static_cast<size_t>(r.type)];
    for (size_t b = 0; b < r.rate.size(); ++b) t.milli_ms[b] += r.rate[b] * dt;
    t.installed_milli_ms += r.installed * dt;
    t.reserved_held_milli_ms += r.reserved_held * dt;
  }
  for (const auto& [shape, rate] : shape_blocked_rate_) shape_blocked_[shape] += rate * dt;
  last_ = to;
}

int64_t Ledger::held_milli() const {
  return rate_[static_cast<size_t>(Bucket::kUseful)] +
         rate_[static_cast<size_t>(Bucket::kIdleHeld)] +
         rate_[static_cast<size_t>(Bucket::kLowValueBusy)] + reserved_held_rate_;
}

// Brings per-allocation accumulators up to now with the rates that held so far.
void Ledger::FlushAllocations() {
  const int64_t dt = last_ - acc_since_;
  if (dt > 0) {
    for (const AllocRates& r : alloc_rates_) {
      AllocAcc& a = acc_[r.id];
      if (a.split.empty()) {
        if (r.type != kNoGpuType) {
          a.split = {{r.type, 1}};
        } else if (auto m = multi_split_.find(r.id); m != multi_split_.end()) {
          a.split = m->second;
        }
      }
      a.useful += r.useful * dt;
      a.idle += r.idle * dt;
      a.low += r.low * dt;
    }
  }
  acc_since_ = last_;
}

void Ledger::Observe(const CycleResult& cycle) {
  FlushAllocations();
  // Work thrown away moves to `lost` from the buckets it was counted in, in proportion.
  for (const Stopped& s : cycle.stopped) {
    auto it = acc_.find(s.allocation);
    if (it == acc_.end()) continue;
    AllocAcc a = it->second;
    acc_.erase(it);
    auto lost = static_cast<int64_t>(s.lost_gpu_ms * 1000.0 + 0.5);
    const int64_t total = a.useful + a.idle + a.low;
    lost = std::min(lost, total);
    if (lost <= 0) continue;
    int64_t from_idle = static_cast<int64_t>(static_cast<__int128>(lost) * a.idle / total);
    int64_t from_low = static_cast<int64_t>(static_cast<__int128>(lost) * a.low / total);
    int64_t from_useful = lost - from_idle - from_low;
    auto take = [&](Bucket b, int64_t v) {
      auto& m = totals_.milli_ms[static_cast<size_t>(b)];
      v = std::min(v, m);
      m -= v;
      totals_.milli_ms[static_cast<size_t>(Bucket::kLost)] += v;
      // The same per type: from the allocation's types in proportion, and what rounding
      // left them short of from any type that has it (the types add up to `m`, so some do).
      int64_t left = v;
      auto move = [&](size_t t, int64_t want) {
        BucketTotals& of_type = totals_.by_type[t];
        auto& mt = of_type.milli_ms[static_cast<size_t>(b)];
        const int64_t part = std::min({want, mt, left});
        mt -= part;
        of_type.milli_ms[static_cast<size_t>(Bucket::kLost)] += part;
        left -= part;
      };
      Spread(a.split, v, [&](GpuTypeId t, int64_t part) { move(static_cast<size_t>(t), part); });
      for (const auto& [t, m] : a.split) move(static_cast<size_t>(t), left);
      for (size_t t = 0; t < totals_.by_type.size() && left > 0; ++t) move(t, left);
    };
    take(Bucket::kUseful, from_useful);
    take(Bucket::kIdleHeld, from_idle);
    take(Bucket::kLowValueBusy, from_low);
  }
  Classify();
}

void Ledger::Classify() {
  const Engine& e = *engine_;
  const Cluster& c = e.cluster();
  const ClusterState& st = e.state();
  const size_t types = c.catalog().size();
  rate_.fill(0);
  reserved_held_rate_ = 0;
  for (TypeRates& r : type_rates_) {
    r.rate.fill(0);
    r.reserved_held = 0;
  }
  alloc_rates_.clear();
  multi_split_.clear();
  shape_blocked_rate_.clear();

  // Waiting demand per GPU type: all of it, and the part that would fit but is held back.
  // Summed per fit class first (one pass over the queue), then spread over the class's types.
  struct ClassDemand {
    double density = 0;
    int64_t milli = 0, fits_blocked = 0, shape_blocked = 0;
    bool any_shape_blocked = false;  // a job of it is blocked by shape (of 0 milli: host-only)
    const Job* example = nullptr;    // null: no waiting job of the class
  };
  std::vector<ClassDemand> classes;
  double top_waiting_density = -1;
  for (const auto& [id, w] : e.last_cycle().waiting) {
    const Job& job = e.job(id);
    if (job.never_fits) continue;
    const size_t fc = static_cast<size_t>(job.fit_class);
    if (fc >= classes.size()) classes.resize(fc + 1);
    const FitClassShape& cs = e.fit_class_shape(job.fit_class);
    int64_t need = cs.milli;
    if (job.is_service()) need *= std::max(1, job.target_replicas - job.live_replicas());
    ClassDemand& cd = classes[fc];
    cd.milli += need;
    if (w.fits_now) cd.fits_blocked += need;  // the policy, not the hardware, holds it
    if (w.reason == WaitReason::kNoFit && !w.fits_now) {
      const bool by_count =
          cs.whole_gpus > 0 ? w.free_compatible >= cs.whole_gpus : w.free_compatible_milli >= need;
      if (by_count) {
        cd.shape_blocked += need;
        cd.any_shape_blocked = true;
      }
    }
    cd.density = std::max(cd.density, job.value_density);
    cd.example = &job;
    top_waiting_density = std::max(top_waiting_density, job.value_density);
  }
  std::vector<int64_t> demand(types, 0), fits_blocked(types, 0);
  std::map<std::string, int64_t> shape_blocked;
  for (const ClassDemand& cd : classes) {
    if (cd.example == nullptr) continue;
    for (GpuTypeId t : e.fit_class_shape(cd.example->fit_class).types) {
      demand[static_cast<size_t>(t)] += cd.milli;
      fits_blocked[static_cast<size_t>(t)] += cd.fits_blocked;
    }
    if (cd.any_shape_blocked) {
      const auto fc = static_cast<size_t>(cd.example->fit_class);
      if (fc >= class_descriptions_.size()) class_descriptions_.resize(fc + 1);
      std::string& d = class_descriptions_[fc];
      if (d.empty()) d = cd.example->s().shape.Describe(c.catalog());
      shape_blocked[d] += cd.shape_blocked;
    }
  }
  shape_blocked_rate_.assign(shape_blocked.begin(), shape_blocked.end());

  // Held capacity: useful / idle by utilisation; then low-value flags.
  struct Held {
    const Allocation* a;
    double density;
    int64_t milli;
    int64_t useful;
    GpuTypeId type;
    bool low = false;
  };
  std::vector<Held> held;
  held.reserve(e.allocations().size());
  // Replicas a policy keeps beyond what a service's current demand needs (its target is
  // above that: a forecast peak, warm spares, a scale-down window) are held on purpose:
  // their idle capacity is reserved headroom, up to their size, not idle_held.
  std::unordered_map<WorkloadId, int64_t> held_on_purpose;
  // A member of a service with variants serves what its service's routing gives it, not its
  // own demand curve (engine/variant_load.h): {served, ready capacity} requests/s.
  std::unordered_map<WorkloadId, std::pair<double, double>> member_load;
  for (const auto& [name, load] : VariantLoads(e))
    for (size_t v = 0; v < load.members.size(); ++v)
      if (load.members[v] != kNoWorkload)
        member_load[load.members[v]] = {load.Served(v), load.capacity[v]};
  for (WorkloadId id : e.services()) {
    const Job& j = e.job(id);
    if (j.phase == JobPhase::kCancelled || j.phase == JobPhase::kDone) continue;
    const auto member = member_load.find(id);
    const double rps = member != member_load.end() ? member->second.first : j.demand_rps;
    const int extra =
        std::min(j.live_replicas(), j.target_replicas) - j.s().realtime.ReplicasFor(rps);
    if (extra > 0) held_on_purpose[id] = extra * j.s().shape.TotalMilli(c.catalog());
  }
  // Ready replicas per service (each slowed by interference), for their utilisation.
  std::unordered_map<WorkloadId, double> ready;
  for (const auto& [aid, a] : e.allocations())
    if (e.job(a.workload).is_service() && a.ready_at <= e.now())
      ready[a.workload] += a.interference;
  for (const auto& [aid, a] : e.allocations()) {
    const Job& job = e.job(a.workload);
    const int64_t milli = a.placement.total_milli();
    if (a.placement.gpus.empty()) continue;
    double util = job.s().utilization;
    if (a.ready_at > e.now()) {
      util = 0;
    } else if (auto m = measured_.find(aid); m != measured_.end()) {
      util = std::clamp(m->second, 0.0, 1.0);
    } else if (auto m = member_load.find(a.workload); m != member_load.end()) {
      const auto [served, cap] = m->second;  // the capacity counts interference already
      util = cap > 0 ? std::min(1.0, served / cap) * a.interference : 0;
    } else if (job.is_service()) {
      const double cap = job.s().realtime.capacity_rps * ready[a.workload];
      util = cap > 0 ? std::min(1.0, job.demand_rps / cap) * a.interference : 0;
    } else {
      util *= a.interference;  // the share lost to contention computes nothing useful
    }
    const auto useful = static_cast<int64_t>(static_cast<double>(milli) * util + 0.5);
    held.push_back({&a, job.value_density, milli, useful, c.gpu_type(a.placement.gpus[0])});
  }
  if (top_waiting_density >= 0 && !held.empty()) {
    std::vector<std::pair<double, ClassDemand>> order;
    for (const ClassDemand& cd : classes)
      if (cd.example != nullptr) order.push_back({cd.density, cd});
    std::stable_sort(order.begin(), order.end(),
                     [](auto& x, auto& y) { return x.first > y.first; });
    std::vector<size_t> idx(held.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t x, size_t y) { return held[x].density < held[y].density; });
    for (const auto& [density, cd] : order) {
      int64_t covered = 0;
      for (size_t i : idx) {
        Held& h = held[i];
        if (h.density >= density) break;
        if (h.low || !cd.example->s().shape.AllowsType(h.type)) continue;
        h.low = true;
        covered += h.milli;
        if (covered >= cd.milli) break;
      }
    }
  }
  for (const Held& h : held) {
    int64_t idle = h.milli - h.useful;
    int64_t reserved = 0;
    if (auto it = held_on_purpose.find(h.a->workload); it != held_on_purpose.end()) {
      reserved = std::min(idle, it->second);
      it->second -= reserved;
      idle -= reserved;
    }
    reserved_held_rate_ += reserved;
    const Bucket busy = h.low ? Bucket::kLowValueBusy : Bucket::kUseful;
    const GpuTypeId one = OneTypeOf(c, h.a->placement);
    if (one != kNoGpuType) {
      AddRate(one, Bucket::kReservedHeadroom, reserved);
      AddRate(one, Bucket::kIdleHeld, idle);
      AddRate(one, busy, h.useful);
      if (const int slot = type_slot_[static_cast<size_t>(one)]; slot >= 0)
        type_rates_[static_cast<size_t>(slot)].reserved_held += reserved;
    } else {
      // Each type's part of the allocation's buckets, adding up exactly both ways.
      TypeSplit split = SplitOf(c, h.a->placement);
      const std::array<Bucket, 3> buckets = {Bucket::kReservedHeadroom, Bucket::kIdleHeld, busy};
      const auto parts = SplitExactly(WeightsOf(split), {reserved, idle, h.useful});
      for (size_t i = 0; i < split.size(); ++i) {
        for (size_t k = 0; k < buckets.size(); ++k)
          AddRate(split[i].first, buckets[k], parts[i][k]);
        if (const int slot = type_slot_[static_cast<size_t>(split[i].first)]; slot >= 0)
          type_rates_[static_cast<size_t>(slot)].reserved_held += parts[i][0];
      }
      multi_split_[h.a->id] = std::move(split);
    }
    alloc_rates_.push_back(
        {h.a->id, h.low ? 0 : h.useful, idle, h.low ? h.useful : 0, reserved, one});
  }

  // Free capacity per type.
  for (size_t t = 0; t < types; ++t) {
    const auto type = static_cast<GpuTypeId>(t);
    int64_t free = st.free_milli_of_type(type);
    AddRate(type, Bucket::kReservedHeadroom, st.reserved_milli_of_type(type));
    // Free capacity the policy declared it keeps for a forecast peak.
    const int64_t declared = std::min(free, e.declared_headroom(type));
    free -= declared;
    AddRate(type, Bucket::kReservedHeadroom, declared);
    AddRate(type, Bucket::kDown, st.down_milli_of_type(type));
    AddRate(type, Bucket::kForeign, st.foreign_milli_of_type(type));
    const int64_t blocked = std::min(free, fits_blocked[t]);
    free -= blocked;
    const int64_t stranded = std::min(free, std::max<int64_t>(0, demand[t] - fits_blocked[t]));
    free -= stranded;
    AddRate(type, Bucket::kBlocked, blocked);
    AddRate(type, Bucket::kStranded, stranded);
    AddRate(type, Bucket::kFreeNoDemand, free);
    if (const int slot = type_slot_[t]; slot >= 0) {
      TypeRates& r = type_rates_[static_cast<size_t>(slot)];
      r.free_declared = declared;
      r.free_blocked = blocked;
      r.free_stranded = stranded;
    }
  }
}

std::array<int64_t, kBucketCount> Ledger::type_rates_now(GpuTypeId t) const {
  const auto i = static_cast<size_t>(t);
  if (i >= type_slot_.size() || type_slot_[i] < 0) return {};
  return type_rates_[static_cast<size_t>(type_slot_[i])].rate;
}

std::vector<GpuBuckets> Ledger::GpuBucketsNow() const {
  const Engine& e = *engine_;
  const Cluster& c = e.cluster();
  const ClusterState& st = e.state();
  std::vector<GpuBuckets> out(static_cast<size_t>(c.gpu_count()));
  auto add = [&](GpuIndex g, Bucket b, int64_t milli) {
    out[static_cast<size_t>(g)].milli[static_cast<size_t>(b)] += milli;
  };
  // Held: each allocation's buckets as Classify counted them, per type as Classify split
  // them, then over the type's GPUs of the allocation by the share held on each.
  for (const AllocRates& r : alloc_rates_) {
    auto it = e.allocations().find(r.id);
    if (it == e.allocations().end()) continue;  // stopped since the last classification
    const Placement& p = it->second.placement;
    const Bucket busy = r.low > 0 ? Bucket::kLowValueBusy : Bucket::kUseful;
    const std::array<Bucket, 3> buckets = {Bucket::kReservedHeadroom, Bucket::kIdleHeld, busy};
    const TypeSplit split = SplitOf(c, p);
    const auto type_parts = SplitExactly(WeightsOf(split), {r.reserved, r.idle, r.useful + r.low});
    for (size_t i = 0; i < split.size(); ++i) {
      std::vector<GpuIndex> gpus;
      for (GpuIndex g : p.gpus)
        if (c.gpu_type(g) == split[i].first) gpus.push_back(g);
      const auto parts = SplitExactly(std::vector<int64_t>(gpus.size(), p.milli), type_parts[i]);
      for (size_t j = 0; j < gpus.size(); ++j)
        for (size_t k = 0; k < buckets.size(); ++k) add(gpus[j], buckets[k], parts[j][k]);
    }
  }
  // Free: what Classify split by amount per type, handed out in GPU order.
  std::vector<std::array<int64_t, 3>> left(c.catalog().size());
  for (const TypeRates& r : type_rates_)
    left[static_cast<size_t>(r.type)] = {r.free_declared, r.free_blocked, r.free_stranded};
  const std::array<Bucket, 3> by_amount = {Bucket::kReservedHeadroom, Bucket::kBlocked,
                                           Bucket::kStranded};
  for (NodeIndex n = 0; n < static_cast<NodeIndex>(c.node_count()); ++n) {
    const GpuIndex first = c.first_gpu(n);
    const int count = c.node(n).gpu_count;
    for (GpuIndex g = first; g < first + count; ++g) {
      if (!st.node(n).up) {
        add(g, Bucket::kDown, 1000);
        continue;
      }
      const GpuSlot& slot = st.gpu(g);
      int64_t free = 1000 - slot.used_milli;
      if (slot.foreign_whole()) {
        add(g, Bucket::kForeign, free);
        continue;
      }
      const int64_t foreign = std::min<int64_t>(free, slot.foreign_milli);
      add(g, Bucket::kForeign, foreign);
      free -= foreign;
      if (slot.reserved) {
        add(g, Bucket::kReservedHeadroom, free);
        continue;
      }
      std::array<int64_t, 3>& l = left[static_cast<size_t>(c.gpu_type(g))];
      for (size_t k = 0; k < l.size() && free > 0; ++k) {
        const int64_t x = std::min(free, l[k]);
        add(g, by_amount[k], x);
        l[k] -= x;
        free -= x;
      }
      add(g, Bucket::kFreeNoDemand, free);
    }
  }
  return out;
}

}  // namespace airtime
