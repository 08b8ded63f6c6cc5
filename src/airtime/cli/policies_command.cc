#include "airtime/cli/policies_command.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <memory>

#include "airtime/base/strings.h"
#include "airtime/policies/registry.h"

namespace airtime {

std::string FormatPolicyList(const PolicyRegistry& registry, PolicyListFormat format) {
  const std::vector<std::string> names = registry.names();
  const std::string compared = Join(registry.compared_names(), ",");
  switch (format) {
    case PolicyListFormat::kJson: {
      nlohmann::json list = nlohmann::json::array();
      for (const auto& n : names)
        list.push_back({{"name", n},
                        {"description", registry.description(n)},
                        {"parameters", registry.params(n)}});
      nlohmann::json out = {{"policies", list}, {"sim_default", compared}};
      return out.dump(2) + "\n";
    }
    case PolicyListFormat::kMarkdown: {
      std::string out = "| policy | parameters | what it does |\n|---|---|---|\n";
      for (const auto& n : names) {
        std::vector<std::string> keys;
        for (const auto& k : registry.params(n)) keys.push_back("`" + k + "`");
        out += "| `" + n + "` | " + (keys.empty() ? "none" : Join(keys, ", ")) + " | " +
               registry.description(n) + " |\n";
      }
      out += "\n`airtime sim` compares these by default, in this order: `--policy " + compared +
             "` (every policy but those that need an input of their own).\n";
      return out;
    }
    case PolicyListFormat::kText:
      break;
  }
  size_t width = 0;
  for (const auto& n : names) width = std::max(width, n.size());
  std::string out;
  for (const auto& n : names) {
    const auto& keys = registry.params(n);
    out += n + std::string(width + 2 - n.size(), ' ') + registry.description(n) + "\n" +
           std::string(width + 2, ' ') +
           "parameters: " + (keys.empty() ? "none" : Join(keys, ", ")) + "\n";
  }
  out +=
      "\nairtime sim --policy default (every policy above but those that need an input of "
      "their own, in this order): " +
      compared + "\n";
  return out;
}

void AddPoliciesCommand(CLI::App& app, int* exit_code) {
  auto json = std::make_shared<bool>(false);
  auto markdown = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand(
      "policies",
      "list the policies airtime ships, in the order `airtime sim` compares them by default");
  auto* j = cmd->add_flag("--json", *json, "print JSON instead of text");
  cmd->add_flag("--markdown", *markdown, "print the Markdown table of docs/policies.md")
      ->excludes(j);
  cmd->callback([json, markdown, exit_code] {
    const PolicyListFormat f = *json       ? PolicyListFormat::kJson
                               : *markdown ? PolicyListFormat::kMarkdown
                                           : PolicyListFormat::kText;
    std::cout << FormatPolicyList(PolicyRegistry::Builtin(), f);
    *exit_code = std::cout ? 0 : 1;
  });
}

}  // namespace airtime
