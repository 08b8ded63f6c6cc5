#include "airtime/engine/job_table.h"

#include <utility>

namespace airtime {

const std::shared_ptr<const WorkloadSpec>& ForgottenSpec(WorkloadKind kind) {
  static const std::vector<std::shared_ptr<const WorkloadSpec>> specs = [] {
    std::vector<std::shared_ptr<const WorkloadSpec>> out;
    for (int k = 0; k < kWorkloadKindCount; ++k) {
      auto spec = std::make_shared<WorkloadSpec>();
      spec->kind = static_cast<WorkloadKind>(k);
      out.push_back(std::move(spec));
    }
    return out;
  }();
  return specs[static_cast<size_t>(kind)];
}

namespace {

// What every id of a freed chunk reads: an ended batch job with a nameless spec. Nothing
// writes it (the engine changes only jobs that have not ended).
Job* StandIns() {
  static Job* const chunk = [] {
    Job* jobs = new Job[JobTable::kChunk];
    for (size_t i = 0; i < JobTable::kChunk; ++i) {
      jobs[i].phase = JobPhase::kDone;
      jobs[i].spec = ForgottenSpec(WorkloadKind::kBatch);
    }
    return jobs;
  }();
  return chunk;
}

}  // namespace

Job& JobTable::push_back(Job job) {
  if ((size_ & (kChunk - 1)) == 0) {
    owned_.push_back(std::make_unique<Job[]>(kChunk));
    chunks_.push_back(owned_.back().get());
    released_.push_back(0);
  }
  Job& slot = (*this)[size_++];
  slot = std::move(job);
  return slot;
}

void JobTable::Release(size_t i) {
  const size_t c = i >> kChunkBits;
  if (++released_[c] < kChunk) return;
  chunks_[c] = StandIns();
  owned_[c].reset();
}

size_t JobTable::chunks_held() const {
  size_t n = 0;
  for (const auto& c : owned_) n += c != nullptr;
  return n;
}

}  // namespace airtime
