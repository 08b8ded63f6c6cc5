#include "airtime/html/page.h"

#include <algorithm>
#include <cctype>

#include "airtime/html/escape.h"

namespace airtime {
namespace {

// No '<' or '&' in it: the page stays well-formed XML.
constexpr std::string_view kStyle =
    "body{font-family:system-ui,sans-serif;margin:24px auto;max-width:800px;color:#222;"
    "padding:0 12px}"
    "h1{font-size:1.5em}h2{font-size:1.25em;margin-top:2em;border-bottom:1px solid #ddd}"
    "h3{font-size:1.05em;margin-top:1.5em}h4{font-size:1em}"
    "table{border-collapse:collapse;font-size:0.85em;margin:8px 0;display:block;overflow-x:auto;"
    "max-width:100%}"
    "th,td{border:1px solid #ddd;padding:2px 8px;text-align:left}"
    "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f4f4f4}"
    "figure{margin:8px 0 20px 0}figcaption{font-size:0.85em;color:#555}"
    "svg.chart{max-width:100%;height:auto}";

bool LooksNumeric(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) {
                       return std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' ||
                              c == '+' || c == '%' || c == 'e' || c == ' ' || c == '/';
                     }) &&
         std::any_of(s.begin(), s.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

}  // namespace

HtmlPage::HtmlPage(std::string title) : title_(std::move(title)) {}

void HtmlPage::Heading(int level, std::string_view text) {
  const std::string h = "h" + std::to_string(std::clamp(level, 2, 4));
  body_ += "<" + h + ">" + EscapeText(text) + "</" + h + ">\n";
}

void HtmlPage::Paragraph(std::string_view text) {
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  // Lines stay lines.
  std::string escaped = EscapeText(text), out;
  for (char c : escaped) out += c == '\n' ? std::string("<br/>") : std::string(1, c);
  body_ += "<p>" + out + "</p>\n";
}

void HtmlPage::Table(const std::vector<std::string>& header,
                     const std::vector<std::vector<std::string>>& rows) {
  body_ += "<table><thead><tr>";
  for (const std::string& h : header) body_ += "<th>" + EscapeText(h) + "</th>";
  body_ += "</tr></thead><tbody>\n";
  for (const auto& row : rows) {
    body_ += "<tr>";
    for (const std::string& cell : row)
      body_ += (LooksNumeric(cell) ? "<td class=\"n\">" : "<td>") + EscapeText(cell) + "</td>";
    body_ += "</tr>\n";
  }
  body_ += "</tbody></table>\n";
}

void HtmlPage::Figure(std::string svg, std::string_view caption) {
  body_ += "<figure>" + svg + "<figcaption>" + EscapeText(caption) + "</figcaption></figure>\n";
}

std::string HtmlPage::Render() const {
  return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/>"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/><title>" +
         EscapeText(title_) + "</title><style>" + std::string(kStyle) +
         "</style></head>\n<body>\n" + "<h1>" + EscapeText(title_) + "</h1>\n" + body_ +
         "</body></html>\n";
}

}  // namespace airtime
