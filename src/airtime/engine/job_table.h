// JobTable: the engine's jobs by their dense ids (WorkloadId 0, 1, 2, ...), in chunks.
//
// A driver that runs for months (the daemon) ends far more jobs than it ever has live; the
// ids stay dense, but the memory of ended ones need not: once every job of a chunk has been
// released (Engine::Forget), the chunk is freed and its ids read a shared stand-in, an ended
// job (JobPhase::kDone) with a nameless spec. What an id of a freed chunk keeps is its share
// of one pointer. Indexing is two loads, the chunk and then the job; the simulator never
// releases anything and sees the same jobs at the same ids as a vector would give.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "airtime/engine/job.h"

namespace airtime {

class JobTable {
 public:
  static constexpr size_t kChunkBits = 6;
  static constexpr size_t kChunk = size_t{1} << kChunkBits;  // jobs per chunk

  size_t size() const { return size_; }
  Job& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const Job& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  // Appends `job` at id size() and returns it there.
  Job& push_back(Job job);
  Job& back() { return (*this)[size_ - 1]; }
  // Job `i` will not be read for itself again (its stand-in may be). Once all of its
  // chunk's jobs are, the chunk is freed. Each id is released at most once.
  void Release(size_t i);
  // Chunks whose memory is held (tests).
  size_t chunks_held() const;

 private:
  std::vector<Job*> chunks_;                   // kChunk jobs each: owned_'s, or the stand-ins
  std::vector<std::unique_ptr<Job[]>> owned_;  // null once freed
  std::vector<uint8_t> released_;              // per chunk: how many of its jobs
  size_t size_ = 0;
};

// The spec a released job's stand-in has (and Engine::Forget gives a forgotten job): one per
// kind, with no name.
const std::shared_ptr<const WorkloadSpec>& ForgottenSpec(WorkloadKind kind);

}  // namespace airtime
