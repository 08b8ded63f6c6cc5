#include "airtime/traces/csv_reader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "airtime/traces/import_options.h"
#include "airtime/traces/trace_source.h"

namespace airtime {
namespace {

using ::testing::HasSubstr;

TEST(CsvReaderTest, ReadsHeaderFieldsAndLineNumbers) {
  CsvReader r = CsvReader::FromText(
      "\xEF\xBB\xBF"
      "a,b,c\r\n1, 2 ,x\r\n\r\n  \n4,5,6",
      "t.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  EXPECT_EQ(r.columns(), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(r.Column("b"), 1u);
  EXPECT_FALSE(r.Column("z").has_value());
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.line(), 2);
  ASSERT_TRUE(r.CheckFieldCount().ok());
  EXPECT_EQ(r.field(1), "2");
  EXPECT_EQ(*r.Int(1), 2);
  EXPECT_EQ(r.field(2), "x");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.line(), 5);  // blank lines 3 and 4 skipped
  EXPECT_EQ(*r.Double(2), 6.0);
  EXPECT_FALSE(r.Next());
  EXPECT_FALSE(r.Next());
}

TEST(CsvReaderTest, ErrorsNameFileLineAndColumn) {
  CsvReader r = CsvReader::FromText("x,duration\n1,abc\n1\n", "dir/t.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  EXPECT_EQ(r.base_name(), "t.csv");
  ASSERT_TRUE(r.Next());
  auto d = r.Double(1);
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(d.status().message(), "dir/t.csv:2: column 'duration': expected a number, got 'abc'");
  EXPECT_FALSE(r.Int(1).ok());
  ASSERT_TRUE(r.Next());
  Status s = r.CheckFieldCount();
  EXPECT_EQ(s.message(), "dir/t.csv:3: expected 2 fields (x,duration), got 1");
  auto missing = r.RequireColumn("gpus");
  EXPECT_EQ(missing.status().message(),
            "dir/t.csv:1: missing column 'gpus' (columns: x, duration)");
}

// A binary file's bytes in a message are escapes, never control sequences for the terminal.
TEST(CsvReaderTest, MessagesShowControlBytesEscaped) {
  CsvReader r = CsvReader::FromText("\x1b[2J,d\x07\n1,\x1b]0;x\n", "b.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  auto missing = r.RequireColumn("gpus");
  EXPECT_EQ(missing.status().message(),
            "b.csv:1: missing column 'gpus' (columns: \\x1B[2J, d\\x07)");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.Double(1).status().message(),
            "b.csv:2: column 'd\\x07': expected a number, got '\\x1B]0;x'");
}

TEST(CsvReaderTest, HandlesSimpleQuoting) {
  CsvReader r = CsvReader::FromText("a,b,c\n\"x,y\",\"say \"\"hi\"\"\",3\n\"open,4,5\n", "q.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  ASSERT_TRUE(r.Next());
  ASSERT_TRUE(r.CheckFieldCount().ok());
  EXPECT_EQ(r.field(0), "x,y");
  EXPECT_EQ(r.field(1), "say \"hi\"");
  EXPECT_EQ(r.field(2), "3");
  ASSERT_TRUE(r.Next());
  EXPECT_THAT(r.CheckFieldCount().message(), HasSubstr("q.csv:3: malformed quoted field"));
}

TEST(CsvReaderTest, WholeNumbersAcceptIntegralFloats) {
  CsvReader r = CsvReader::FromText("n\n8.0\n8\n1.5\n-2\n", "w.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(*r.WholeNumber(0), 8);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(*r.WholeNumber(0), 8);
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.WholeNumber(0).status().message(),
            "w.csv:4: column 'n': expected a whole number, got '1.5'");
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(*r.WholeNumber(0), -2);
}

TEST(CsvReaderTest, HeaderlessColumnsAndEmptyFiles) {
  CsvReader r = CsvReader::FromText("m1,T4\n", "h.csv");
  r.SetColumns({"machine", "gpu_type"});
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.line(), 1);
  EXPECT_EQ(r.FieldError(1, "a GPU type").message(),
            "h.csv:1: column 'gpu_type': expected a GPU type, got 'T4'");
  CsvReader empty = CsvReader::FromText("\n\n", "e.csv");
  EXPECT_THAT(empty.ReadHeader().message(), HasSubstr("e.csv: empty file"));
  CsvReader dup = CsvReader::FromText("a,a\n", "d.csv");
  EXPECT_THAT(dup.ReadHeader().message(), HasSubstr("repeats column 'a'"));
}

TEST(CsvReaderTest, MissingFileIsNotFound) {
  auto r = CsvReader::Open("/nonexistent/dir/trace.csv");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("/nonexistent/dir/trace.csv"));
}

TEST(CsvReaderTest, ReaderSurvivesAMove) {
  CsvReader a = CsvReader::FromText("a\nxy\n", "m.csv");
  ASSERT_TRUE(a.ReadHeader().ok());
  ASSERT_TRUE(a.Next());
  CsvReader b = std::move(a);
  EXPECT_EQ(b.field(0), "xy");
}

TEST(ImportOptionsTest, HandleBadRowKeepsTheFirstTenMessages) {
  ImportOptions strict;
  EXPECT_FALSE(HandleBadRow(InvalidArgument("x"), strict, nullptr).ok());
  ImportOptions lenient;
  lenient.skip_bad_rows = true;
  ImportStats stats;
  for (int i = 0; i < 12; ++i)
    EXPECT_TRUE(HandleBadRow(InvalidArgument("e" + std::to_string(i)), lenient, &stats).ok());
  EXPECT_EQ(stats.rows_skipped, 12u);
  ASSERT_EQ(stats.first_errors.size(), ImportStats::kMaxKeptErrors);
  EXPECT_EQ(stats.first_errors.front(), "e0");
  EXPECT_EQ(stats.first_errors.back(), "e9");
  EXPECT_TRUE(HandleBadRow(InvalidArgument("x"), lenient, nullptr).ok());
}

// A NUL inside a field is an error naming the file, line and column, never cut silently.
TEST(CsvReaderTest, NulByteInAFieldIsAnErrorNamingTheLine) {
  CsvReader r = CsvReader::FromText(std::string("name,gpus\nok,1\nab\0cd,2\n", 24), "n.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  ASSERT_TRUE(r.Next());
  EXPECT_TRUE(r.CheckFieldCount().ok());
  ASSERT_TRUE(r.Next());
  Status s = r.CheckFieldCount();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "n.csv:3: column 'name': NUL byte in the field");
}

TEST(CsvReaderTest, NulByteInTheHeaderIsAnError) {
  CsvReader r = CsvReader::FromText(std::string("na\0me,gpus\n", 11), "n.csv");
  EXPECT_THAT(r.ReadHeader().message(), HasSubstr("n.csv:1: malformed header: column '#1'"));
}

TEST(CsvReaderTest, OverlongLineIsABrokenRecord) {
  CsvReader r = CsvReader::FromText("a,b\n" + std::string(kMaxTraceLineBytes + 1, 'x') + "\n1,2\n",
                                    "long.csv");
  ASSERT_TRUE(r.ReadHeader().ok());
  ASSERT_TRUE(r.Next());
  EXPECT_THAT(r.CheckFieldCount().message(),
              HasSubstr("long.csv:2: line of 1048577 bytes, longer than the 1048576-byte limit"));
  ASSERT_TRUE(r.Next());  // the next record still reads
  EXPECT_TRUE(r.CheckFieldCount().ok());
}

// /dev/zero never ends: the simulator used to read it until std::bad_alloc aborted it.
TEST(CsvReaderTest, DevZeroIsRefusedNotReadForever) {
  auto r = CsvReader::Open("/dev/zero");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "trace file '/dev/zero' is a character device, not a regular file");
  for (const auto& format : KnownWorkloadTraceFormats()) {
    auto w = ImportWorkloadTrace(format, "/dev/zero");
    ASSERT_FALSE(w.ok()) << format;
    EXPECT_THAT(w.status().message(), HasSubstr("not a regular file")) << format;
  }
}

// Found by fuzzing (fuzz/regressions/pai): a record whose first field opens a quote that never
// closes has no fields, and the PAI importer read field 0 of it (out of bounds).
TEST(CsvReaderTest, AFieldPastTheEndOfABrokenRecordIsEmpty) {
  CsvReader r = CsvReader::FromText("\"x,CPU,96\n", "q.csv");
  r.SetColumns({"machine", "gpu_type", "cap_cpu"});
  ASSERT_TRUE(r.Next());
  EXPECT_EQ(r.field_count(), 0u);
  EXPECT_EQ(r.field(0), "");
  EXPECT_EQ(r.field(7), "");
  EXPECT_THAT(r.CheckFieldCount().message(), HasSubstr("q.csv:1: malformed quoted field"));
}

}  // namespace
}  // namespace airtime
