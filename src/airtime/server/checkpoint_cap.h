// What a workload's checkpoint directory holds, and the cap on it (docs/server.md "A full
// disk"). A workload that checkpoints without end would fill the data directory's file
// system by itself, and so pause every tenant's starts (--min-free-mib): the daemon measures
// the checkpoint directory of each workload that has a run, and ends one over the cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "airtime/base/status.h"

namespace airtime {

// The most entries (files, directories, links) one checkpoint directory may hold: a walk
// stops there, and the directory counts as over the cap. It bounds both the time of one
// look and the inodes one workload can take.
inline constexpr uint64_t kMaxCheckpointEntries = 100000;
// How deep its directories may nest: a walk holds one descriptor per level.
inline constexpr size_t kMaxCheckpointDepth = 64;

struct DirUsage {
  uint64_t bytes = 0;      // allocated on disk (st_blocks), so a sparse file counts what it uses
  uint64_t entries = 0;    // below the directory, itself not counted
  bool more = false;       // the walk stopped at its entry limit: there are more
  bool deep = false;       // the walk stopped at a directory nested deeper than the limit
  std::string unreadable;  // "PATH: ERROR" where the walk stopped at what its owner barred
  std::string failed;      // "PATH: ERROR" where it stopped on an error of the daemon's
};

// What `dir` holds, without following symbolic links (a link counts as itself). A directory
// that does not exist holds nothing; entries that vanish during the walk are skipped. Stops
// after `max_entries` entries (`more`), at a directory kMaxCheckpointDepth deep (`deep`), or
// at what it cannot read: `unreadable` when the workload barred it (a directory made
// unreadable must not hide what is below it; the directory itself a link or a file), `failed`
// on an error of the daemon's (out of descriptors, I/O), which says nothing of the workload.
DirUsage MeasureDir(const std::string& dir, uint64_t max_entries);

// Why `usage` of the checkpoint directory `dir` is over the cap (`cap_bytes`: 0 never caps
// bytes; the entry and depth limits always hold, and a directory that could not be read
// all through for the workload's doing is over; a `failed` walk is not), or "" when it is not.
// Names the directory and the figures, and the option that sets the cap.
std::string CheckpointOverCap(const std::string& dir, const DirUsage& usage, uint64_t cap_bytes);

// The message of a workload ended over its cap (`why`, from CheckpointOverCap), and whether a
// workload's (state, message) say it was ended over the cap of its own directory `dir` (not a
// service's other variant, ended with it): a restarted daemon removes such a directory if the
// daemon before it had not yet.
std::string CheckpointCapEnd(const std::string& why);
bool EndedOverCheckpointCap(const std::string& state, const std::string& message,
                            const std::string& dir);

// The cap when --max-checkpoint-mib is not given: half of the data directory's file system
// (its size, `total_bytes`), so that no one workload can fill it.
inline uint64_t DefaultCheckpointCap(uint64_t total_bytes) { return total_bytes / 2; }

}  // namespace airtime
