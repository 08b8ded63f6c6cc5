// Daemon: isolating tenants' workloads (see daemon.h, Isolation, and docs/server.md "Trust
// model"). When isolating, every run of a workload with a command:
//   - runs as its tenant's user (tenant_users.h), never root or the daemon's user;
//   - runs in its own devices cgroup that allows the basic devices and its own GPUs' nodes
//     only, and its own freezer cgroup that the executor kills whole (run_cgroup.h);
//   - finds the data directory closed to it: the daemon's umask is 077, DATA, DATA/runs and
//     DATA/checkpoints are 0711, a run directory is 0711 (its logs and telemetry file are
//     the run user's, 0600), a checkpoint directory is the run user's, 0700.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "airtime/api/tokens.h"
#include "airtime/exec/run_cgroup.h"
#include "airtime/exec/run_files.h"
#include "airtime/server/daemon.h"
#include "airtime/store/store_marks.h"

namespace airtime {

namespace fs = std::filesystem;

Status Daemon::SetUpIsolation() {
  if (options_.isolation == Isolation::kOff) return OkStatus();
  auto cgroups =
      std::make_shared<RunCgroups>(options_.cgroup_root, CgroupParentFor(options_.data_dir));
  if (Status st = cgroups->Check(); !st.ok()) {
    if (options_.isolation == Isolation::kRequired)
      return FailedPrecondition("cannot isolate tenants: " + st.message());
    isolation_missing_ = st.message();
    return OkStatus();
  }
  auto users = TenantUsers::Load(options_.data_dir + "/" + kTenantUsersFileName);
  if (!users.ok()) return users.status();
  tenant_users_ = std::move(*users);
  cgroups_ = std::move(cgroups);
  return OkStatus();
}

// Closes a data directory that an older daemon (or an unisolated start) left open. Without
// isolation the directory may be any of the operator's (`--data .`): only what the daemon
// keeps there is closed, not the directory itself or the operator's other files.
void Daemon::SecureDataDir() {
  const fs::path data = options_.data_dir;
  std::error_code ec;
  if (isolating()) chmod(data.c_str(), 0711);
  for (const char* sub : {"runs", "checkpoints"}) {
    fs::create_directories(data / sub, ec);
    chmod((data / sub).c_str(), 0711);
  }
  const uid_t self = geteuid();
  auto own = [&](const fs::path& p, mode_t mode) {
    struct stat st {};
    if (lstat(p.c_str(), &st) == 0 && st.st_uid == self && !S_ISLNK(st.st_mode))
      chmod(p.c_str(), mode);
  };
  const auto daemons = [](const std::string& name) {
    for (const char* f : {kTokensFileName, kLockFileName, kAddressFileName, kTenantUsersFileName,
                          kStoreMarksFile, kStoreLossLog})
      if (name == f) return true;
    return name.rfind(kStoreFileName, 0) == 0 ||
           name.rfind(std::string(kStoreMarksFile) + ".", 0) == 0;
  };
  for (const auto& e : fs::directory_iterator(data, ec)) {
    if (!e.is_regular_file(ec)) continue;
    if (isolating() || daemons(e.path().filename().string()))
      own(e.path(), 0600);  // store, tokens, lock, address, ...
  }
  for (const auto& run : fs::directory_iterator(data / "runs", ec)) {
    own(run.path(), 0711);
    for (const auto& f : fs::directory_iterator(run.path(), ec)) own(f.path(), 0600);
  }
  for (const auto& ck : fs::directory_iterator(data / "checkpoints", ec)) own(ck.path(), 0700);
}

// What can be known about a workload before it is accepted: its workdir, and when
// isolating, the user it would run as and whether that user can enter the workdir.
Status Daemon::CheckRunnable(const WorkloadSpec& spec) const {
  if (spec.exec.empty()) return OkStatus();
  const auto where = [&](std::string_view field) {
    return spec.SourceOf(field) + ": workload '" + spec.name + "': ";
  };
  const std::string& workdir = spec.exec.workdir;
  std::error_code ec;
  if (!workdir.empty() && !fs::is_directory(workdir, ec))
    return InvalidArgument(where("workdir") + "field 'workdir': '" + workdir +
                           "' does not exist (or is not a directory)");
  if (!isolating()) return OkStatus();
  auto user = tenant_users_.Resolve(spec.tenant);
  if (!user.ok()) return FailedPrecondition(where("tenant") + user.status().message());
  // Without a workdir the process starts in the daemon's working directory.
  const std::string dir = workdir.empty() ? fs::current_path(ec).string() : workdir;
  if (Status st = CheckSearchableBy(dir, *user); !st.ok())
    return InvalidArgument(where("workdir") + "field 'workdir': '" + dir + "'" +
                           (workdir.empty() ? " (the daemon's working directory)" : "") +
                           " is not accessible: " + st.message());
  return OkStatus();
}

Status Daemon::PrepareIsolatedLaunch(const WorkloadRec& w, const RunRow& run, LaunchRequest* req) {
  if (!isolating()) return OkStatus();
  auto user = tenant_users_.Resolve(w.row.tenant);
  if (!user.ok()) return user.status();
  req->user = *user;
  req->run_id = run.id;
  req->env.insert(req->env.begin(),
                  {{"HOME", user->home}, {"USER", user->name}, {"LOGNAME", user->name}});
  // The run directory: root's, enterable (the run user opens its logs and telemetry by name).
  std::error_code ec;
  fs::create_directories(run.run_dir, ec);
  if (ec) return Internal("mkdir -p " + run.run_dir + ": " + ec.message());
  if (chmod(run.run_dir.c_str(), 0711) != 0)
    return Internal(ErrnoMessage("chmod " + run.run_dir, errno));
  // The checkpoint directory: the run user's alone.
  const std::string ckpt = CheckpointDir(w.row.id);
  fs::create_directories(ckpt, ec);
  if (ec) return Internal("mkdir -p " + ckpt + ": " + ec.message());
  if (lchown(ckpt.c_str(), user->uid, user->gid) != 0 || chmod(ckpt.c_str(), 0700) != 0)
    return Internal(ErrnoMessage("chown " + ckpt, errno));
  // Its GPUs' device nodes, and the ones every CUDA process needs.
  const std::string dev = options_.gpu_devices;
  std::vector<std::string> nodes = {dev + "/nvidiactl", dev + "/nvidia-uvm",
                                    dev + "/nvidia-uvm-tools", dev + "/nvidia-modeset"};
  for (const auto& e : fs::directory_iterator(dev + "/nvidia-caps", ec))
    nodes.push_back(e.path().string());
  for (const std::string& uuid : run.gpus) {
    for (const GpuDevice& d : devices_) {
      if (d.uuid == uuid) nodes.push_back(dev + "/nvidia" + std::to_string(d.minor));
    }
  }
  req->device_rules = DeviceRulesFor(nodes);
  return OkStatus();
}

}  // namespace airtime
