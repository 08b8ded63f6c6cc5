#include "airtime/config/yaml_budget.h"

#include <yaml.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

namespace airtime::yaml_internal {
namespace {

// Owns a libyaml parser and the current event, freeing both on every path.
class EventParser {
 public:
  explicit EventParser(std::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_)
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
  }
  ~EventParser() {
    if (has_event_) yaml_event_delete(&event_);
    if (ok_) yaml_parser_delete(&parser_);
  }
  EventParser(const EventParser&) = delete;
  EventParser& operator=(const EventParser&) = delete;

  bool initialized() const { return ok_; }
  // The next event; false on a syntax error (see parser()).
  bool Next() {
    if (has_event_) yaml_event_delete(&event_);
    has_event_ = yaml_parser_parse(&parser_, &event_) != 0;
    return has_event_;
  }
  const yaml_event_t& event() const { return event_; }
  const yaml_parser_t& parser() const { return parser_; }

 private:
  yaml_parser_t parser_{};
  yaml_event_t event_{};
  bool ok_ = false;
  bool has_event_ = false;
};

std::string Where(std::string_view filename, const yaml_mark_t& mark) {
  return std::string(filename) + ":" + std::to_string(mark.line + 1);
}

Status SyntaxError(std::string_view filename, const yaml_parser_t& p) {
  std::string problem = p.problem ? p.problem : "invalid YAML";
  // Scanner and parser errors carry a mark; reader errors (bad UTF-8, NUL) an offset.
  yaml_mark_t mark = p.problem_mark;
  if (p.error == YAML_READER_ERROR) {
    problem += " (byte offset " + std::to_string(p.problem_offset) + ")";
    mark = p.mark;
  } else {
    problem += " at column " + std::to_string(mark.column + 1);
  }
  if (p.context) problem += std::string(" (") + p.context + ")";
  return InvalidArgument(Where(filename, mark) + ": YAML syntax error: " + problem);
}

Status OverBudget(std::string_view filename, const yaml_mark_t& mark, const std::string& what,
                  size_t limit) {
  return InvalidArgument(Where(filename, mark) + ": YAML too large: " + what + " (the limit is " +
                         std::to_string(limit) + ")");
}

}  // namespace

StatusOr<YamlShape> CheckYamlBudget(std::string_view text, std::string_view filename,
                                    const YamlBudget& budget) {
  if (text.size() > budget.max_bytes)
    return InvalidArgument(std::string(filename) +
                           ": YAML too large: " + std::to_string(text.size()) +
                           " bytes (the limit is " + std::to_string(budget.max_bytes) + ")");
  EventParser events(text);
  if (!events.initialized()) return Status(StatusCode::kInternal, "cannot start the YAML parser");

  YamlShape shape;
  size_t aliases = 0;
  // Node count at the start of each open collection that has an anchor (SIZE_MAX: none), so
  // that its size is known when it closes.
  std::vector<std::pair<std::string, size_t>> open;
  std::map<std::string, size_t, std::less<>> anchored;  // anchor -> nodes it spans
  int depth = 0;
  auto add_nodes = [&](size_t n, const yaml_mark_t& mark) -> Status {
    shape.nodes = n > budget.max_nodes - std::min(shape.nodes, budget.max_nodes)
                      ? budget.max_nodes + 1
                      : shape.nodes + n;
    if (shape.nodes > budget.max_nodes)
      return OverBudget(
          filename, mark,
          "more than " + std::to_string(budget.max_nodes) + " nodes, aliases counted at their size",
          budget.max_nodes);
    return OkStatus();
  };
  auto anchor_of = [](const yaml_char_t* a) {
    return a ? std::string(reinterpret_cast<const char*>(a)) : std::string();
  };

  while (true) {
    if (!events.Next()) return SyntaxError(filename, events.parser());
    const yaml_event_t& e = events.event();
    const yaml_mark_t& mark = e.start_mark;
    switch (e.type) {
      case YAML_STREAM_END_EVENT:
        return shape;
      case YAML_DOCUMENT_START_EVENT:
        if (++shape.documents > budget.max_documents)
          return OverBudget(filename, mark,
                            "more than " + std::to_string(budget.max_documents) + " documents",
                            budget.max_documents);
        anchored.clear();  // anchors do not cross documents
        break;
      case YAML_SCALAR_EVENT: {
        if (e.data.scalar.length > budget.max_scalar_bytes)
          return OverBudget(filename, mark,
                            "a scalar of " + std::to_string(e.data.scalar.length) + " bytes",
                            budget.max_scalar_bytes);
        // A NUL can only come from an escape ("\0", "\x00", "\u0000" in JSON): no value may
        // hold one, since C strings (paths, argv, env) would silently cut it.
        if (std::string_view(reinterpret_cast<const char*>(e.data.scalar.value),
                             e.data.scalar.length)
                .find('\0') != std::string_view::npos)
          return InvalidArgument(Where(filename, mark) +
                                 ": a value holds a NUL byte (an escaped \\0 or \\u0000), which "
                                 "no field allows, at column " +
                                 std::to_string(mark.column + 1));
        AIRTIME_RETURN_IF_ERROR(add_nodes(1, mark));
        std::string anchor = anchor_of(e.data.scalar.anchor);
        if (!anchor.empty()) anchored[anchor] = 1;
        break;
      }
      case YAML_SEQUENCE_START_EVENT:
      case YAML_MAPPING_START_EVENT: {
        if (++depth > budget.max_depth)
          return OverBudget(filename, mark,
                            "more than " + std::to_string(budget.max_depth) + " nested levels",
                            static_cast<size_t>(budget.max_depth));
        shape.depth = std::max(shape.depth, depth);
        AIRTIME_RETURN_IF_ERROR(add_nodes(1, mark));
        const yaml_char_t* a = e.type == YAML_SEQUENCE_START_EVENT ? e.data.sequence_start.anchor
                                                                   : e.data.mapping_start.anchor;
        open.emplace_back(anchor_of(a), shape.nodes - 1);
        break;
      }
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        --depth;
        if (!open.empty()) {
          auto [anchor, start] = std::move(open.back());
          open.pop_back();
          if (!anchor.empty()) anchored[anchor] = shape.nodes - start;
        }
        break;
      case YAML_ALIAS_EVENT: {
        if (++aliases > budget.max_aliases)
          return OverBudget(filename, mark,
                            "more than " + std::to_string(budget.max_aliases) + " aliases",
                            budget.max_aliases);
        std::string anchor = anchor_of(e.data.alias.anchor);
        // Inside a node that names the same anchor again, YAML means the earlier node, but
        // yaml-cpp takes the enclosing one (the alias would name a node that contains it).
        for (const auto& [name, start] : open)
          if (name == anchor && anchored.count(anchor))
            return InvalidArgument(Where(filename, mark) + ": alias '*" + anchor +
                                   "' inside the node anchored '&" + anchor +
                                   "' again: give one of the two anchors another name");
        auto it = anchored.find(anchor);
        if (it == anchored.end())
          return InvalidArgument(Where(filename, mark) + ": YAML syntax error: alias '*" + anchor +
                                 "' names no anchor defined before it");
        AIRTIME_RETURN_IF_ERROR(add_nodes(it->second, mark));
        break;
      }
      default:
        break;
    }
  }
}

}  // namespace airtime::yaml_internal
