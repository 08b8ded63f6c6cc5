// Client commands: CLI11 subcommands over ApiClient, printing tables.h renderings or JSON.
#include "airtime/cli/client_commands.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "airtime/api/client.h"
#include "airtime/api/tables.h"
#include "airtime/api/tokens.h"
#include "airtime/base/file_read.h"
#include "airtime/base/strings.h"

namespace airtime {
namespace {

using nlohmann::json;

struct ClientFlags {
  std::string addr;
  std::string token;
  std::string data;
  bool json = false;
};

TimeMs NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Fail(const Status& st) {
  std::cerr << "airtime: error: " << st.message() << "\n";
  return 1;
}

void AddCommonFlags(CLI::App* cmd, ClientFlags* f) {
  cmd->add_option("--addr", f->addr,
                  "daemon address host:port (default $AIRTIME_ADDR, else 127.0.0.1:8470)");
  cmd->add_option("--token", f->token,
                  "API token (default $AIRTIME_TOKEN, else the admin token of DIR/tokens)");
  cmd->add_option("--data", f->data, "the daemon's data directory DIR, to read DIR/tokens");
  cmd->add_flag("--json", f->json, "print the daemon's JSON answer");
}

StatusOr<ApiClient> MakeClient(const ClientFlags& f) {
  auto token = ResolveClientToken(f.token, f.data);
  if (!token.ok()) return token.status();
  return ApiClient(ResolveClientAddress(f.addr), *token);
}

// Prints `answer` as JSON or through `render`; returns the exit code.
template <typename Render>
int Print(const ClientFlags& f, const StatusOr<json>& answer, Render render) {
  if (!answer.ok()) return Fail(answer.status());
  if (f.json) {
    std::cout << answer->dump(2) << "\n";
  } else {
    std::cout << render(*answer);
  }
  return 0;
}

// Registers `name` with the common flags; `run` gets the client and returns the exit code.
template <typename Setup, typename Run>
void AddCommand(CLI::App& app, int* exit_code, const char* name, const char* help, Setup setup,
                Run run) {
  auto flags = std::make_shared<ClientFlags>();
  CLI::App* cmd = app.add_subcommand(name, help);
  AddCommonFlags(cmd, flags.get());
  setup(cmd);
  cmd->callback([flags, exit_code, run] {
    auto client = MakeClient(*flags);
    *exit_code = client.ok() ? run(*client, *flags) : Fail(client.status());
  });
}

// The most `airtime submit` reads from one file or stdin: far above any server's --max-body,
// so a file never ends up refused here that a server would take, and /dev/zero or an endless
// pipe cannot grow the client without bound.
constexpr size_t kMaxSubmitBytes = size_t{256} << 20;

StatusOr<std::string> ReadInput(const std::string& path) {
  if (path != "-") return ReadFileBounded(path, kMaxSubmitBytes, "workload file");
  std::string text;
  char buf[65536];
  while (std::cin.read(buf, sizeof buf) || std::cin.gcount() > 0) {
    text.append(buf, static_cast<size_t>(std::cin.gcount()));
    if (text.size() > kMaxSubmitBytes)
      return InvalidArgument("stdin: larger than the " + std::to_string(kMaxSubmitBytes) +
                             "-byte limit for a workload file");
  }
  return text;
}

std::string ContentTypeFor(const std::string& path, const std::string& body) {
  if (path.size() > 5 && path.substr(path.size() - 5) == ".json") return "application/json";
  const std::string_view t = Trim(body);
  if (!t.empty() && (t.front() == '{' || t.front() == '[')) return "application/json";
  return "application/yaml";
}

int SubmitFiles(ApiClient& c, const ClientFlags& f, const std::vector<std::string>& files) {
  int rc = 0;
  for (const std::string& path : files) {
    auto body = ReadInput(path);
    auto answer =
        body.ok() ? c.Submit(*body, ContentTypeFor(path, *body)) : StatusOr<json>(body.status());
    if (!answer.ok()) {
      rc = Fail(Status(answer.status().code(), path + ": " + answer.status().message()));
      continue;
    }
    if (f.json) {
      std::cout << answer->dump(2) << "\n";
      continue;
    }
    for (const json& a : answer->value("accepted", json::array())) {
      std::cout << a.value("id", json()).dump() << "\t" << a.value("name", "") << "\n";
    }
  }
  return rc;
}

void AddSubmit(CLI::App& app, int* exit_code) {
  auto files = std::make_shared<std::vector<std::string>>();
  AddCommand(
      app, exit_code, "submit", "submit workloads (YAML or JSON files; - for stdin)",
      [files](CLI::App* cmd) { cmd->add_option("FILE", *files, "workload file")->required(); },
      [files](ApiClient& c, const ClientFlags& f) { return SubmitFiles(c, f, *files); });
}

struct LsFlags {
  std::string state, kind, tenant;
  bool all = false;
  int limit = 0;
};

void AddLs(CLI::App& app, int* exit_code) {
  auto ls = std::make_shared<LsFlags>();
  auto setup = [ls](CLI::App* cmd) {
    cmd->add_option("--state", ls->state, "queued, running, succeeded, failed, cancelled, active");
    cmd->add_option("--kind", ls->kind, "only workloads of this kind");
    cmd->add_option("--tenant", ls->tenant, "only this tenant's workloads (admin)");
    cmd->add_option("--limit", ls->limit, "only the most recent N");
    cmd->add_flag("--all", ls->all, "finished workloads too (default: queued and running)");
  };
  auto run = [ls](ApiClient& c, const ClientFlags& f) {
    ListFilter filter{ls->state, ls->kind, ls->tenant, ls->limit};
    if (filter.state.empty() && !ls->all) filter.state = "active";
    const TimeMs now = NowMs();
    return Print(f, c.List(filter), [now](const json& j) { return RenderWorkloads(j, now); });
  };
  AddCommand(app, exit_code, "ls", "list workloads", setup, run);
}

void AddDescribe(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  AddCommand(
      app, exit_code, "describe", "show one workload: fields, runs and the explanation",
      [id](CLI::App* cmd) { cmd->add_option("ID", *id, "workload id or name")->required(); },
      [id](ApiClient& c, const ClientFlags& f) {
        const TimeMs now = NowMs();
        return Print(f, c.Get(*id), [now](const json& j) { return RenderWorkloadDetail(j, now); });
      });
}

void AddCancel(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  AddCommand(
      app, exit_code, "cancel", "cancel a workload",
      [id](CLI::App* cmd) { cmd->add_option("ID", *id, "workload id or name")->required(); },
      [id](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.Cancel(*id), [id](const json&) { return "cancelled " + *id + "\n"; });
      });
}

void AddPriority(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  auto value = std::make_shared<int>(0);
  AddCommand(
      app, exit_code, "priority", "set a workload's priority",
      [id, value](CLI::App* cmd) {
        cmd->add_option("ID", *id, "workload id or name")->required();
        cmd->add_option("N", *value, "the new priority (an integer)")->required();
      },
      [id, value](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.SetPriority(*id, *value), [&](const json&) {
          return "priority of " + *id + " set to " + std::to_string(*value) + "\n";
        });
      });
}

void AddDemand(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  auto rps = std::make_shared<double>(0);
  AddCommand(
      app, exit_code, "demand", "report a realtime service's request rate",
      [id, rps](CLI::App* cmd) {
        cmd->add_option("ID", *id, "workload id or name")->required();
        cmd->add_option("RPS", *rps, "requests per second")
            ->required()
            ->check(CLI::NonNegativeNumber);
      },
      [id, rps](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.ReportDemand(*id, *rps), [&](const json& j) {
          return "demand of " + *id + " set to " + j.value("rps", json(*rps)).dump() + " rps\n";
        });
      });
}

void AddGpusAndLedger(CLI::App& app, int* exit_code) {
  auto none = [](CLI::App*) {};
  AddCommand(app, exit_code, "gpus", "list the node's GPUs and their workloads", none,
             [](ApiClient& c, const ClientFlags& f) { return Print(f, c.Gpus(), RenderGpus); });
  AddCommand(app, exit_code, "ledger", "where installed GPU-hours went, by bucket", none,
             [](ApiClient& c, const ClientFlags& f) { return Print(f, c.Ledger(), RenderLedger); });
}

void AddHolds(CLI::App& app, int* exit_code) {
  auto filter = std::make_shared<HoldsFilter>();
  AddCommand(
      app, exit_code, "holds",
      "the 3 a.m. report: each hold or hand-off of a service's headroom, scored",
      [filter](CLI::App* cmd) {
        cmd->add_option("--service", filter->service, "only this service's calls");
        cmd->add_option("--limit", filter->limit, "the newest N calls (1 to 10000)")
            ->capture_default_str();
      },
      [filter](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.Holds(*filter), RenderHolds);
      });
}

struct TopFlags {
  std::string interval = "2s";
  bool once = false;
};

// One frame's text (or JSON), or the error that kept it from being drawn.
StatusOr<std::string> TopFrame(ApiClient& c, bool as_json) {
  auto gpus = c.Gpus();
  if (!gpus.ok()) return gpus.status();
  auto workloads = c.List(ListFilter{"active", "", "", 0});
  if (!workloads.ok()) return workloads.status();
  auto ledger = c.Ledger();
  if (!ledger.ok()) return ledger.status();
  if (as_json) {
    return json{{"gpus", *gpus}, {"workloads", *workloads}, {"ledger", *ledger}}.dump(2) + "\n";
  }
  return RenderTopFrame(*gpus, *workloads, *ledger, NowMs());
}

int RunTop(ApiClient& c, const ClientFlags& f, const TopFlags& t) {
  auto interval = ParseDurationMs(t.interval);
  if (!interval || *interval <= 0) {
    return Fail(
        InvalidArgument("--interval: expected a duration such as 2s, got '" + t.interval + "'"));
  }
  if (t.once) {
    auto frame = TopFrame(c, f.json);
    if (!frame.ok()) return Fail(frame.status());
    std::cout << *frame;
    return 0;
  }
  while (true) {  // until Ctrl-C
    auto frame = TopFrame(c, f.json);
    std::cout << "\x1b[H\x1b[2J" << (frame.ok() ? *frame : "error: " + frame.status().message())
              << std::flush;
    std::this_thread::sleep_for(std::chrono::milliseconds(*interval));
  }
}

void AddTop(CLI::App& app, int* exit_code) {
  auto top = std::make_shared<TopFlags>();
  AddCommand(
      app, exit_code, "top", "live view of GPUs, workloads and the ledger (Ctrl-C to quit)",
      [top](CLI::App* cmd) {
        cmd->add_option("--interval", top->interval, "redraw every this long")
            ->capture_default_str();
        cmd->add_flag("--once", top->once, "print one frame and exit");
      },
      [top](ApiClient& c, const ClientFlags& f) { return RunTop(c, f, *top); });
}

}  // namespace

std::string ResolveClientAddress(const std::string& flag) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("AIRTIME_ADDR");
  if (env != nullptr && *env != '\0') return env;
  return kDefaultApiAddress;
}

StatusOr<std::string> ResolveClientToken(const std::string& flag, const std::string& data_dir) {
  if (!flag.empty()) return flag;
  const char* env = std::getenv("AIRTIME_TOKEN");
  if (env != nullptr && *env != '\0') return std::string(env);
  if (data_dir.empty()) return std::string();
  auto tokens = Tokens::Load(data_dir + "/" + kTokensFileName);
  if (!tokens.ok()) return tokens.status();
  if (tokens->AdminToken().empty()) {
    return NotFound(data_dir + "/" + kTokensFileName + ": no admin token");
  }
  return tokens->AdminToken();
}

void AddClientCommands(CLI::App& app, int* exit_code) {
  AddSubmit(app, exit_code);
  AddLs(app, exit_code);
  AddDescribe(app, exit_code);
  AddCancel(app, exit_code);
  AddPriority(app, exit_code);
  AddDemand(app, exit_code);
  AddGpusAndLedger(app, exit_code);
  AddHolds(app, exit_code);
  AddTop(app, exit_code);
}

}  // namespace airtime
