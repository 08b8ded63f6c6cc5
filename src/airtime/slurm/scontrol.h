// Scontrol: runs `scontrol` for the actions slurmrestd's API version cannot make (v0.0.38:
// ReqNodeList of a pending job, requeue, requeuehold), and `squeue` for the brief job list
// the backend polls (squeue.h says why).
//
// The command runs without a shell (arguments are passed as they are, so no job name or
// node name can inject anything), with SLURM_JWT set to the client's token (slurmctld then
// authenticates it as the token's user, as slurmrestd does, with no munge key on airtime's
// host), a time limit, and its output captured for the error message.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "airtime/base/status.h"

namespace airtime::slurm {

struct ScontrolOptions {
  std::string binary = "scontrol";  // looked up in PATH
  std::string squeue = "squeue";    // looked up in PATH
  std::string slurm_conf;           // SLURM_CONF for the command; "" keeps the environment's
  std::string jwt;                  // SLURM_JWT; "" to authenticate with munge
  std::chrono::milliseconds timeout{10000};
  // squeue's, shorter: while slurmctld is away squeue retries for about 9 s before it fails
  // (measured on the lab), and a poll stuck in that retry would see a slurmctld that is back
  // that much later. squeue lists 1,000 jobs in 15-27 ms.
  std::chrono::milliseconds squeue_timeout{3000};
};

class Scontrol {
 public:
  explicit Scontrol(ScontrolOptions options) : options_(std::move(options)) {}

  // Runs `scontrol ARGS...`; its output when it exits 0, else an error that names the
  // command and quotes what it printed.
  StatusOr<std::string> Run(const std::vector<std::string>& args) const;
  // Runs `squeue ARGS...` the same way. Its output may be long (a line per job): up to
  // 64 MiB, and more is an error rather than a list cut short.
  StatusOr<std::string> Squeue(const std::vector<std::string>& args) const;

 private:
  StatusOr<std::string> RunCommand(const std::string& binary, const std::vector<std::string>& args,
                                   size_t max_output, std::chrono::milliseconds timeout) const;

  ScontrolOptions options_;
};

}  // namespace airtime::slurm
