// A self-contained HTML page: headings, paragraphs, tables and figures (inline SVG from
// svg_chart.h) with inline CSS; no script, no link, nothing fetched. Text is escaped
// (escape.h); the markup is XHTML-compatible (every element closed), so an XML parser reads
// the whole page. Not thread-safe; one page per writer.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace airtime {

class HtmlPage {
 public:
  explicit HtmlPage(std::string title);

  // <h2> (level 2) to <h4> (level 4); the page's title is its only <h1>.
  void Heading(int level, std::string_view text);
  // A paragraph of text; a newline in it breaks the line (a final one is dropped).
  void Paragraph(std::string_view text);
  // A table of text cells; cells that hold a number (FormatNumber, "12.3%") align right.
  void Table(const std::vector<std::string>& header,
             const std::vector<std::vector<std::string>>& rows);
  // A figure: `svg` is markup from svg_chart.h (trusted: it escapes its own labels); the
  // caption is text.
  void Figure(std::string svg, std::string_view caption);

  std::string Render() const;

 private:
  std::string title_;
  std::string body_;
};

}  // namespace airtime
