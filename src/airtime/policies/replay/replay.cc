#include "airtime/policies/replay/replay.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>
#include <utility>

#include "airtime/base/file_read.h"
#include "airtime/base/strings.h"
#include "airtime/engine/engine.h"
#include "airtime/policies/plugins/common_plugins.h"

namespace airtime {
namespace {

constexpr size_t kMaxScheduleBytes = size_t{256} << 20;

Status RowError(const std::string& path, int line, const std::string& field,
                const std::string& what) {
  return InvalidArgument("replay schedule " + path + ":" + std::to_string(line) + ": " + field +
                         ": " + what);
}

// Seconds >= 0 into milliseconds; nullopt when not a finite number >= 0.
std::optional<TimeMs> ParseSeconds(std::string_view s) {
  auto v = ParseDouble(s);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > 1e12) return std::nullopt;
  return static_cast<TimeMs>(std::llround(*v * 1000.0));
}

std::optional<int> ParseIndex(std::string_view s) {
  auto v = ParseDouble(s);
  if (!v || *v < 0 || *v > 1e6 || std::floor(*v) != *v) return std::nullopt;
  return static_cast<int>(*v);
}

// The schedule, shared by the policy's plug-ins: rows by workload, due rows by node.
class Schedule {
 public:
  explicit Schedule(std::vector<ReplayRow> rows) : rows_(std::move(rows)) {
    for (size_t i = 0; i < rows_.size(); ++i) {
      by_name_[rows_[i].job].push_back(i);
      times_.push_back(rows_[i].start);
      if (rows_[i].end != kNever) times_.push_back(rows_[i].end);
    }
    std::sort(times_.begin(), times_.end());
    times_.erase(std::unique(times_.begin(), times_.end()), times_.end());
  }

  const ReplayRow& row(size_t i) const { return rows_[i]; }

  // The rows of `job` (none when the schedule does not name it).
  const std::vector<size_t>& RowsOf(const Job& job) const {
    static const std::vector<size_t> kNone;
    const auto id = static_cast<size_t>(job.id);
    if (id >= cache_.size()) cache_.resize(id + 1, nullptr);
    if (cache_[id] == nullptr) {
      auto it = by_name_.find(job.s().name);
      cache_[id] = it == by_name_.end() ? &kNone : &it->second;
    }
    return *cache_[id];
  }

  static bool Due(const ReplayRow& r, TimeMs now) { return r.start <= now && now < r.end; }

  int DueOn(const Job& job, NodeIndex node, TimeMs now) const {
    int n = 0;
    for (size_t i : RowsOf(job)) n += row(i).node == node && Due(row(i), now);
    return n;
  }

  int DueAnywhere(const Job& job, TimeMs now) const {
    int n = 0;
    for (size_t i : RowsOf(job)) n += Due(row(i), now);
    return n;
  }

  // The first row start or end after `now`; kNever: none.
  TimeMs NextAfter(TimeMs now) const {
    auto it = std::upper_bound(times_.begin(), times_.end(), now);
    return it == times_.end() ? kNever : *it;
  }

 private:
  std::vector<ReplayRow> rows_;
  std::unordered_map<std::string, std::vector<size_t>> by_name_;
  std::vector<TimeMs> times_;
  mutable std::vector<const std::vector<size_t>*> cache_;  // by WorkloadId
};

// Live allocations of `job` on `node`.
int LiveOn(const Job& job, NodeIndex node, const Engine& engine) {
  int n = 0;
  for (AllocationId a : job.allocations) {
    const Allocation* alloc = engine.allocation(a);
    if (alloc != nullptr && !alloc->placement.gpus.empty() &&
        engine.cluster().gpu(alloc->placement.gpus.front()).node == node)
      ++n;
  }
  return n;
}

// A workload may use a node only while more of its rows there are due than it has runs there.
class ReplayFilter : public FilterPlugin {
 public:
  explicit ReplayFilter(std::shared_ptr<const Schedule> s) : s_(std::move(s)) {}
  std::string_view name() const override { return "replay"; }
  bool Allows(const Job& job, NodeIndex node, const Engine& engine) const override {
    return s_->DueOn(job, node, engine.now()) > LiveOn(job, node, engine);
  }
  // Each workload is allowed its own nodes: no two share a "does not fit" verdict.
  int FitClass(const Job& job) const override { return static_cast<int>(job.id) + 1; }

 private:
  std::shared_ptr<const Schedule> s_;
};

// On the row's GPUs when it gives them and they can take the shape now.
class ReplayGpus : public ScorePlugin {
 public:
  explicit ReplayGpus(std::shared_ptr<const Schedule> s) : s_(std::move(s)) {}
  std::string_view name() const override { return "replay"; }
  double Score(const Job&, NodeIndex, const Engine&) const override { return 0; }
  bool SelectGpus(const Job& job, NodeIndex node, const Engine& engine,
                  std::vector<GpuIndex>* out) const override {
    for (size_t i : s_->RowsOf(job)) {
      const ReplayRow& r = s_->row(i);
      if (r.node != node || !Schedule::Due(r, engine.now()) || r.gpus.empty()) continue;
      if (static_cast<int>(r.gpus.size()) != job.s().shape.gpu_count) continue;
      const bool free = std::all_of(r.gpus.begin(), r.gpus.end(), [&](GpuIndex g) {
        return engine.state().GpuTakes(job.s().shape, g);
      });
      if (!free) continue;
      out->insert(out->end(), r.gpus.begin(), r.gpus.end());
      return true;
    }
    return false;
  }

 private:
  std::shared_ptr<const Schedule> s_;
};

// A service runs as many replicas as it has rows due.
class ReplayScale : public ScalePlugin {
 public:
  explicit ReplayScale(std::shared_ptr<const Schedule> s) : s_(std::move(s)) {}
  std::string_view name() const override { return "replay"; }
  int TargetReplicas(const Job& service, const Engine& engine) const override {
    return s_->DueAnywhere(service, engine.now());
  }

 private:
  std::shared_ptr<const Schedule> s_;
};

// Stops runs whose rows have ended (more runs on a node than rows due there), and asks for
// a cycle at the next row's start or end.
class ReplayClock : public CyclePlugin {
 public:
  explicit ReplayClock(std::shared_ptr<const Schedule> s) : s_(std::move(s)) {}
  std::string_view name() const override { return "replay"; }
  void BeforeAllocate(Engine& engine) override {
    const TimeMs now = engine.now();
    std::vector<AllocationId> stop;
    for (const auto& [id, alloc] : engine.allocations()) {
      if (alloc.placement.gpus.empty()) continue;
      const Job& job = engine.job(alloc.workload);
      const NodeIndex node = engine.cluster().gpu(alloc.placement.gpus.front()).node;
      // The newest runs beyond the rows due go: allocations() is in id (start) order, so
      // count this one's rank among the job's runs on the node.
      int rank = 0;
      for (AllocationId a : job.allocations) {
        if (a == id) break;
        const Allocation* other = engine.allocation(a);
        rank += other != nullptr && !other->placement.gpus.empty() &&
                engine.cluster().gpu(other->placement.gpus.front()).node == node;
      }
      if (rank >= s_->DueOn(job, node, now)) stop.push_back(id);
    }
    for (AllocationId id : stop) engine.Preempt(id, "replay: its observed run ended here");
    if (const TimeMs next = s_->NextAfter(now); next != kNever) engine.WakeAt(next);
  }

 private:
  std::shared_ptr<const Schedule> s_;
};

}  // namespace

StatusOr<std::vector<ReplayRow>> ParseReplaySchedule(const std::string& text,
                                                     const std::string& path,
                                                     const Cluster& cluster,
                                                     const std::vector<WorkloadSpec>* workloads) {
  std::unordered_map<std::string, NodeIndex> nodes;
  for (size_t n = 0; n < cluster.node_count(); ++n)
    nodes[cluster.node(static_cast<NodeIndex>(n)).name] = static_cast<NodeIndex>(n);
  std::unordered_map<std::string, const WorkloadSpec*> known;
  if (workloads != nullptr)
    for (const WorkloadSpec& w : *workloads) known[w.name] = &w;

  std::vector<ReplayRow> rows;
  int line_no = 0;
  bool first = true;
  for (std::string_view line : Split(text, '\n')) {
    ++line_no;
    line = Trim(line);
    if (line.empty() || line.front() == '#') continue;
    auto f = Split(line, ',');
    for (auto& x : f) x = Trim(x);
    if (first && f[0] == "job") {  // the header
      first = false;
      continue;
    }
    first = false;
    if (f.size() < 4 || f.size() > 5)
      return RowError(
          path, line_no, "row",
          "expected job,start_s,end_s,node[,gpus], got " + std::to_string(f.size()) + " field(s)");
    ReplayRow r;
    r.line = line_no;
    r.job = std::string(f[0]);
    if (r.job.empty()) return RowError(path, line_no, "job", "empty");
    const WorkloadSpec* spec = nullptr;
    if (workloads != nullptr) {
      auto it = known.find(r.job);
      if (it == known.end())
        return RowError(path, line_no, "job",
                        "'" + r.job + "' is not a workload of this replay (check the name)");
      spec = it->second;
    }
    auto start = ParseSeconds(f[1]);
    if (!start)
      return RowError(path, line_no, "start_s",
                      "expected seconds (a number >= 0), got '" + std::string(f[1]) + "'");
    r.start = *start;
    if (f[2] != "none") {
      auto end = ParseSeconds(f[2]);
      if (!end)
        return RowError(
            path, line_no, "end_s",
            "expected seconds (a number >= 0) or none, got '" + std::string(f[2]) + "'");
      if (*end < r.start)
        return RowError(path, line_no, "end_s",
                        std::string(f[2]) + " is before start_s " + std::string(f[1]));
      r.end = *end;
    }
    auto node = nodes.find(std::string(f[3]));
    if (node == nodes.end())
      return RowError(path, line_no, "node",
                      "'" + std::string(f[3]) + "' is not a node of cluster " + cluster.name());
    r.node = node->second;
    if (f.size() == 5 && !f[4].empty()) {
      const Node& n = cluster.node(r.node);
      for (std::string_view g : Split(f[4], ';')) {
        auto idx = ParseIndex(Trim(g));
        if (!idx || *idx >= n.gpu_count)
          return RowError(path, line_no, "gpus",
                          "'" + std::string(Trim(g)) + "' is not a GPU index of node " + n.name +
                              " (0-" + std::to_string(n.gpu_count - 1) + ")");
        const GpuIndex gi = cluster.first_gpu(r.node) + *idx;
        if (std::find(r.gpus.begin(), r.gpus.end(), gi) != r.gpus.end())
          return RowError(path, line_no, "gpus", "GPU " + std::to_string(*idx) + " given twice");
        r.gpus.push_back(gi);
      }
      if (spec != nullptr && spec->shape.gpu_count > 0 &&
          static_cast<int>(r.gpus.size()) != spec->shape.gpu_count)
        return RowError(path, line_no, "gpus",
                        std::to_string(r.gpus.size()) + " given, workload " + r.job + " asks for " +
                            std::to_string(spec->shape.gpu_count));
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

StatusOr<std::vector<ReplayRow>> LoadReplaySchedule(const std::string& path, const Cluster& cluster,
                                                    const std::vector<WorkloadSpec>* workloads) {
  auto text = ReadFileBounded(path, kMaxScheduleBytes, "replay schedule");
  if (!text.ok()) return text.status();
  return ParseReplaySchedule(*text, path, cluster, workloads);
}

Policy MakeReplayPolicy(std::vector<ReplayRow> rows) {
  auto s = std::make_shared<const Schedule>(std::move(rows));
  Policy p;
  p.name = "replay";
  p.description = "an observed schedule: each run at its observed time and node";
  p.queue_sort = std::make_unique<ArrivalOrder>();
  p.filters.push_back(std::make_unique<ReplayFilter>(s));
  p.scores.emplace_back(std::make_unique<ReplayGpus>(s), 1.0);
  p.scale = std::make_unique<ReplayScale>(s);
  p.cycle.push_back(std::make_unique<ReplayClock>(s));
  return p;
}

void RegisterReplay(PolicyRegistry& registry) {
  registry.Register(
      "replay",
      "an observed schedule (schedule=FILE: job,start_s,end_s,node[,gpus]): each run at its "
      "observed time on its observed node, nothing else; to count a real run's value",
      {"schedule"},
      [](const Cluster& cluster, const PolicyParams& params) -> StatusOr<Policy> {
        const std::string path = params.GetString("schedule", "");
        if (path.empty())
          return InvalidArgument(
              "policy 'replay' needs its schedule: replay:schedule=FILE (a CSV of "
              "job,start_s,end_s,node[,gpus])");
        auto rows = LoadReplaySchedule(path, cluster, params.workloads);
        if (!rows.ok()) return rows.status();
        return MakeReplayPolicy(std::move(*rows));
      },
      /*compared=*/false);
}

}  // namespace airtime
