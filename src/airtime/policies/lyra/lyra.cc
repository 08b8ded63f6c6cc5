#include "airtime/policies/lyra/lyra.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "airtime/base/strings.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"
#include "airtime/policies/plugins/victims.h"
#include "airtime/policies/static/static_partition.h"

namespace airtime {
namespace {

constexpr int kInference = 0;

struct LyraState {
  std::vector<int> pools;          // per node: 0 inference, 1 training
  std::vector<char> loaned;        // per node: an inference server on loan to training
  int reserve = 0;                 // idle inference servers per GPU type kept off loan
  DurationMs loan_after = 0;       // how long a server must have been idle before its loan
  std::vector<TimeMs> idle_since;  // per node: since when it holds no replica (kNever: serving)

  bool inference(NodeIndex n) const { return pools[static_cast<size_t>(n)] == kInference; }
  bool on_loan(NodeIndex n) const { return loaned[static_cast<size_t>(n)] != 0; }
};
using State = std::shared_ptr<LyraState>;

// Services first, then arrival.
class LyraOrder : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "lyra-services-first"; }
  QueueKey Key(const Job& job, const Engine&) const override {
    if (job.is_service()) return {0, static_cast<double>(job.queued_since)};
    return {1, static_cast<double>(job.submitted)};
  }
};

// Services on inference servers off loan; other work on training servers, and preemptible
// work also on loaned ones.
class LyraFilter : public FilterPlugin {
 public:
  explicit LyraFilter(State s) : s_(std::move(s)) {}
  std::string_view name() const override { return "lyra-loans"; }
  bool Allows(const Job& job, NodeIndex n, const Engine&) const override {
    if (!s_->inference(n)) return !job.is_service();
    if (job.is_service()) return !s_->on_loan(n);
    return s_->on_loan(n) && job.s().preemptible;
  }
  int FitClass(const Job& job) const override {
    return job.is_service() ? 0 : job.s().preemptible ? 1 : 2;
  }

 private:
  State s_;
};

// Best fit; offline work prefers its own pool to loaned servers.
class LyraScore : public ScorePlugin {
 public:
  explicit LyraScore(State s) : s_(std::move(s)) {}
  std::string_view name() const override { return "lyra-home-then-bestfit"; }
  double Score(const Job& job, NodeIndex n, const Engine& engine) const override {
    const double home = !job.is_service() && !s_->inference(n) ? 10.0 : 0.0;
    return home + bestfit_.Score(job, n, engine);
  }

 private:
  State s_;
  BestFitScore bestfit_;
};

// Puts idle inference servers on loan at the start of each cycle.
class LyraLoans : public CyclePlugin {
 public:
  explicit LyraLoans(State s) : s_(std::move(s)) {}
  std::string_view name() const override { return "lyra-loan"; }
  void BeforeAllocate(Engine& engine) override {
    const Cluster& c = engine.cluster();
    std::vector<char> serving(c.node_count(), 0);
    for (const auto& [id, a] : engine.allocations())
      if (engine.job(a.workload).is_service())
        for (GpuIndex g : a.placement.gpus) serving[static_cast<size_t>(c.gpu(g).node)] = 1;
    std::vector<const Job*> waiting;
    for (WorkloadId id : engine.queue())
      if (engine.job(id).is_service()) waiting.push_back(&engine.job(id));
    std::map<GpuTypeId, int> kept;
    for (size_t i = 0; i < c.node_count(); ++i) {
      const auto n = static_cast<NodeIndex>(i);
      TimeMs& since = s_->idle_since[i];
      since = serving[i] ? kNever : std::min(since, engine.now());
      if (!s_->inference(n) || s_->on_loan(n) || serving[i] || !engine.state().node(n).up) continue;
      if (engine.now() - since < s_->loan_after) {
        engine.WakeAt(since + s_->loan_after);
        continue;
      }
      bool wanted = false;
      for (const Job* w : waiting) wanted |= NodeCouldHost(engine, w->s().shape, n);
      int& k = kept[c.node(n).gpu_type];
      if (wanted || k < s_->reserve) {
        ++k;
        continue;
      }
      s_->loaned[i] = 1;
    }
  }

 private:
  State s_;
};

// Takes loaned servers back, cheapest first, when a service replica finds no room.
class LyraReclaim : public PreemptPlugin {
 public:
  explicit LyraReclaim(State s) : s_(std::move(s)) {}
  std::string_view name() const override { return "lyra-reclaim"; }
  bool MakeRoom(const Job& job, Engine& engine) override {
    if (!job.is_service() || job.never_fits) return false;
    const Cluster& c = engine.cluster();
    bool reclaimed = false;
    while (true) {
      // Guests per loaned server, and what preempting them all would cost.
      std::map<NodeIndex, std::set<AllocationId>> guests;
      for (const auto& [id, a] : engine.allocations())
        for (GpuIndex g : a.placement.gpus)
          if (s_->on_loan(c.gpu(g).node)) guests[c.gpu(g).node].insert(id);
      NodeIndex best = -1;
      double best_cost = 0;
      for (size_t i = 0; i < c.node_count(); ++i) {
        const auto n = static_cast<NodeIndex>(i);
        if (!s_->on_loan(n) || !NodeCouldHost(engine, job.s().shape, n)) continue;
        double cost = 0;
        bool reclaimable = true;
        for (AllocationId id : guests[n]) {
          const Allocation& a = *engine.allocation(id);
          const Job& guest = engine.job(a.workload);
          reclaimable &= !guest.is_service() && guest.s().preemptible;
          cost += PreemptionCost(engine, a);
        }
        if (reclaimable && (best < 0 || cost < best_cost)) {
          best = n;
          best_cost = cost;
        }
      }
      if (best < 0) return reclaimed;
      s_->loaned[static_cast<size_t>(best)] = 0;
      reclaimed = true;
      char why[192];
      std::snprintf(why, sizeof why,
                    "lyra: inference server %s reclaimed for '%s' (server preemption cost "
                    "%.0f GPU-s)",
                    c.node(best).name.c_str(), job.s().name.c_str(), best_cost);
      for (AllocationId id : guests[best]) engine.Preempt(id, why);
      if (engine.FitsNow(job)) return true;
    }
  }

 private:
  State s_;
};

}  // namespace

void RegisterLyra(PolicyRegistry& registry) {
  registry.Register(
      "lyra",
      "Lyra (EuroSys'23): idle inference servers loaned to preemptible offline work, reclaimed "
      "at least preemption cost when services need them",
      {"inference_share", "reserve", "loan_after"},
      [](const Cluster& cluster, const PolicyParams& params) -> StatusOr<Policy> {
        auto share = params.GetDouble("inference_share", 0.5);
        if (!share.ok()) return share.status();
        if (*share < 0 || *share > 1)
          return InvalidArgument("policy 'lyra': inference_share must be within [0, 1]");
        auto reserve = params.GetDouble("reserve", 0);
        if (!reserve.ok()) return reserve.status();
        if (*reserve < 0 || *reserve != std::floor(*reserve))
          return InvalidArgument("policy 'lyra': reserve must be a whole number >= 0");
        auto loan_after = ParseDurationMs(params.GetString("loan_after", "0"));
        if (!loan_after || *loan_after < 0)
          return InvalidArgument("policy 'lyra': loan_after must be a duration (90s, 10m)");
        auto s = std::make_shared<LyraState>();
        s->loan_after = *loan_after;
        s->idle_since.assign(cluster.node_count(), kNever);
        s->pools = AssignPools(cluster, *share);
        s->loaned.assign(cluster.node_count(), 0);
        s->reserve = static_cast<int>(*reserve);
        Policy p;
        p.name = "lyra";
        p.description = "inference servers loaned to training, reclaimed on demand";
        p.queue_sort = std::make_unique<LyraOrder>();
        p.filters.push_back(std::make_unique<LyraFilter>(s));
        p.scores.emplace_back(std::make_unique<LyraScore>(s), 1.0);
        p.preempt = std::make_unique<LyraReclaim>(s);
        p.cycle.push_back(std::make_unique<LyraLoans>(s));
        return p;
      });
}

}  // namespace airtime
