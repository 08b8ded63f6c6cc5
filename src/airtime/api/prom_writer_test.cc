// PromWriter tests: exact exposition text, escaping, family grouping, histograms.
#include "airtime/api/prom_writer.h"

#include <gtest/gtest.h>

#include <cmath>

namespace airtime {
namespace {

TEST(PromWriter, CountersAndGaugesWithHelpAndTypeOnce) {
  PromWriter w;
  w.Gauge("airtime_gpus", "Installed GPUs.", 8);
  w.Counter("airtime_submitted_total", "Workloads accepted.", 3, {{"tenant", "a"}});
  w.Gauge("airtime_gpus_free", "Free GPUs.", 2.5);
  w.Counter("airtime_submitted_total", "Workloads accepted.", 4, {{"tenant", "b"}});
  EXPECT_EQ(w.Text(),
            "# HELP airtime_gpus Installed GPUs.\n"
            "# TYPE airtime_gpus gauge\n"
            "airtime_gpus 8\n"
            "# HELP airtime_submitted_total Workloads accepted.\n"
            "# TYPE airtime_submitted_total counter\n"
            "airtime_submitted_total{tenant=\"a\"} 3\n"
            "airtime_submitted_total{tenant=\"b\"} 4\n"
            "# HELP airtime_gpus_free Free GPUs.\n"
            "# TYPE airtime_gpus_free gauge\n"
            "airtime_gpus_free 2.5\n");
}

TEST(PromWriter, EscapesLabelValuesAndHelp) {
  PromWriter w;
  w.Gauge("m", "line one\nback\\slash \"quoted\"", 1,
          {{"name", "a\\b \"c\"\nd"}, {"bad-label", "x"}});
  EXPECT_EQ(w.Text(),
            "# HELP m line one\\nback\\\\slash \"quoted\"\n"
            "# TYPE m gauge\n"
            "m{name=\"a\\\\b \\\"c\\\"\\nd\",bad_label=\"x\"} 1\n");
}

// A workload name once carried a raw NUL into /metrics: label values are valid UTF-8 with no
// control character other than the escaped newline.
TEST(PromWriter, LabelValuesHoldNoNulControlOrInvalidUtf8) {
  EXPECT_EQ(PromWriter::EscapeLabelValue(std::string("a\0b", 3)),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(PromWriter::EscapeLabelValue("t\tx\r\x7f"), "t\xEF\xBF\xBDx\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(PromWriter::EscapeLabelValue("bad\xff"), "bad\xEF\xBF\xBD");
  EXPECT_EQ(PromWriter::EscapeLabelValue("caf\xC3\xA9 \xF0\x9F\x98\x80"),
            "caf\xC3\xA9 \xF0\x9F\x98\x80");
  EXPECT_EQ(PromWriter::EscapeLabelValue("a\nb"), "a\\nb");
}

TEST(PromWriter, HistogramIsCumulativeWithInfSumAndCount) {
  PromHistogram h({0.1, 1, 10});
  for (double v : {0.05, 0.1, 0.5, 5.0, 50.0}) h.Observe(v);
  PromWriter w;
  w.Histogram("airtime_cycle_seconds", "Decision cycle time.", h, {{"policy", "fifo"}});
  EXPECT_EQ(w.Text(),
            "# HELP airtime_cycle_seconds Decision cycle time.\n"
            "# TYPE airtime_cycle_seconds histogram\n"
            "airtime_cycle_seconds_bucket{policy=\"fifo\",le=\"0.1\"} 2\n"
            "airtime_cycle_seconds_bucket{policy=\"fifo\",le=\"1\"} 3\n"
            "airtime_cycle_seconds_bucket{policy=\"fifo\",le=\"10\"} 4\n"
            "airtime_cycle_seconds_bucket{policy=\"fifo\",le=\"+Inf\"} 5\n"
            "airtime_cycle_seconds_sum{policy=\"fifo\"} 55.65\n"
            "airtime_cycle_seconds_count{policy=\"fifo\"} 5\n");
}

TEST(PromWriter, FormatsSpecialValues) {
  EXPECT_EQ(PromWriter::FormatValue(NAN), "NaN");
  EXPECT_EQ(PromWriter::FormatValue(INFINITY), "+Inf");
  EXPECT_EQ(PromWriter::FormatValue(-INFINITY), "-Inf");
  EXPECT_EQ(PromWriter::FormatValue(1e21), "1e+21");
  EXPECT_EQ(PromWriter::FormatValue(-0.25), "-0.25");
  EXPECT_EQ(PromWriter::FormatValue(123456789), "123456789");
}

}  // namespace
}  // namespace airtime
