// FromData: a daemon's store (`airtime server --data DIR`) turned into the simulator's input,
// for `airtime sim --from-data DIR`: what the daemon actually saw, replayed under other
// policies, another cluster or other prices (docs/what-if.md).
//
// The store is opened read-only (store.h: Store::OpenReadOnly), so this works beside a
// running daemon and never changes what it reads. Everything in the store was sent by
// tenants: a workload whose submission cannot be read back, or whose name is not printable,
// is skipped or renamed with a warning that says which and why; a store that cannot be read
// is an error naming the file.
//
// Submissions are read back as the daemon read them: a service with model variants runs as
// its members (the rows index them), each class's demand is rebuilt from the members' stored
// demand and the classes' last rates (from_data_classes.h), and a job of a later submission
// that produces a variant is linked to it as the daemon linked it.
//
// Time: the replay's time 0 is the window's start (`since`, else the first daemon start or
// submission recorded); its end is `until`, else the latest moment the store records
// (a submission, a run's start or end, a demand sample, the ledger's last save, ...).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "airtime/base/status.h"
#include "airtime/base/time.h"
#include "airtime/config/cluster_yaml.h"
#include "airtime/model/interference.h"
#include "airtime/sim/sim_input.h"

namespace airtime {

// A moment of --since / --until: a UTC date and time ("2026-12-01", "2026-12-01 08:00",
// "2026-12-01T08:00:00Z") or a duration before `latest` ("7d": a week before it).
// InvalidArgument naming the text when it is neither.
StatusOr<TimeMs> ParseWindowTime(const std::string& text, TimeMs latest);

struct FromDataOptions {
  std::string since, until;  // ParseWindowTime's forms; "" : the store's extent
  // The families a submitted workload's `family` may name (null: the built-in Gavel table's).
  const InterferenceModel* families = nullptr;
};

// What actually happened in the window, recomputed from the store's rows.
struct RecordedWindow {
  TimeMs from = 0, to = 0;  // wall clock (ms since the epoch)
  size_t gpus = 0;          // GPUs of the cluster the daemon ran
  double installed_gpu_hours = 0;
  // GPU-hours its runs held within the window (GPUs x share x time, every run that started,
  // preempted and failed ones included).
  double allocated_gpu_hours = 0;
  size_t submitted = 0;                             // submitted within the window
  size_t completed = 0, failed = 0, cancelled = 0;  // ended within the window
  size_t unfinished = 0;                            // queued or running at the window's end
  // Completion value of the jobs that succeeded within the window (their value terms and
  // deadlines as submitted); services' value needs the requests served, which only the
  // daemon's ledger counts.
  double completion_value = 0;
  double allocation_rate() const {
    return installed_gpu_hours > 0 ? allocated_gpu_hours / installed_gpu_hours : 0;
  }
};

struct FromData {
  SimInput input;      // times relative to `origin`
  TimeMs origin = 0;   // the wall-clock time of the replay's time 0
  TimeMs end = 0;      // the wall-clock end of the window (the replay's horizon: end - origin)
  std::string policy;  // the policy the daemon ran (its last start up to `end`; "" unknown)
  bool recorded_cluster = false;  // input.cluster is the daemon's (else the caller must give one)
  RecordedWindow recorded;
  std::string ledger;  // the daemon's saved ledger (meta "ledger", ledger_record.h), as stored
  std::vector<std::string> warnings;  // workloads skipped or changed, and why
  std::string store_path;
};

// Reads the store in `dir` as one consistent snapshot and builds the replay's input. With
// `cluster` (a cluster file's), the replay runs on it instead of the daemon's recorded
// cluster; a store with no recorded cluster (before schema version 5) needs one.
StatusOr<FromData> LoadFromData(const std::string& dir, const FromDataOptions& options,
                                const ClusterFile* cluster = nullptr);

// "2xH100:8" / "h100x2:8": `count` more nodes of `gpus` GPUs of a catalogue type each, as
// --add-nodes takes it: COUNTxTYPE:GPUS (":GPUS" left out: 8). The nodes are named
// added-TYPE-0.. (lower case) and join the cluster's nodes; costs keep their entries.
Status AddNodes(const std::string& spec, SimInput* input);

// "H100=2.5": the hourly cost of one installed GPU of a type, replacing its cost model
// (GpuCost::per_hour), as --gpu-cost takes it.
Status OverrideGpuCost(const std::string& spec, SimInput* input);

}  // namespace airtime
