// Daemon: its backend, chosen once at start (DaemonOptions::backend), and what the backend
// reports besides exits.
//
// local: this host's GPUs (NVML or --fake-gpus) as the cluster, processes through the shim
//   (Executor). GPU ids are device UUIDs.
// slurm: the nodes and GPUs Slurm reports (ClusterFromSlurm) as the cluster, Slurm jobs
//   through slurmrestd (SlurmActuator). GPU ids are "slurm:NODE:INDEX".
// After that choice the daemon drives either the same way: the engine decides, the actuator
// acts. A backend that picks GPU indices itself (Slurm) reports them (OnPlaced): where they
// differ from the engine's, the engine's allocation moves onto them, so the ledger and the
// next placements are per real GPU. GPUs that others' work holds (OnForeign) are taken out
// of the engine's free capacity and counted in the ledger's `foreign` line.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <set>

#include "airtime/gpu/host_cluster.h"
#include "airtime/gpu/inventory.h"
#include "airtime/server/daemon.h"
#include "airtime/slurm/rest_client.h"
#include "airtime/slurm/slurm_actuator.h"
#include "airtime/slurm/slurm_cluster.h"

namespace airtime {

namespace {

// Slurm's GPUs as the daemon's devices: no telemetry (Slurm does not report any).
class SlurmGpus final : public GpuInventory {
 public:
  explicit SlurmGpus(std::vector<GpuDevice> devices) : devices_(std::move(devices)) {}
  std::vector<GpuDevice> Devices() const override { return devices_; }
  std::vector<GpuSample> Sample(TimeMs now) const override {
    std::vector<GpuSample> out;
    for (const GpuDevice& d : devices_) out.push_back(GpuSample{d.uuid, now, {}, {}, {}, {}});
    return out;
  }

 private:
  std::vector<GpuDevice> devices_;
};

}  // namespace

Status Daemon::OpenLocalBackend(std::string* note) {
  auto inventory = OpenInventory(options_.fake_gpus, note);
  if (!inventory.ok()) return inventory.status();
  inventory_ = std::move(*inventory);
  devices_ = inventory_->Devices();
  std::string left_out;
  AIRTIME_RETURN_IF_ERROR(BuildCluster(&left_out));
  if (!left_out.empty()) *note += (note->empty() ? "" : "; ") + left_out;
  auto executor = Executor::Create();
  if (!executor.ok()) return executor.status();
  if (isolating()) (*executor)->UseCgroups(cgroups_);
  actuator_ = std::move(*executor);
  return OkStatus();
}

Status Daemon::OpenSlurmBackend(std::string* note) {
  const SlurmBackendOptions& so = options_.slurm;
  // The environment's (scripts/slurm-lab.sh's env.sh), each overridden by its option.
  slurm::SlurmConnectOptions connect;
  auto env = [](const char* name) {
    const char* v = std::getenv(name);
    return std::string(v ? v : "");
  };
  connect.rest.url = so.url.empty() ? env("SLURMRESTD_URL") : so.url;
  connect.rest.token = so.token.empty() ? env("SLURM_REST_TOKEN") : so.token;
  connect.rest.user = !so.user.empty()                  ? so.user
                      : !env("SLURM_REST_USER").empty() ? env("SLURM_REST_USER")
                                                        : env("USER");
  connect.scontrol.slurm_conf = so.conf.empty() ? env("SLURM_CONF") : so.conf;
  connect.api_version = env("SLURM_REST_API");  // "": the newest both sides speak
  if (connect.rest.url.empty())
    return FailedPrecondition("--backend slurm: no slurmrestd URL (--slurm-url or SLURMRESTD_URL)");
  if (connect.rest.token.empty())
    return FailedPrecondition("--backend slurm: no token (SLURM_REST_TOKEN)");
  if (connect.rest.user.empty())
    return FailedPrecondition("--backend slurm: no user (--slurm-user or SLURM_REST_USER)");
  auto client = slurm::ConnectSlurm(connect);
  if (!client.ok())
    return Status(client.status().code(), "--backend slurm: " + client.status().message());
  // The actuator's poller reads Slurm on its own thread, with its own client.
  auto reader = slurm::ConnectSlurm(connect);
  if (!reader.ok())
    return Status(reader.status().code(), "--backend slurm: " + reader.status().message());
  // The submitters beside the loop thread, each with a client of its own: a
  // cycle's starts are submitted concurrently (SlurmActuator::LaunchAll).
  std::vector<std::unique_ptr<slurm::SlurmClient>> submitters;
  slurm::SlurmConnectOptions same_version = connect;
  same_version.api_version = (*client)->ApiVersion();
  for (int i = 1; i < so.submitters; ++i) {
    auto submitter = slurm::ConnectSlurm(same_version);
    if (!submitter.ok())
      return Status(submitter.status().code(), "--backend slurm: " + submitter.status().message());
    submitters.push_back(std::move(*submitter));
  }
  auto nodes = (*client)->Nodes();
  if (!nodes.ok())
    return Status(nodes.status().code(), "--backend slurm: " + nodes.status().message());
  auto sc = slurm::ClusterFromSlurm(*nodes, "slurm");
  if (!sc.ok()) return Status(sc.status().code(), "--backend slurm: " + sc.status().message());
  cluster_ = std::make_unique<Cluster>(sc->cluster);
  const GpuCatalog& catalog = cluster_->catalog();
  for (size_t g = 0; g < cluster_->gpu_count(); ++g) {
    const auto& sg = sc->slurm_gpu[g];
    const GpuRef& ref = cluster_->gpu(static_cast<GpuIndex>(g));
    const Node& node = cluster_->node(ref.node);
    GpuDevice d;
    d.index = sg.index;
    d.uuid = slurm::SlurmGpuId(sg.node, sg.index);
    d.model = "slurm gpu:" + sg.type + " on " + sg.node;
    d.type = catalog.type(node.gpu_type).name;
    d.minor = sg.index;
    devices_.push_back(d);
    uuid_of_gpu_.push_back(d.uuid);
    gpu_of_uuid_[d.uuid] = static_cast<GpuIndex>(g);
  }
  inventory_ = std::make_unique<SlurmGpus>(devices_);
  // Tenants are not isolated by airtime here (Open turned it off): say why.
  isolation_missing_ = "the Slurm backend: Slurm runs every workload as the Slurm token's user";
  slurm::SlurmActuatorOptions ao;
  ao.poll_interval = std::chrono::milliseconds(std::max<DurationMs>(so.poll_interval, 10));
  ao.partition = so.partition;
  ao.slurm_url = connect.rest.url;
  ao.user = connect.rest.user;
  // The store's id marks this daemon's jobs (another daemon may use the same Slurm user).
  ao.owner = "store " + marks_.store_id.substr(0, 12);
  const std::string release = (*client)->SlurmRelease(), api = (*client)->ApiVersion();
  actuator_ = std::make_unique<slurm::SlurmActuator>(std::move(*client), std::move(*reader), *sc,
                                                     ao, std::move(submitters));
  *note = "Slurm " + release + " (API " + api + ") at " + connect.rest.url + ": " +
          std::to_string(nodes->size()) + " node(s)";
  if (!sc->note.empty()) *note += "; " + sc->note;
  return OkStatus();
}

// A run that ends while its placement waits to be moved: the engine never held its real
// GPUs (the ledger counted its time on those it chose), but its record says where it ran.
void Daemon::EndedBeforeItsPlacementMoved(RunRow& row) {
  auto w = std::find_if(placements_waiting_.begin(), placements_waiting_.end(),
                        [&](const WaitingPlacement& p) { return p.placed.run_id == row.id; });
  if (w == placements_waiting_.end()) return;
  row.gpus = w->placed.gpus;  // in Slurm's order
  placements_waiting_.erase(w);
  CountEndedUnmoved(row.id);
}

void Daemon::CountEndedUnmoved(int64_t run_id) {
  ++placements_unmoved_;
  placement_unmoved_why_ =
      "run " + std::to_string(run_id) + ": ended before the engine could move it onto Slurm's GPUs";
  std::cerr << "airtime server: the backend placed " << placement_unmoved_why_ << "\n";
}

void Daemon::RetryPlacements(TimeMs now) {
  std::vector<WaitingPlacement> waiting;
  waiting.swap(placements_waiting_);
  for (const WaitingPlacement& w : waiting) {
    auto it = runs_.find(w.placed.run_id);
    if (it == runs_.end() || it->second.stopping || it->second.allocation == kNoAllocation) {
      // Stopped while it waited (an exit takes its placement out first): the engine never
      // held its real GPUs; its record says where it ran.
      CountEndedUnmoved(w.placed.run_id);
      if (it != runs_.end()) {
        it->second.row.gpus = w.placed.gpus;
        (void)store_->UpdateRun(it->second.row);
      }
      continue;
    }
    OnPlaced(w.placed, now, w.since);
  }
  if (placements_waiting_.size() < 2) return;
  // Still waiting, two or more: they may wait on each other (Slurm swapped two fractions
  // that the engine placed the other way round, each GPU full without the other's move).
  // All together, as one move, or none.
  std::vector<std::pair<AllocationId, std::vector<GpuIndex>>> moves;
  std::vector<RunRec*> runs;
  for (const WaitingPlacement& w : placements_waiting_) {
    auto it = runs_.find(w.placed.run_id);
    if (it == runs_.end() || it->second.allocation == kNoAllocation) return;
    std::vector<GpuIndex> target;
    for (const std::string& id : w.placed.gpus) {
      auto g = gpu_of_uuid_.find(id);
      if (g == gpu_of_uuid_.end()) return;
      target.push_back(g->second);
    }
    moves.emplace_back(it->second.allocation, std::move(target));
    runs.push_back(&it->second);
  }
  ledger_->Advance(now);
  if (!engine_->Move(moves).ok()) return;
  for (size_t i = 0; i < runs.size(); ++i) {
    ++placements_moved_;
    runs[i]->row.gpus = placements_waiting_[i].placed.gpus;  // in Slurm's order
    (void)store_->UpdateRun(runs[i]->row);
  }
  placements_waiting_.clear();
}

void Daemon::OnPlaced(const Placed& placed, TimeMs now, TimeMs since) {
  auto it = runs_.find(placed.run_id);
  if (it == runs_.end() || it->second.stopping || it->second.allocation == kNoAllocation) return;
  RunRec& run = it->second;
  run.placed = true;
  auto sorted = [](std::vector<std::string> v) {
    std::sort(v.begin(), v.end());
    return v;
  };
  if (sorted(placed.gpus) == sorted(run.row.gpus)) {
    ++placements_as_decided_;
    return;
  }
  auto unmoved = [&](const std::string& why) {
    ++placements_unmoved_;
    placement_unmoved_why_ = "run " + std::to_string(run.row.id) + ": " + why;
    std::cerr << "airtime server: the backend placed " << placement_unmoved_why_ << "\n";
  };
  // Held, as far as the engine knows: most likely by a run that has ended in Slurm (its
  // GPUs given to this one) before airtime saw it end. Tried again after the next exits,
  // for a while.
  auto held = [&](const std::string& why) {
    if (now - since >= kPlacementPatience) return unmoved(why);
    placements_waiting_.push_back(WaitingPlacement{placed, since});
  };
  std::vector<GpuIndex> target;
  for (const std::string& id : placed.gpus) {
    auto g = gpu_of_uuid_.find(id);
    if (g == gpu_of_uuid_.end()) return unmoved("GPU " + id + " is not one the engine knows");
    target.push_back(g->second);
  }
  const Allocation* mine = engine_->allocation(run.allocation);
  if (mine == nullptr) return unmoved("no allocation");
  // The GPUs this run leaves, for runs the engine put on its new ones that the backend has
  // not placed yet: they trade (their own report moves them again if need be).
  std::vector<GpuIndex> freed;
  for (GpuIndex g : mine->placement.gpus)
    if (std::find(target.begin(), target.end(), g) == target.end()) freed.push_back(g);
  std::vector<std::pair<AllocationId, std::vector<GpuIndex>>> moves = {{run.allocation, target}};
  std::vector<RunRec*> traded;
  // A fraction moves alone: the runs already on its new GPU share it (Slurm's shards), and
  // Move refuses it when the engine counts no room there.
  const bool shares = mine->placement.mode == ShareMode::kFraction;
  for (auto& [id, other] : runs_) {
    if (shares) break;
    if (id == run.row.id || other.allocation == kNoAllocation) continue;
    const Allocation* a = engine_->allocation(other.allocation);
    if (a == nullptr) continue;
    std::vector<GpuIndex> gpus = a->placement.gpus;
    bool hit = false;
    for (GpuIndex& g : gpus) {
      if (std::find(target.begin(), target.end(), g) == target.end()) continue;
      if (other.placed || freed.empty())
        return held("GPU " + uuid_of_gpu_[static_cast<size_t>(g)] + " is held by run " +
                    std::to_string(id) + " as far as the engine knows");
      g = freed.back();
      freed.pop_back();
      hit = true;
    }
    if (!hit) continue;
    moves.emplace_back(other.allocation, std::move(gpus));
    traded.push_back(&other);
  }
  ledger_->Advance(now);  // the time so far is counted on the GPUs as they were
  if (Status st = engine_->Move(moves); !st.ok())
    return st.code() == StatusCode::kFailedPrecondition ? held(st.message())
                                                        : unmoved(st.message());
  ++placements_moved_;
  auto record = [&](RunRec& r, AllocationId a) {
    r.row.gpus.clear();
    for (GpuIndex g : engine_->allocation(a)->placement.gpus)
      r.row.gpus.push_back(uuid_of_gpu_[static_cast<size_t>(g)]);
    (void)store_->UpdateRun(r.row);
  };
  run.row.gpus = placed.gpus;  // in Slurm's order
  (void)store_->UpdateRun(run.row);
  for (RunRec* r : traded) record(*r, r->allocation);
}

void Daemon::OnForeign(std::vector<ForeignUse> foreign, TimeMs now) {
  ledger_->Advance(now);
  std::vector<Engine::ForeignShare> shares;
  for (const ForeignUse& f : foreign) {
    auto g = gpu_of_uuid_.find(f.gpu);
    if (g != gpu_of_uuid_.end()) shares.push_back({g->second, f.milli});
  }
  engine_->SetForeignShares(shares);
  foreign_ = std::move(foreign);
  Feed(Event::Timer(now));  // capacity changed: a cycle
}

void Daemon::OnUnusable(const std::vector<std::string>& gpus, TimeMs now) {
  std::set<NodeIndex> down;
  for (const std::string& id : gpus)
    if (auto g = gpu_of_uuid_.find(id); g != gpu_of_uuid_.end())
      down.insert(cluster_->gpu(g->second).node);
  // Each change is recorded for `airtime sim --from-data`; a failed write loses only that.
  auto record = [&](NodeIndex n, const char* state) {
    if (Status st = store_->AddNodeEvent({now, cluster_->node(n).name, state}); !st.ok())
      std::cerr << "airtime server: recording node " << cluster_->node(n).name << " " << state
                << ": " << st.message() << "\n";
  };
  for (NodeIndex n : down) {
    if (nodes_down_.count(n)) continue;
    record(n, "down");
    Feed(Event::NodeDown(now, n));
  }
  for (NodeIndex n : nodes_down_) {
    if (down.count(n)) continue;
    record(n, "up");
    Feed(Event::NodeUp(now, n));
  }
  nodes_down_ = std::move(down);
}

nlohmann::json Daemon::BackendView() const {
  nlohmann::json foreign = nlohmann::json::array();
  for (const ForeignUse& f : foreign_)
    foreign.push_back({{"gpu", f.gpu}, {"owner", f.owner}, {"share_milli", f.milli}});
  return {{"kind", options_.backend == Backend::kSlurm ? "slurm" : "local"},
          {"state", actuator_->Describe()},
          {"placements",
           {{"as_decided", placements_as_decided_},
            {"moved", placements_moved_},
            {"unmoved", placements_unmoved_},
            {"last_unmoved", placement_unmoved_why_}}},
          {"foreign", foreign}};
}

}  // namespace airtime
