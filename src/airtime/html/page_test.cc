#include "airtime/html/page.h"

#include <gtest/gtest.h>

#include "airtime/html/svg_chart.h"
#include "airtime/html/xml_check.h"

namespace airtime {
namespace {

TEST(HtmlPage, IsWellFormedSelfContainedAndEscapesText) {
  HtmlPage page("report for <b>cluster</b>");
  page.Heading(2, "scenario \"x\" & y");
  page.Paragraph("<script>alert(1)</script>");
  page.Paragraph("line one\nline two\n");
  page.Table({"policy", "return"}, {{"fifo<", "1.234"}, {"airtime", "12.5%"}});
  BarChart bars;
  bars.categories = {"a", "b"};
  bars.values = {{1}, {2}};
  page.Figure(RenderBarChart(bars), "caption & more");
  const std::string html = page.Render();
  ASSERT_TRUE(CheckWellFormedXml(html).ok()) << CheckWellFormedXml(html).message();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("<title>report for &lt;b&gt;cluster&lt;/b&gt;</title>"), std::string::npos);
  EXPECT_NE(html.find("<h2>scenario &quot;x&quot; &amp; y</h2>"), std::string::npos);
  EXPECT_NE(html.find("<td>fifo&lt;</td><td class=\"n\">1.234</td>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"n\">12.5%</td>"), std::string::npos);
  EXPECT_NE(html.find("<figure><svg"), std::string::npos);
  EXPECT_NE(html.find("<p>line one<br/>line two</p>"), std::string::npos);
  EXPECT_EQ(html.find("http"), std::string::npos);  // nothing to fetch, not even a namespace
  EXPECT_EQ(html.find("<link"), std::string::npos);
}

}  // namespace
}  // namespace airtime
