#include "airtime/fgd/fgd_expected.h"

#include <filesystem>
#include <limits>

#include "airtime/fgd/fgd_protocol.h"
#include "airtime/traces/csv_reader.h"

namespace airtime {

StatusOr<std::vector<FgdPublishedCurve>> ReadFgdPublished(const std::string& path) {
  auto reader = CsvReader::Open(path);
  if (!reader.ok()) return reader.status();
  CsvReader& r = *reader;
  AIRTIME_RETURN_IF_ERROR(r.ReadHeader());
  size_t workload = 0, policy = 0, tune = 0, seed = 0, gpus = 0;
  for (auto [name, slot] : {std::pair<const char*, size_t*>{"workload", &workload},
                            {"sc_policy", &policy},
                            {"tune", &tune},
                            {"seed", &seed},
                            {"total_gpus", &gpus}}) {
    auto col = r.RequireColumn(name);
    if (!col.ok()) return col.status();
    *slot = *col;
  }
  std::vector<size_t> bins;
  for (int b = 0; b < kFgdBins; ++b) {
    auto col = r.RequireColumn(std::to_string(b));
    if (!col.ok()) return col.status();
    bins.push_back(*col);
  }
  std::vector<FgdPublishedCurve> out;
  while (r.Next()) {
    AIRTIME_RETURN_IF_ERROR(r.CheckFieldCount());
    FgdPublishedCurve c;
    c.workload.assign(r.field(workload));
    c.policy.assign(r.field(policy));
    auto t = r.Double(tune);
    if (!t.ok()) return t.status();
    auto s = r.Int(seed);
    if (!s.ok() || *s < 0) return r.FieldError(seed, "a seed >= 0");
    auto g = r.Int(gpus);
    if (!g.ok()) return g.status();
    c.tune = *t;
    c.seed = static_cast<uint64_t>(*s);
    c.total_gpus = static_cast<int>(*g);
    for (size_t col : bins) {
      if (r.field(col).empty()) {
        c.used.push_back(std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      auto v = r.Double(col);
      if (!v.ok()) return v.status();
      c.used.push_back(*v);
    }
    out.push_back(std::move(c));
  }
  return out;
}

double FgdPublishedMean(const std::vector<FgdPublishedCurve>& curves, const std::string& workload,
                        const std::string& policy, int bin) {
  double sum = 0;
  int n = 0;
  for (const auto& c : curves) {
    if (c.workload != workload || c.policy != policy) continue;
    const double v = c.used[static_cast<size_t>(bin)];
    if (v == v) {
      sum += v;
      ++n;
    }
  }
  return n > 0 ? sum / n : std::numeric_limits<double>::quiet_NaN();
}

std::string FgdPublishedPolicy(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  if (name == "random") return "01-Random";
  if (name == "bestfit") return "05-BestFit";
  if (name == "fgd") return "06-FGD";
  return "";
}

std::string FgdPublishedPathFor(const std::string& pods_csv) {
  return (std::filesystem::path(pods_csv).parent_path() / "fgd_expected_allocation.csv").string();
}

std::string FgdPublishedWorkload(const std::string& pods_csv) {
  return std::filesystem::path(pods_csv).stem().string();
}

}  // namespace airtime
