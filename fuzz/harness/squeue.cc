// Harness: squeue's brief job list as the Slurm backend polls it (src/airtime/slurm/squeue.h).
//
// Besides "no crash, no leak, no hang", it checks what the parser promises: every job it
// returns has a positive id, a non-empty state, a restart count >= 0 and a reason of at
// most 1,024 characters.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "airtime/slurm/squeue.h"
#include "fuzz_one.h"

int FuzzOne(const uint8_t* data, size_t size) {
  const std::string_view in(reinterpret_cast<const char*>(data), size);
  auto jobs = airtime::slurm::ParseSqueueBrief(in);
  if (!jobs.ok()) return 0;
  for (const auto& j : *jobs)
    if (j.id <= 0 || j.state.empty() || j.restarts < 0 || j.state_reason.size() > 1024)
      std::abort();
  return 0;
}
