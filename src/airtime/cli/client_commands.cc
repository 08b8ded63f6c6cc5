// Client commands: CLI11 subcommands over ApiClient, printing tables.h renderings or JSON.
#include "airtime/cli/client_commands.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <thread>

#include "airtime/api/client.h"
#include "airtime/api/tables.h"
#include "airtime/api/tokens.h"
#include "airtime/base/file_read.h"
#include "airtime/base/strings.h"
#include "airtime/base/utf8.h"
#include "airtime/cli/completion.h"
#include "airtime/cli/output_format.h"
#include "airtime/cli/workload_watch.h"
#include "airtime/model/workload.h"

namespace airtime {
namespace {

using nlohmann::json;

struct ClientFlags {
  std::string addr;
  std::string token;
  std::string data;
  bool json = false;
  std::string output = "table";
  OutputFormat format = OutputFormat::kTable;  // from --json and -o, before the command runs
};

TimeMs NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int Fail(const Status& st) {
  std::cerr << "airtime: error: " << PrintableText(st.message()) << "\n";
  return 1;
}

void AddCommonFlags(CLI::App* cmd, ClientFlags* f) {
  cmd->add_option("--addr", f->addr,
                  "daemon address host:port (default $AIRTIME_ADDR, else 127.0.0.1:8470)");
  cmd->add_option("--token", f->token,
                  "API token (default $AIRTIME_TOKEN, else the admin token of DIR/tokens)");
  cmd->add_option("--data", f->data, "the daemon's data directory DIR, to read DIR/tokens");
  cmd->add_flag("--json", f->json, "print the daemon's JSON answer (the same as -o json)");
  cmd->add_option("-o,--output", f->output,
                  "output format: table, wide (more columns, nothing cut), json, yaml, or name "
                  "(one name per line)")
      ->capture_default_str();
}

// The format --json and -o ask for; they must not disagree.
StatusOr<OutputFormat> ResolveFormat(const ClientFlags& f) {
  auto format = ParseOutputFormat(f.output);
  if (!format.ok()) return format.status();
  if (f.json && *format != OutputFormat::kJson && *format != OutputFormat::kTable) {
    return InvalidArgument("--json and -o " + f.output + " ask for two formats; give one");
  }
  return f.json ? OutputFormat::kJson : *format;
}

// How a command shows its answer: as a table (and a wide one), and by name where its answer
// lists named things (`list` of objects with `key`; a single object's `key` without `list`).
struct Views {
  std::function<std::string(const json&)> table;
  std::function<std::string(const json&)> wide;  // empty: the table
  const char* list = nullptr;
  const char* key = nullptr;  // nullptr: `-o name` is not offered
};

// A command whose answer shows only as its table (wide is the same, and no names).
Views TableView(std::function<std::string(const json&)> table) {
  return Views{std::move(table), {}, nullptr, nullptr};
}

StatusOr<ApiClient> MakeClient(const ClientFlags& f) {
  auto token = ResolveClientToken(f.token, f.data);
  if (!token.ok()) return token.status();
  return ApiClient(ResolveClientAddress(f.addr), *token);
}

// `doc` in `format`; an error when the command has no such view.
StatusOr<std::string> Show(OutputFormat format, const json& doc, const Views& v) {
  switch (format) {
    case OutputFormat::kJson:
      return doc.dump(2) + "\n";
    case OutputFormat::kYaml:
      return JsonToYaml(doc);
    case OutputFormat::kName:
      if (v.key == nullptr) {
        return InvalidArgument(
            "-o name: this command's answer has no names; use table, wide, "
            "json or yaml");
      }
      return NamesOf(doc, v.list, v.key);
    case OutputFormat::kWide:
      return v.wide ? v.wide(doc) : v.table(doc);
    case OutputFormat::kTable:
      break;
  }
  return v.table(doc);
}

// Prints `answer` in the flags' format; returns the exit code.
int Print(const ClientFlags& f, const StatusOr<json>& answer, const Views& v) {
  if (!answer.ok()) return Fail(answer.status());
  auto text = Show(f.format, *answer, v);
  if (!text.ok()) return Fail(text.status());
  std::cout << *text;
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
    auto format = ResolveFormat(*flags);
    if (!format.ok()) {
      *exit_code = Fail(format.status());
      return;
    }
    flags->format = *format;
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

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  std::istringstream in(text);
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string AcceptedTable(const json& answer) {
  std::string out;
  for (const json& a : answer.value("accepted", json::array())) {
    out += a.value("id", json()).dump() + "\t" + a.value("name", "") + "\n";
  }
  return out;
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
    auto text = Show(f.format, *answer, Views{AcceptedTable, nullptr, "accepted", "name"});
    if (!text.ok()) return Fail(text.status());
    std::cout << *text;
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
  bool watch = false;
  std::string interval = "2s";
};

Views WorkloadViews(TimeMs now, bool header = true) {
  return Views{[now, header](const json& j) {
                 return RenderWorkloads(j, now, {false, header});
               },
               [now, header](const json& j) {
                 return RenderWorkloads(j, now, {true, header});
               },
               "workloads", "name"};
}

StatusOr<DurationMs> ParseInterval(const std::string& flag, const std::string& text) {
  auto d = ParseDurationMs(text);
  if (!d || *d <= 0) {
    return InvalidArgument(flag + ": expected a duration such as 2s, got '" + text + "'");
  }
  return *d;
}

// One batch of `ls --watch`: each view on a line of its own in JSON (a JSON Lines stream),
// a YAML document each, or table rows.
std::string WatchBatch(const ClientFlags& f, const json& views, bool first) {
  const json doc = {{"workloads", views}};
  switch (f.format) {
    case OutputFormat::kJson: {
      std::string out;
      for (const json& v : views) out += v.dump() + "\n";
      return out;
    }
    case OutputFormat::kYaml: {
      std::string out;
      for (const json& v : views) out += "---\n" + JsonToYaml(v);
      return out;
    }
    default:
      return *Show(f.format, doc, WorkloadViews(NowMs(), first));
  }
}

// `ls --watch`: the listing, then every interval the workloads that changed (a finished one
// that left the filter, read once more, in its final state). Errors are printed and the
// watch goes on (the daemon may be restarting); Ctrl-C ends it.
int WatchWorkloads(ApiClient& c, const ClientFlags& f, const ListFilter& filter,
                   DurationMs interval) {
  WorkloadWatch watch;
  bool first = true;
  while (true) {
    auto list = c.List(filter);
    if (!list.ok()) {
      std::cerr << "airtime: error: " << PrintableText(list.status().message()) << "\n";
    } else {
      WorkloadWatch::Changes changes = watch.Next(*list);
      for (const std::string& id : changes.gone) {
        auto view = c.Get(id);
        if (!view.ok()) continue;  // deleted, or no longer ours to see
        view->erase("runs");
        view->erase("explanation");
        changes.changed.push_back(*view);
      }
      if (first || !changes.changed.empty()) {
        std::cout << WatchBatch(f, changes.changed, first) << std::flush;
      }
      first = false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(interval));
  }
}

void AddLs(CLI::App& app, int* exit_code) {
  auto ls = std::make_shared<LsFlags>();
  auto setup = [ls](CLI::App* cmd) {
    cmd->add_option("--state", ls->state, "queued, running, succeeded, failed, cancelled, active");
    cmd->add_option("--kind", ls->kind, "only workloads of this kind");
    cmd->add_option("--tenant", ls->tenant, "only this tenant's workloads (admin)");
    cmd->add_option("--limit", ls->limit, "only the most recent N");
    cmd->add_flag("--all", ls->all, "finished workloads too (default: queued and running)");
    cmd->add_flag("-w,--watch", ls->watch,
                  "after the listing, print each workload that changes (Ctrl-C to stop)");
    cmd->add_option("--interval", ls->interval, "with --watch, look every this long")
        ->capture_default_str();
  };
  auto run = [ls](ApiClient& c, const ClientFlags& f) {
    ListFilter filter{ls->state, ls->kind, ls->tenant, ls->limit};
    if (filter.state.empty() && !ls->all) filter.state = "active";
    if (ls->watch) {
      auto interval = ParseInterval("--interval", ls->interval);
      return interval.ok() ? WatchWorkloads(c, f, filter, *interval) : Fail(interval.status());
    }
    return Print(f, c.List(filter), WorkloadViews(NowMs()));
  };
  AddCommand(app, exit_code, "ls", "list workloads", setup, run);
}

struct WaitFlags {
  std::string id;
  std::string state = "finished";
  std::string timeout = "0";
  std::string interval = "1s";
};

// `airtime wait`: polls until the workload is in the state, exit 0; exit 1 when it ended in
// another final state, the time ran out, or it is not there. Unreachable daemons are retried
// until the time runs out, as a restart should not fail a script's wait.
int WaitFor(ApiClient& c, const WaitFlags& w) {
  if (Status st = CheckWaitState(w.state); !st.ok()) return Fail(st);
  auto interval = ParseInterval("--interval", w.interval);
  if (!interval.ok()) return Fail(interval.status());
  auto timeout = ParseDurationMs(w.timeout);
  if (!timeout || *timeout < 0) {
    return Fail(InvalidArgument("--timeout: expected a duration such as 10m (0: no limit), got '" +
                                w.timeout + "'"));
  }
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    auto view = c.Get(w.id);
    std::string last;
    if (view.ok()) {
      const WaitCheck check = CheckWait(*view, w.state);
      const std::string name = view->value("name", w.id);
      if (check.verdict == WaitCheck::kReached) {
        std::cout << PrintableText(name, false) << " is " << view->value("state", "") << "\n";
        return 0;
      }
      if (check.verdict == WaitCheck::kNever) {
        return Fail(FailedPrecondition("workload '" + name + "': " + check.why));
      }
      last = "'" + name + "' is " + view->value("state", "") + ": " + view->value("reason", "");
    } else if (view.status().code() != StatusCode::kUnavailable) {
      return Fail(view.status());
    } else {
      last = view.status().message();
    }
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    if (*timeout > 0 && waited >= *timeout) {
      return Fail(Status(StatusCode::kUnavailable, "timed out after " + FormatDuration(*timeout) +
                                                       " waiting for " + w.state + "; " + last));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(*interval));
  }
}

void AddWait(CLI::App& app, int* exit_code) {
  auto w = std::make_shared<WaitFlags>();
  AddCommand(
      app, exit_code, "wait", "wait until a workload is in a state (exit 1 if it never will be)",
      [w](CLI::App* cmd) {
        cmd->add_option("ID", w->id, "workload id or name")->required();
        cmd->add_option("--for", w->state,
                        "queued, running, succeeded, failed, cancelled, or finished (any of the "
                        "last three)")
            ->capture_default_str();
        cmd->add_option("--timeout", w->timeout, "give up after this long (0: never)")
            ->capture_default_str();
        cmd->add_option("--interval", w->interval, "look every this long")->capture_default_str();
      },
      [w](ApiClient& c, const ClientFlags&) { return WaitFor(c, *w); });
}

struct LogsFlags {
  std::string id;
  int64_t run = 0;
  int64_t tail = 0;
  bool follow = false;
  bool stderr_log = false;
  std::string interval = "1s";
};

// `airtime logs`: the run's log from its start (or its last --tail bytes), read in chunks;
// with -f, then what it writes until the run ends. The first answer with a run pins it, so
// a follow stays on it; one before the workload's first run waits for it. While the daemon does not
// answer, a follow keeps trying.
int ShowLogs(ApiClient& c, const LogsFlags& l) {
  auto interval = ParseInterval("--interval", l.interval);
  if (!interval.ok()) return Fail(interval.status());
  if (l.tail < 0 || l.tail > kMaxLogLimit) {
    return Fail(InvalidArgument("--tail: expected a number of bytes from 1 to " +
                                std::to_string(kMaxLogLimit) + " (0: the whole log)"));
  }
  LogQuery q{l.run, l.tail > 0 ? -1 : 0, l.tail > 0 ? l.tail : kDefaultLogLimit, l.stderr_log};
  std::optional<std::string> cut;  // the log's cut mark when last read (LogChunk::cut)
  while (true) {
    auto chunk = c.Logs(l.id, q);
    if (!chunk.ok()) {
      if (!l.follow || chunk.status().code() != StatusCode::kUnavailable)
        return Fail(chunk.status());
      std::this_thread::sleep_for(std::chrono::milliseconds(*interval));
      continue;
    }
    if (chunk->run == 0 && !l.follow) {
      return Fail(FailedPrecondition("workload '" + l.id +
                                     "' has not run yet (-f waits for its first run)"));
    }
    // Shorter than what was printed, or cut since (and perhaps grown back past where this
    // was): the daemon cut it (--max-log-mib). Its new start.
    if (q.run == chunk->run && (q.offset > chunk->size || (cut && *cut != chunk->cut))) {
      cut = chunk->cut;
      std::cout.flush();
      std::cerr << "airtime logs: the log was cut (over the daemon's --max-log-mib); what "
                   "follows is from its new start\n";
      q.offset = 0;
      continue;
    }
    std::cout.write(chunk->data.data(), static_cast<std::streamsize>(chunk->data.size()));
    std::cout.flush();
    q.run = chunk->run;
    cut = chunk->cut;
    q.offset = chunk->offset + static_cast<int64_t>(chunk->data.size());
    q.limit = kDefaultLogLimit;
    if (!chunk->data.empty() && q.offset < chunk->size) continue;  // more is there now
    if (!l.follow || chunk->run_ended) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(*interval));
  }
}

void AddLogs(CLI::App& app, int* exit_code) {
  auto l = std::make_shared<LogsFlags>();
  AddCommand(
      app, exit_code, "logs", "print a workload's output (its latest run's stdout, or --stderr)",
      [l](CLI::App* cmd) {
        cmd->add_option("ID", l->id, "workload id or name")->required();
        cmd->add_flag("-f,--follow", l->follow, "then print what it writes, until the run ends");
        cmd->add_flag("--stderr", l->stderr_log,
                      "its stderr instead of its stdout (a local run; under Slurm both are in "
                      "stdout)");
        cmd->add_option("--run", l->run, "this run (`airtime describe` lists them; 0: the latest)")
            ->capture_default_str();
        cmd->add_option("--tail", l->tail, "only the last N bytes (0: the whole log)")
            ->capture_default_str();
        cmd->add_option("--interval", l->interval, "with -f, look every this long")
            ->capture_default_str();
      },
      [l](ApiClient& c, const ClientFlags&) { return ShowLogs(c, *l); });
}

void AddEvents(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  AddCommand(
      app, exit_code, "events",
      "a workload's history: submitted, each placement and why, preemptions and why, its end",
      [id](CLI::App* cmd) { cmd->add_option("ID", *id, "workload id or name")->required(); },
      [id](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.Events(*id), TableView(RenderEvents));
      });
}

void AddDescribe(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  AddCommand(
      app, exit_code, "describe", "show one workload: fields, runs and the explanation",
      [id](CLI::App* cmd) { cmd->add_option("ID", *id, "workload id or name")->required(); },
      [id](ApiClient& c, const ClientFlags& f) {
        const TimeMs now = NowMs();
        return Print(f, c.Get(*id),
                     Views{[now](const json& j) { return RenderWorkloadDetail(j, now); },
                           {},
                           nullptr,
                           "name"});
      });
}

void AddCancel(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  AddCommand(
      app, exit_code, "cancel", "cancel a workload",
      [id](CLI::App* cmd) { cmd->add_option("ID", *id, "workload id or name")->required(); },
      [id](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.Cancel(*id),
                     TableView([id](const json&) { return "cancelled " + *id + "\n"; }));
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
        return Print(f, c.SetPriority(*id, *value), TableView([&](const json&) {
                       return "priority of " + *id + " set to " + std::to_string(*value) + "\n";
                     }));
      });
}

void AddDemand(CLI::App& app, int* exit_code) {
  auto id = std::make_shared<std::string>();
  auto rps = std::make_shared<double>(0);
  auto cls = std::make_shared<std::string>();
  AddCommand(
      app, exit_code, "demand", "report a realtime service's request rate",
      [id, rps, cls](CLI::App* cmd) {
        cmd->add_option("ID", *id, "workload id or name")->required();
        cmd->add_option("RPS", *rps, "requests per second, 0 to 1e9")
            ->required()
            ->check(CLI::Range(0.0, kMaxRps, "RATE"));
        cmd->add_option("--class", *cls,
                        "the request class it is for (a service with model variants whose "
                        "demand is split by class)");
      },
      [id, rps, cls](ApiClient& c, const ClientFlags& f) {
        return Print(f, c.ReportDemand(*id, *rps, *cls), TableView([&](const json& j) {
                       return "demand of " + *id + (cls->empty() ? "" : " class " + *cls) +
                              " set to " + j.value("rps", json(*rps)).dump() + " rps\n";
                     }));
      });
}

void AddGpusAndLedger(CLI::App& app, int* exit_code) {
  auto none = [](CLI::App*) {};
  AddCommand(app, exit_code, "gpus", "list the node's GPUs and their workloads", none,
             [](ApiClient& c, const ClientFlags& f) {
               return Print(f, c.Gpus(), Views{RenderGpus, {}, "gpus", "uuid"});
             });
  AddCommand(app, exit_code, "ledger", "where installed GPU-hours went, by bucket", none,
             [](ApiClient& c, const ClientFlags& f) {
               return Print(f, c.Ledger(), TableView(RenderLedger));
             });
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
        return Print(f, c.Holds(*filter), TableView(RenderHolds));
      });
}

struct TopFlags {
  std::string interval = "2s";
  bool once = false;
};

// One frame's text (or JSON), or the error that kept it from being drawn.
StatusOr<std::string> TopFrame(ApiClient& c, OutputFormat format) {
  auto gpus = c.Gpus();
  if (!gpus.ok()) return gpus.status();
  auto workloads = c.List(ListFilter{"active", "", "", 0});
  if (!workloads.ok()) return workloads.status();
  auto ledger = c.Ledger();
  if (!ledger.ok()) return ledger.status();
  const json doc = {{"gpus", *gpus}, {"workloads", *workloads}, {"ledger", *ledger}};
  const TimeMs now = NowMs();
  return Show(format, doc, TableView([&](const json& d) {
                return RenderTopFrame(d["gpus"], d["workloads"], d["ledger"], now);
              }));
}

int RunTop(ApiClient& c, const ClientFlags& f, const TopFlags& t) {
  auto interval = ParseInterval("--interval", t.interval);
  if (!interval.ok()) return Fail(interval.status());
  if (t.once) {
    auto frame = TopFrame(c, f.format);
    if (!frame.ok()) return Fail(frame.status());
    std::cout << *frame;
    return 0;
  }
  while (true) {  // until Ctrl-C
    auto frame = TopFrame(c, f.format);
    std::cout << "\x1b[H\x1b[2J"
              << (frame.ok() ? *frame : "error: " + PrintableText(frame.status().message()))
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
  AddWait(app, exit_code);
  AddLogs(app, exit_code);
  AddEvents(app, exit_code);
  AddDescribe(app, exit_code);
  AddCancel(app, exit_code);
  AddPriority(app, exit_code);
  AddDemand(app, exit_code);
  AddGpusAndLedger(app, exit_code);
  AddHolds(app, exit_code);
  AddTop(app, exit_code);
  const std::vector<std::string> states = {"queued", "running", "succeeded", "failed", "cancelled"};
  std::vector<std::string> ls_states = states;
  ls_states.push_back("active");
  std::vector<std::string> wait_states(std::begin(kWaitStates), std::end(kWaitStates));
  std::vector<std::string> formats = SplitWords(OutputFormatChoices());
  AddCompletionCommand(
      app,
      FlagValues{
          {"-o", formats}, {"--output", formats}, {"--state", ls_states}, {"--for", wait_states}});
}

}  // namespace airtime
