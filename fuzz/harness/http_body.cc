// Harness: the HTTP API's body and query parsing: the bounded JSON helper, the
// priority / demand bodies, the GET /v1/workloads, /v1/holds and .../logs query strings and a
// submission body parsed
// as Daemon::Submit does it (ParseSubmission: no daemon needed).
//
// The first byte picks the parser (its value mod 4); the rest is the input. Besides "no
// crash, no leak, no hang", it checks what the parsers promise:
//   - a body that passes CheckJsonBounds parses without deep recursion, and DumpJson of the
//     result never throws;
//   - an accepted submission holds only names and strings that pass the text rules.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "airtime/api/bounded_json.h"
#include "airtime/api/request_parse.h"
#include "airtime/server/submission.h"
#include "fuzz_one.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

void FuzzJson(std::string_view in) {
  auto j = airtime::ParseBoundedJson(in, "body", {64 * 1024, 64});
  if (!j.ok()) return;
  Require(airtime::CheckJsonBounds(in, "body", {64 * 1024, 64}).ok());
  (void)airtime::DumpJson(*j);
  const std::string rewritten = airtime::RewriteSurrogatePairs(in);
  Require(rewritten.size() <= in.size());
}

void FuzzSmallBodies(std::string_view in) {
  (void)airtime::ParsePriorityBody(in);
  auto demand = airtime::ParseDemandBody(in);
  if (demand.ok()) Require(demand->rps >= 0);
}

void FuzzQuery(std::string_view in) {
  const airtime::Caller admin{"", true}, tenant{"team-a", false};
  auto f = airtime::ParseListQuery(in, admin);
  if (f.ok()) Require(f->limit >= 0);
  auto g = airtime::ParseListQuery(in, tenant);
  if (g.ok()) Require(g->tenant.empty());
  auto h = airtime::ParseHoldsQuery(in);
  if (h.ok()) Require(h->limit >= 1 && h->limit <= airtime::kMaxHoldsLimit);
  auto l = airtime::ParseLogQuery(in);
  if (l.ok())
    Require(l->run >= 0 && l->offset >= -1 && l->limit >= 1 && l->limit <= airtime::kMaxLogLimit);
}

void FuzzSubmission(std::string_view in) {
  const airtime::Caller tenant{"team-a", false};
  auto s = airtime::ParseSubmission(tenant, in, "request");
  if (!s.ok()) return;
  for (const airtime::WorkloadSpec& spec : s->specs) {
    Require(airtime::NameProblem(spec.name).empty());
    Require(airtime::CheckSubmittedText(spec).ok());
    Require(spec.tenant == "team-a");
  }
}

}  // namespace

int FuzzOne(const uint8_t* data, size_t size) {
  if (size == 0 || size > 64 * 1024) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0:
      FuzzJson(in);
      break;
    case 1:
      FuzzSmallBodies(in);
      break;
    case 2:
      FuzzQuery(in);
      break;
    default:
      FuzzSubmission(in);
      break;
  }
  return 0;
}
