// Harness: what airtime reads from Slurm (src/airtime/slurm/): slurmrestd's JSON answers
// (nodes, partitions, jobs, a submission's answer, errors, the OpenAPI document) in each API
// version's shapes, and the hostlist and GRES strings inside them.
//
// The first byte picks the parser (its value mod 7) and the API version (its value / 7, mod
// the versions: 0 is v0.0.38, 1 v0.0.40, 2 v0.0.41); the rest is the input. Besides "no
// crash, no leak, no hang", it checks what the parsers promise:
//   - a job's GPUs are each on a named node, and every GPU index (of a job or a GRES
//     string) is 0..4095;
//   - an expanded hostlist has at most kMaxHostlistNames names.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "airtime/slurm/api_shapes.h"
#include "airtime/slurm/gres.h"
#include "airtime/slurm/hostlist.h"
#include "fuzz_one.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void FuzzJobs(const airtime::slurm::ApiShapes& shapes, const nlohmann::json& body) {
  auto jobs = shapes.ParseJobs(body);
  if (!jobs.ok()) return;
  for (const auto& j : *jobs) {
    for (const auto& g : j.gpus) {
      Require(!g.node.empty());
      for (int i : g.indices) Require(i >= 0 && i <= 4095);
      // Shards: a positive count, from a GPU Slurm named.
      Require(g.shards >= 0 && (g.shards == 0 || !g.indices.empty()));
    }
  }
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int which = data[0] % 7;
  const std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);
  if (which == 5) {
    auto names = airtime::slurm::ExpandHostlist(in);
    if (names.ok()) Require(names->size() <= airtime::slurm::kMaxHostlistNames);
    return 0;
  }
  if (which == 6) {
    auto list = airtime::slurm::ParseGresList(in);
    if (list.ok()) {
      for (const auto& g : *list)
        for (int i : g.indices) Require(i >= 0 && i <= 4095);
      Require(airtime::slurm::GpuCount(*list) >= 0 && airtime::slurm::ShardCount(*list) >= 0);
    }
    return 0;
  }
  const nlohmann::json body = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) return 0;
  constexpr const char* kVersions[] = {"v0.0.38", "v0.0.40", "v0.0.41"};
  const auto shapes = airtime::slurm::ShapesFor(kVersions[(data[0] / 7) % 3]);
  switch (which) {
    case 0:
      (void)shapes->ParseNodes(body);
      break;
    case 1:
      (void)shapes->ParsePartitions(body);
      break;
    case 2:
      FuzzJobs(*shapes, body);
      break;
    case 3:
      (void)shapes->ParseSubmitted(body);
      (void)shapes->ResponseErrors(body, "fuzz");
      (void)shapes->SignalErrors(body, "fuzz");
      (void)shapes->ParseRelease(body);
      break;
    default:
      (void)airtime::slurm::ChooseApiVersion(body);
      break;
  }
  return 0;
}
