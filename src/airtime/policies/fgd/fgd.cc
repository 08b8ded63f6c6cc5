#include "airtime/policies/fgd/fgd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {
namespace {

constexpr int64_t kUntrackedCpu = std::numeric_limits<int64_t>::max() / 4;

using ShapeKey = std::tuple<int64_t, int, int, std::vector<GpuTypeId>>;  // cpu, milli, count, types

ShapeKey KeyOf(const Shape& s) {
  if (s.gpu_count <= 0) return {s.cpu_milli, 0, 0, {}};
  const int milli = s.mode == ShareMode::kFraction ? s.gpu_milli : 1000;
  return {s.cpu_milli, milli, s.gpu_count, s.allowed_types};
}

void Normalise(std::vector<FgdTask>& tasks) {
  double sum = 0;
  for (const FgdTask& t : tasks) sum += t.weight;
  if (sum <= 0) return;
  for (FgdTask& t : tasks) t.weight /= sum;
}

}  // namespace

std::vector<FgdTask> TypicalTasks(const std::vector<Shape>& shapes, double coverage) {
  std::map<ShapeKey, int64_t> counts;
  for (const Shape& s : shapes) ++counts[KeyOf(s)];
  std::vector<std::pair<ShapeKey, int64_t>> order(counts.begin(), counts.end());
  // Most frequent first; equal counts: the larger shape first (the reference sorts its list
  // in reverse of (count, cpu, milli, gpus, type)).
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second > b.second;
    return a.first > b.first;
  });
  const double want = coverage * static_cast<double>(shapes.size());
  std::vector<FgdTask> tasks;
  double covered = 0;
  for (const auto& [key, count] : order) {
    if (covered >= want && !tasks.empty()) break;
    FgdTask t;
    std::tie(t.cpu_milli, t.gpu_milli, t.gpu_count, t.allowed) = key;
    t.weight = static_cast<double>(count);
    covered += static_cast<double>(count);
    tasks.push_back(std::move(t));
  }
  Normalise(tasks);
  return tasks;
}

double NodeFragmentation(const std::vector<int>& gpu_left, int64_t cpu_left, GpuTypeId type,
                         const std::vector<FgdTask>& tasks) {
  int total = 0;
  for (int l : gpu_left) total += l;
  if (total == 0) return 0;
  double m = 0;
  for (const FgdTask& t : tasks) {
    const bool access =
        t.allowed.empty() || std::find(t.allowed.begin(), t.allowed.end(), type) != t.allowed.end();
    if (t.gpu_milli == 0 || !access) {
      m += t.weight * total;
      continue;
    }
    int fit = 0, frag = 0;
    for (int l : gpu_left) {
      if (l >= t.gpu_milli) {
        ++fit;
      } else {
        frag += l;
      }
    }
    m += t.weight * ((fit >= t.gpu_count && cpu_left >= t.cpu_milli) ? frag : total);
  }
  return m;
}

// ---------------------------------------------------------------- FgdScore

struct FgdScore::State {
  std::vector<FgdTask> tasks;
  bool fixed = false;
  uint64_t epoch = 1;  // bumped whenever `tasks` change

  // Learning from the engine's workloads.
  size_t seen_jobs = 0;
  size_t learned_at = 0;
  std::vector<Shape> seen;

  // Per task, per GPU type: whether the task may run on that type.
  std::vector<std::vector<uint8_t>> access;
  uint64_t access_epoch = 0;

  // Per node: the state the cache was computed for, and the fragmentation before placement.
  struct NodeCache {
    uint64_t epoch = 0;
    int64_t cpu = -1;
    std::vector<int> left;
    uint32_t gen = 0;  // bumped whenever the node's state (or the task set) changed
    double before = 0;
    int whole = 0;  // GPUs wholly free
  };
  std::vector<NodeCache> nodes;
  // Per node, per fit class: the score and chosen GPU (offset on the node) for that shape.
  struct Entry {
    uint32_t gen = 0;
    double score = 0;
    int gpu = -1;
  };
  std::vector<std::vector<Entry>> entries;
  std::vector<int> scratch;
  std::vector<GpuIndex> chosen;

  void Learn(const Engine& engine, double coverage) {
    if (fixed) return;
    const size_t n = engine.job_count();
    if (n == seen_jobs) return;
    for (size_t i = seen_jobs; i < n; ++i)
      seen.push_back(engine.job(static_cast<WorkloadId>(i)).s().shape);
    seen_jobs = n;
    // Re-learn after every arrival at first, then geometrically less often: each re-learn
    // invalidates every cached node.
    if (seen.size() - learned_at >= std::max<size_t>(1, learned_at / 8)) {
      tasks = TypicalTasks(seen, coverage);
      learned_at = seen.size();
      ++epoch;
    }
  }

  void BuildAccess(size_t types) {
    if (access_epoch == epoch) return;
    access.assign(tasks.size(), std::vector<uint8_t>(types, 0));
    for (size_t k = 0; k < tasks.size(); ++k) {
      for (size_t t = 0; t < types; ++t) {
        const auto& a = tasks[k].allowed;
        access[k][t] =
            a.empty() || std::find(a.begin(), a.end(), static_cast<GpuTypeId>(t)) != a.end();
      }
    }
    access_epoch = epoch;
  }

  double Measure(const std::vector<int>& left, int64_t cpu, GpuTypeId type) const {
    int total = 0;
    for (int l : left) total += l;
    if (total == 0 || type < 0) return 0;
    const auto ti = static_cast<size_t>(type);
    double m = 0;
    for (size_t k = 0; k < tasks.size(); ++k) {
      const FgdTask& t = tasks[k];
      if (t.gpu_milli == 0 || !access[k][ti]) {
        m += t.weight * total;
        continue;
      }
      int fit = 0, frag = 0;
      for (int l : left) {
        if (l >= t.gpu_milli) {
          ++fit;
        } else {
          frag += l;
        }
      }
      m += t.weight * ((fit >= t.gpu_count && cpu >= t.cpu_milli) ? frag : total);
    }
    return m;
  }

  // Brings node `n`'s cache up to date with the engine's state.
  NodeCache& Node(NodeIndex n, const Engine& engine) {
    if (nodes.size() != engine.cluster().node_count()) {
      nodes.assign(engine.cluster().node_count(), NodeCache{});
      entries.assign(engine.cluster().node_count(), {});
    }
    BuildAccess(engine.catalog().size());
    const Cluster& cl = engine.cluster();
    const ClusterState& st = engine.state();
    const struct Node& node = cl.node(n);
    const NodeSummary& sum = st.node(n);
    scratch.resize(static_cast<size_t>(node.gpu_count));
    const GpuIndex first = cl.first_gpu(n);
    for (int i = 0; i < node.gpu_count; ++i) {
      const GpuSlot& g = st.gpu(first + i);
      scratch[static_cast<size_t>(i)] = (!sum.up || g.reserved) ? 0 : g.free_milli();
    }
    const int64_t cpu = node.cpu_milli > 0 ? sum.cpu_free : kUntrackedCpu;
    NodeCache& c = nodes[static_cast<size_t>(n)];
    if (c.epoch != epoch || c.cpu != cpu || c.left != scratch) {
      c.epoch = epoch;
      c.cpu = cpu;
      c.left = scratch;
      ++c.gen;
      c.before = Measure(c.left, c.cpu, node.gpu_type);
      c.whole = static_cast<int>(std::count(c.left.begin(), c.left.end(), 1000));
    }
    return c;
  }
};

FgdScore::FgdScore(Options options) : options_(options), state_(std::make_unique<State>()) {}
FgdScore::~FgdScore() = default;

void FgdScore::SetTypicalTasks(std::vector<FgdTask> tasks) {
  Normalise(tasks);
  state_->fixed = !tasks.empty();
  state_->tasks = std::move(tasks);
  state_->learned_at = 0;
  ++state_->epoch;
}

const std::vector<FgdTask>& FgdScore::typical_tasks() const { return state_->tasks; }

double FgdScore::Score(const Job& job, NodeIndex node, const Engine& engine) const {
  State& s = *state_;
  s.Learn(engine, options_.coverage);
  State::NodeCache& c = s.Node(node, engine);
  auto& row = s.entries[static_cast<size_t>(node)];
  const auto fc = static_cast<size_t>(job.fit_class);
  if (row.size() <= fc) row.resize(fc + 1);
  State::Entry& e = row[fc];
  if (e.gen == c.gen) return e.score;

  const Shape& shape = job.s().shape;
  const Cluster& cl = engine.cluster();
  const GpuTypeId type = cl.node(node).gpu_type;
  const GpuIndex first = cl.first_gpu(node);
  const int64_t cpu_after = c.cpu == kUntrackedCpu ? c.cpu : c.cpu - shape.cpu_milli;
  // keep_whole: under 0.5 (less than one quantized step), more the fewer GPUs are wholly free.
  const double whole_bonus =
      options_.quantize && options_.keep_whole && !c.left.empty()
          ? 0.4 * (1.0 - static_cast<double>(c.whole) / static_cast<double>(c.left.size()))
          : 0.0;
  auto transform = [&](double drop) {
    return options_.quantize ? std::trunc(100.0 / (1.0 + std::exp(-drop / 1000.0))) + whole_bonus
                             : drop;
  };
  std::vector<int>& after = s.scratch;
  e.gen = c.gen;
  e.gpu = -1;
  if (shape.gpu_count == 1 && shape.mode == ShareMode::kFraction && shape.gpu_milli < 1000) {
    // A shared workload: try each GPU that can take it (GPUs with equal free shares give the
    // same result; the lowest index stands for them), keep the best.
    const int n = static_cast<int>(c.left.size());
    for (int i = 0; i < n; ++i) {
      if (!engine.state().GpuTakes(shape, first + i)) continue;
      bool repeat = false;
      for (int j = 0; j < i && !repeat; ++j)
        repeat = c.left[static_cast<size_t>(j)] == c.left[static_cast<size_t>(i)] &&
                 engine.state().GpuTakes(shape, first + j);
      if (repeat) continue;
      after = c.left;
      after[static_cast<size_t>(i)] -= shape.gpu_milli;
      const double score = transform(c.before - s.Measure(after, cpu_after, type));
      if (e.gpu < 0 || score > e.score) {
        e.score = score;
        e.gpu = i;
      }
    }
    return e.score;
  }
  // Whole GPUs, MIG slices or host only: the GPUs the engine would choose.
  after = c.left;
  if (shape.gpu_count > 0) {
    s.chosen.clear();
    engine.state().SelectOnNode(shape, node, shape.gpu_count, &s.chosen);
    Placement p;
    p.gpus = s.chosen;
    engine.state().FillPlacement(shape, &p);
    for (GpuIndex g : s.chosen) after[static_cast<size_t>(g - first)] -= p.milli;
  }
  e.score = transform(c.before - s.Measure(after, cpu_after, type));
  return e.score;
}

bool FgdScore::SelectGpus(const Job& job, NodeIndex node, const Engine& engine,
                          std::vector<GpuIndex>* out) const {
  const Shape& shape = job.s().shape;
  if (!(shape.gpu_count == 1 && shape.mode == ShareMode::kFraction && shape.gpu_milli < 1000))
    return false;
  Score(job, node, engine);  // a cache hit when the engine just scored this node
  const State::Entry& e =
      state_->entries[static_cast<size_t>(node)][static_cast<size_t>(job.fit_class)];
  if (e.gpu < 0) return false;
  out->push_back(engine.cluster().first_gpu(node) + e.gpu);
  return true;
}

FgdScore* FindFgdScore(Policy& policy) {
  for (auto& scorer : policy.scores)
    if (auto* f = dynamic_cast<FgdScore*>(scorer.plugin.get())) return f;
  return nullptr;
}

void RegisterFgd(PolicyRegistry& registry) {
  registry.Register(
      "fgd",
      "arrival order, skip what does not fit, FGD placement (least growth of expected GPU "
      "fragmentation; ATC'23)",
      {"quantize", "coverage", "keep_whole"},
      [](const Cluster&, const PolicyParams& params) -> StatusOr<Policy> {
        auto quantize = params.GetDouble("quantize", 1);
        if (!quantize.ok()) return quantize.status();
        auto coverage = params.GetDouble("coverage", 0.95);
        if (!coverage.ok()) return coverage.status();
        if (*coverage <= 0 || *coverage > 1)
          return InvalidArgument("policy 'fgd': coverage must be in (0, 1]");
        auto keep_whole = params.GetDouble("keep_whole", 0);
        if (!keep_whole.ok()) return keep_whole.status();
        if (*keep_whole != 0 && *quantize == 0)
          return InvalidArgument(
              "policy 'fgd': keep_whole=1 needs quantize=1 (it breaks the quantized score's "
              "ties; the exact score has almost none)");
        FgdScore::Options o;
        o.quantize = *quantize != 0;
        o.keep_whole = *keep_whole != 0;
        o.coverage = *coverage;
        Policy p;
        p.name = "fgd";
        p.description = "arrival order with skipping, fragmentation-gradient-descent placement";
        p.queue_sort = std::make_unique<ArrivalOrder>();
        p.scores.emplace_back(std::make_unique<FgdScore>(o), 1.0);
        return p;
      });
}

}  // namespace airtime
