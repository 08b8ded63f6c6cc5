// Tables tests: the CLI's renderings of sample API answers.
#include "airtime/api/tables.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

constexpr TimeMs kNow = 1714564800000;  // 2024-05-01 12:00:00 UTC

json SampleWorkloads() {
  return json::parse(R"({"workloads": [
    {"id": 12, "name": "chat", "tenant": "team-a", "kind": "realtime", "state": "running",
     "priority": 0, "submitted_at": 1714557600000, "started_at": 1714561200000,
     "finished_at": null, "gpus": ["GPU-a", "GPU-b"], "replicas": {"running": 2, "target": 3},
     "reason": "serving 2 of 3 replicas"},
    {"id": 13, "name": "train-llm", "tenant": "team-b", "kind": "batch", "state": "queued",
     "submitted_at": 1714564500000, "started_at": null, "gpus": [],
     "reason": "waits for 8 H100: only 2 free; first in line"},
    {"id": 9, "name": "etl", "tenant": "team-b", "kind": "batch", "state": "succeeded",
     "submitted_at": 1714550000000, "started_at": 1714551000000, "finished_at": 1714563600000,
     "gpus": [], "reason": null}]})");
}

TEST(Tables, RenderTableAlignsWithoutTrailingSpaces) {
  EXPECT_EQ(RenderTable({"A", "LONGER"}, {{"xyz", "1"}, {"", ""}}),
            "A    LONGER\n"
            "xyz  1\n"
            "\n");
}

TEST(Tables, Workloads) {
  EXPECT_EQ(
      RenderWorkloads(SampleWorkloads(), kNow),
      "ID  NAME       TENANT  KIND      STATE      GPUS    AGE/WAIT    REASON\n"
      "12  chat       team-a  realtime  running    2 r2/3  1h00m       serving 2 of 3 replicas\n"
      "13  train-llm  team-b  batch     queued     0       5m00s       waits for 8 H100: only "
      "2 free; first in line\n"
      "9   etl        team-b  batch     succeeded  0       20m00s ago  -\n");
}

// What a tenant or Slurm wrote reaches the admin's terminal as text, never as a control
// sequence.
TEST(Tables, ControlCharactersAreShownEscaped) {
  json list = {{"workloads",
                {{{"id", 1},
                  {"name", "a\x1b[2Jb"},
                  {"tenant", "team\nFORGED ROW"},
                  {"kind", "batch"},
                  {"state", "queued"},
                  {"reason", "waits\rFAKE"}}}}};
  const std::string out = RenderWorkloads(list, 0);
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.find("\nFORGED"), std::string::npos) << out;  // a cell stays on its row
  EXPECT_NE(out.find("a\\x1B[2Jb"), std::string::npos) << out;
}

TEST(Tables, WorkloadsCutsLongReasons) {
  json list = {
      {"workloads", {{{"id", 1}, {"state", "queued"}, {"reason", std::string(100, 'x')}}}}};
  const std::string out = RenderWorkloads(list, kNow);
  EXPECT_NE(out.find(std::string(57, 'x') + "..."), std::string::npos) << out;
  EXPECT_EQ(out.find(std::string(58, 'x')), std::string::npos);
}

TEST(Tables, WideWorkloadsAddColumnsAndKeepTheReasonWhole) {
  json list = {{"workloads",
                {{{"id", 1},
                  {"kind", "realtime"},
                  {"state", "queued"},
                  {"priority", 7},
                  {"preemptions", 2},
                  {"demand_rps", 12.5},
                  {"gpus", {"GPU-a", "GPU-b"}},
                  {"reason", std::string(100, 'x') + "\nsecond line"}}}}};
  const std::string out = RenderWorkloads(list, kNow, {.wide = true});
  EXPECT_THAT(out, HasSubstr("PRIORITY"));
  EXPECT_THAT(out, HasSubstr("PREEMPTIONS"));
  EXPECT_THAT(out, HasSubstr("12.5 rps"));
  EXPECT_THAT(out, HasSubstr("GPU-a, GPU-b"));
  EXPECT_THAT(out, HasSubstr(std::string(100, 'x') + " second line\n"));
  // Without the header: the rows alone (ls --watch after its first listing).
  const std::string rows = RenderWorkloads(list, kNow, {.wide = false, .header = false});
  EXPECT_EQ(rows.find("REASON"), std::string::npos);
  EXPECT_EQ(rows.rfind("1  ", 0), 0u) << rows;
}

TEST(Tables, EventsOldestFirstWithTheMessageWhole) {
  const json events = {
      {"events",
       {{{"at", 1796271445000}, {"kind", "submitted"}, {"run", nullptr}, {"message", "in"}},
        {{"at", 1796271505000},
         {"kind", "preempted"},
         {"run", 4},
         {"message", "preempted: " + std::string(80, 'p')}}}}};
  EXPECT_EQ(RenderEvents(events),
            "TIME                     KIND       RUN  MESSAGE\n"
            "2026-12-03 04:17:25 UTC  submitted  -    in\n"
            "2026-12-03 04:18:25 UTC  preempted  4    preempted: " +
                std::string(80, 'p') + "\n");
}

TEST(Tables, WorkloadDetailWithRunsAndExplanation) {
  json w = SampleWorkloads()["workloads"][0];
  w["demand_rps"] = 12.5;
  w["preemptions"] = 1;
  w["explanation"] = "replica 2 waits: no free H100\nnext check at 12:01";
  w["runs"] = json::parse(R"([{"id": 3, "replica": 0, "attempt": 1, "state": "running",
      "pid": 1234, "gpus": ["GPU-a"], "started_at": 1714561200000, "ended_at": null,
      "exit_code": null, "log_dir": "/data/runs/3", "stop_reason": null}])");
  const std::string out = RenderWorkloadDetail(w, kNow);
  EXPECT_NE(out.find("ID:           12\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Started:      2024-05-01 11:00:00 UTC (1h00m ago)\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("GPUs:         GPU-a, GPU-b\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Replicas:     2/3\n"), std::string::npos) << out;
  EXPECT_NE(out.find("Demand:       12.5 rps\n"), std::string::npos) << out;
  EXPECT_NE(out.find("\nRuns:\n  RUN  REPLICA"), std::string::npos) << out;
  EXPECT_NE(out.find("  3    0        1        running  1234  GPU-a  1h00m"), std::string::npos)
      << out;
  EXPECT_NE(out.find("\nExplanation:\n  replica 2 waits: no free H100\n  next check at 12:01\n"),
            std::string::npos)
      << out;
}

TEST(Tables, ServiceDetailListsItsMembersAndWhoseEachRunIs) {
  json w = SampleWorkloads()["workloads"][0];
  w["id"] = nullptr;
  w["name"] = "chat";
  w["members"] = json::parse(R"([
    {"id": 7, "name": "chat/big", "state": "running", "replicas": {"running": 1, "target": 0},
     "reason": "giving back"},
    {"id": 8, "name": "chat/int8", "state": "running", "replicas": {"running": 1, "target": 1},
     "reason": "serving"}])");
  w["mix"] = "code: 100% int8; conv: 60% big 40% int8 (1 x big, 1 x int8); ... (first plan)";
  w["runs"] = json::parse(R"([{"workload": "chat/int8", "id": 3, "state": "running",
      "pid": 1234, "gpus": ["GPU-a"], "started_at": 1714561200000, "ended_at": null,
      "stop_reason": ""}])");
  const std::string out = RenderWorkloadDetail(w, kNow);
  EXPECT_NE(out.find("\nMix:          code: 100% int8; conv: 60% big 40% int8 (1 x big, 1 x "
                     "int8); ... (first plan)\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nMembers:\n  ID  NAME       STATE    REPLICAS  REASON\n"
                     "  7   chat/big   running  1/0       giving back\n"
                     "  8   chat/int8  running  1/1       serving\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("\nRuns:\n  MEMBER     RUN  STATE    PID   GPUS   STARTED"), std::string::npos)
      << out;
  EXPECT_NE(out.find("  chat/int8  3    running  1234  GPU-a  1h00m"), std::string::npos) << out;
}

TEST(Tables, Gpus) {
  json gpus = json::parse(R"({"gpus": [
    {"index": 0, "uuid": "GPU-0", "type": "H100", "memory_mib": 81920, "fake": true,
     "utilization": 0.42, "memory_used_mib": 1024, "power_w": 312.5,
     "allocations": [{"workload": 12, "name": "chat", "milli": 1000},
                     {"workload": 14, "name": "nb", "milli": 500}]},
    {"index": 1, "uuid": "GPU-1", "type": "A100", "mig_mode": true, "memory_mib": 40960,
     "utilization": null, "allocations": []}]})");
  EXPECT_EQ(RenderGpus(gpus),
            "INDEX  TYPE         UUID   UTIL  MEM USED/TOTAL  POWER  WORKLOADS\n"
            "0      H100 (fake)  GPU-0  42%   1.0/80.0 GiB    312 W  chat(12), nb(14)@0.50\n"
            "1      A100 MIG     GPU-1  -     -/40.0 GiB      -      -\n");
}

TEST(Tables, LedgerInGpuHoursAndPercent) {
  json ledger = json::parse(R"({"since": 0, "now": 7200000, "installed_gpu_seconds": 14400,
    "buckets": {"idle_held": 3600, "useful": 7200, "free_no_demand": 3600, "custom": 0},
    "value": 12.3, "return_per_gpu_hour": 0.854})");
  EXPECT_EQ(RenderLedger(ledger),
            "BUCKET          GPU-HOURS  % INSTALLED\n"
            "useful          2.00       50.0\n"
            "idle_held       1.00       25.0\n"
            "free_no_demand  1.00       25.0\n"
            "custom          0.00       0.0\n"
            "installed       4.00       100.0\n"
            "window: 2h00m\n"
            "value: 12.30  return per GPU-hour: 0.854\n");
  // After a restart: the time no daemon ran is named.
  ledger["now"] = 7200000 + 90000;
  ledger["unobserved_seconds"] = 90;
  EXPECT_NE(RenderLedger(ledger).find("window: 2h01m (1m30s of it not counted: daemon restarts)\n"),
            std::string::npos)
      << RenderLedger(ledger);
}

// Under the Slurm backend the ledger shows the foreign line and what the backend says; the
// local backend adds nothing, and a foreign line of 0 is left out.
TEST(Tables, TheSlurmBackendsLinesAndTheForeignBucket) {
  json ledger = json::parse(R"js({"installed_gpu_seconds": 7200,
    "buckets": {"useful": 3600, "foreign": 3600},
    "backend": {"kind": "slurm", "state": "slurm 22.05.8 (API v0.0.38): 2 job(s) watched",
                "placements": {"as_decided": 5, "moved": 1, "unmoved": 0, "last_unmoved": ""},
                "foreign": [{"gpu": "slurm:n1:0", "owner": "slurm job 9 'x' (alice)"},
                            {"gpu": "slurm:n1:1", "owner": "slurm job 9 'x' (alice)"}]
}
})js");
  const std::string out = RenderLedger(ledger);
  EXPECT_NE(out.find("foreign    1.00       50.0\n"), std::string::npos) << out;
  EXPECT_NE(out.find("backend: slurm 22.05.8 (API v0.0.38): 2 job(s) watched\n"), std::string::npos)
      << out;
  EXPECT_NE(out.find("5 as decided, 1 moved, 0 not movable\n"), std::string::npos) << out;
  EXPECT_NE(out.find("  slurm job 9 'x' (alice): slurm:n1:0, slurm:n1:1\n"), std::string::npos)
      << out;
  ledger["buckets"]["foreign"] = 0;
  ledger["backend"] = {{"kind", "local"}, {"state", ""}};
  EXPECT_EQ(RenderLedger(ledger).find("foreign"), std::string::npos) << RenderLedger(ledger);
  EXPECT_EQ(RenderLedger(ledger).find("backend"), std::string::npos) << RenderLedger(ledger);
}

// A daemon with costs adds their table after the value line.
TEST(Tables, LedgerWithCosts) {
  json ledger = json::parse(R"js({"installed_gpu_seconds": 7200,
    "buckets": {"useful": 3600, "free_no_demand": 3600}, "value": 3, "return_per_gpu_hour": 1.5,
    "costs": {"cost": 1.6, "value": 3, "margin": 1.4, "cost_per_installed_gpu_hour": 0.8,
              "unattributed_value": 0, "buckets": {"useful": 0.8, "free_no_demand": 0.8},
              "unpriced": [],
              "types": [{"type": "H100", "basis": "catalogue_power", "per_hour": 0.8,
                         "installed_gpu_hours": 2, "allocated_gpu_hours": 1, "allocation": 0.5,
                         "cost": 1.6, "value": 3, "margin": 1.4,
                         "value_per_allocated_gpu_hour": 3, "breakeven_allocation": 0.2667}]}
})js");
  const std::string out = RenderLedger(ledger);
  EXPECT_NE(out.find("costs (every installed GPU-hour"), std::string::npos) << out;
  EXPECT_NE(out.find("H100"), std::string::npos) << out;
  EXPECT_NE(out.find("26.7%"), std::string::npos) << out;
  EXPECT_NE(out.find("cost by bucket: useful 0.80 (50.0%), free_no_demand 0.80 (50.0%)"),
            std::string::npos)
      << out;
}

TEST(Tables, TopFrameHasAllSections) {
  json gpus = {{"gpus", json::array()}};
  json ledger = {{"installed_gpu_seconds", 0}, {"buckets", json::object()}};
  const std::string out = RenderTopFrame(gpus, SampleWorkloads(), ledger, kNow);
  EXPECT_EQ(out.rfind("airtime top: 0 GPUs, 3 active workloads\n", 0), 0u) << out;
  EXPECT_NE(out.find("INDEX  TYPE"), std::string::npos);
  EXPECT_NE(out.find("train-llm"), std::string::npos);
  EXPECT_NE(out.find("BUCKET"), std::string::npos);
}

TEST(Tables, RenderHoldsPrintsTheSummaryTableThenEachCallWithItsWhyInFull) {
  EXPECT_EQ(RenderHolds(json::parse(R"({"services": {}, "decisions": []})")),
            "no hold-or-hand-off calls yet (a service's headroom: replicas kept beyond what its "
            "demand needs, or handed off to waiting work)\n");
  const std::string why(200, 'w');
  json holds = json::parse(R"({"services": {"chat": {"holds": 1, "holds_burst_came": 1,
      "handoffs": 0, "handoffs_burst_came": 0, "held_gpu_hours": 2.0,
      "requests_protected": 4000, "value_protected": 8.0, "value_forgone": 6.0,
      "value_earned": 0, "value_lost": 0, "regret": 0, "holds_paid": true}},
    "decisions": [{"t_s": 1714564800.5, "until_s": null, "service": "chat", "choice": "hold",
      "demand_rps": 15, "forecast_rps": 17.5, "forecast_error_p90": 1.2,
      "replicas_needed": 2, "replicas_held": 1, "hold_value": 1.5, "handoff_value": 0.75,
      "waiting_density": 3, "why": "", "burst_came": true, "requests_protected": 4000,
      "value_protected": 8.0, "value_forgone": 6.0, "value_earned": 0, "value_lost": 0,
      "regret": 0}],
    "decisions_kept": 5})");
  holds["decisions"][0]["why"] = why;
  const std::string out = RenderHolds(holds);
  EXPECT_NE(out.find("3 a.m. report"), std::string::npos) << out;
  EXPECT_NE(out.find("  chat                          1 (1)            0 (0)        2.0       4000 "
                     "      8.00      6.00"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("the latest 1 call(s) of 5 kept (--limit N for more), oldest first:"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("2024-05-01 12:00:00 UTC  chat     hold    2/1          15.0/17.5            "
                     "1.50/0.75            yes   0.00    " +
                     why + "\n"),
            std::string::npos)
      << out;
}

}  // namespace
}  // namespace airtime
