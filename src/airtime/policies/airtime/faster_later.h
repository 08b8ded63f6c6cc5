// FasterLater: a job does not start on a slow GPU type when a faster type it may use frees
// soon enough that it would finish earlier there. Which type a job runs on can matter as
// much as when it starts (Gavel's point): a 10-hour job that starts now on V100s ends
// later than the same job started in two hours on A100s.
//
// For the placement the engine chose, the job's end if started now (EndIfStartedAt) is
// compared with its end on every node of a faster type it allows that could host it,
// started when enough GPUs of that node are expected free: now, or the expected end of the
// work that holds them (never for service replicas or held GPUs). If some faster node
// would finish it strictly sooner, the job waits this cycle; its explanation names both
// ends (the end of the work holding that node is itself an event: the engine looks again
// then). A node already free is not waited for: the engine had its reasons not to choose it. The
// node is not reserved: when it frees, the job takes its turn in the queue like any other, and if
// the node goes to other work the comparison is made again from the new expected ends. Within a
// cycle a job held for a node counts as taking it until it would end there, so the jobs after it in
// the queue do not all wait for the same GPUs. Whole GPUs on one node only (fractions, MIG slices
// and gangs spread over nodes start as placed).
//
// Two modes. kSooner holds a job whenever a faster type would finish it sooner (the
// `faster_later=on` setting). kMoreValue holds only work whose value decays after a
// deadline, and only when the faster type would earn it more: the slow placement ends past
// the deadline and the faster one ends before it, or less late (`faster_later=deadlines`,
// the default). Work that earns the same whenever it ends is never held in that mode.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "airtime/engine/plugins.h"

namespace airtime {

class FasterLater : public PermitPlugin {
 public:
  enum class Mode { kSooner, kMoreValue };
  explicit FasterLater(Mode mode = Mode::kSooner) : mode_(mode) {}
  std::string_view name() const override { return "faster-later"; }
  bool Permit(const Job& job, const Placement& placement, const Engine& engine) override;
  // Whether it would hold `job` started on `node`'s GPU type (preemption makes no room
  // there: the job would wait for the faster node all the same).
  bool RefusesNode(const Job& job, NodeIndex node, const Engine& engine) const override;
  std::string WhyHeld(const Job& job, const Engine& engine) const override;

 private:
  // The faster node the job is better off waiting for than starting now on GPUs of speed
  // `here` (node < 0: none), with its ends and worths.
  struct Later {
    NodeIndex node = -1;
    TimeMs at = kNever, end = kNever, end_now = kNever;
    double speed = 0, worth = 0, worth_now = 0;
  };
  // Whether the mode holds this job at all (whole GPUs, not a service; in kMoreValue only
  // work with a cost of delay).
  bool Considers(const Job& job) const;
  Later FindLater(const Job& job, double here, const Engine& engine) const;
  // When each GPU is expected free (computed once a cycle, when first needed; a job held
  // for a node counts as taking it until it would end there).
  std::vector<TimeMs>& GpuFree(const Engine& engine) const;

  Mode mode_;
  mutable uint64_t free_cycle_ = ~uint64_t{0};
  uint64_t why_cycle_ = ~uint64_t{0};
  mutable std::vector<TimeMs> gpu_free_;
  // RefusesNode's answers per GPU type (-1: not yet known) for one job in one cycle.
  mutable WorkloadId memo_job_ = kNoWorkload;
  mutable uint64_t memo_cycle_ = ~uint64_t{0};
  mutable std::vector<int8_t> memo_;
  std::unordered_map<WorkloadId, std::string> why_;  // this cycle's holds
};

}  // namespace airtime
