#include "airtime/server/ledger_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using ::testing::HasSubstr;

LedgerRecord Sample() {
  LedgerRecord r;
  r.since = 1'000'000;
  r.saved_at = 4'600'000;
  r.unobserved = 30'000;
  r.totals.milli_ms[static_cast<size_t>(Bucket::kUseful)] = 5'000'000'000;
  r.totals.milli_ms[static_cast<size_t>(Bucket::kFreeNoDemand)] = 2'000'000'001;
  r.totals.milli_ms[static_cast<size_t>(Bucket::kReservedHeadroom)] = 140'000'000;
  r.totals.reserved_held_milli_ms = 100'000'000;
  r.totals.installed_milli_ms = 7'140'000'001;
  r.value = 12.25;
  return r;
}

TEST(LedgerRecord, RoundTripsExactly) {
  const LedgerRecord r = Sample();
  auto back = DecodeLedgerRecord(EncodeLedgerRecord(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->since, r.since);
  EXPECT_EQ(back->saved_at, r.saved_at);
  EXPECT_EQ(back->unobserved, r.unobserved);
  EXPECT_EQ(back->totals.milli_ms, r.totals.milli_ms);
  EXPECT_EQ(back->totals.installed_milli_ms, r.totals.installed_milli_ms);
  EXPECT_EQ(back->totals.reserved_held_milli_ms, r.totals.reserved_held_milli_ms);
  EXPECT_EQ(back->value, r.value);
}

// The hours and value per GPU type go by the type's name and come back to its id; records
// without them (an airtime before costs) read as none; bad ones name the field.
TEST(LedgerRecord, PerTypeTotalsAndValueRoundTrip) {
  const GpuCatalog& cat = GpuCatalog::Builtin();
  const auto h100 = static_cast<size_t>(*cat.Find("H100"));
  LedgerRecord r = Sample();
  r.totals.by_type.assign(cat.size(), BucketTotals{});
  static_cast<BucketTotals&>(r.totals.by_type[h100]) = r.totals;
  r.value_by_type.assign(cat.size(), 0.0);
  r.value_by_type[h100] = 12.25;
  const std::string text = EncodeLedgerRecord(r);
  EXPECT_THAT(text, HasSubstr("\"by_type\":{\"H100\":"));
  auto back = DecodeLedgerRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  ASSERT_EQ(back->totals.by_type.size(), cat.size());
  EXPECT_EQ(back->totals.by_type[h100].milli_ms, r.totals.milli_ms);
  EXPECT_EQ(back->totals.by_type[h100].reserved_held_milli_ms, r.totals.reserved_held_milli_ms);
  EXPECT_EQ(back->value_by_type[h100], 12.25);

  LedgerRecord plain = Sample();
  auto old = DecodeLedgerRecord(EncodeLedgerRecord(plain));
  ASSERT_TRUE(old.ok());
  for (const BucketTotals& t : old->totals.by_type) EXPECT_EQ(t.installed_milli_ms, 0);

  std::string bad = text;
  bad.replace(bad.find("\"H100\":{"), 6, "\"H900\"");
  auto refused = DecodeLedgerRecord(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("'by_type.H900' is not a GPU type"));
  std::string uneven = text;
  const size_t at = uneven.find("\"installed_milli_ms\":7140000001", uneven.find("by_type"));
  ASSERT_NE(at, std::string::npos) << text;
  uneven.replace(at, 31, "\"installed_milli_ms\":7140000002");
  auto refused2 = DecodeLedgerRecord(uneven);
  ASSERT_FALSE(refused2.ok());
  EXPECT_THAT(refused2.status().message(), HasSubstr("'by_type.H100.buckets' add up to"));
}

// The held part of reserved_headroom: absent in older records (none then), never more than
// the bucket.
TEST(LedgerRecord, ReservedHeldIsOptionalAndWithinItsBucket) {
  const std::string good = EncodeLedgerRecord(Sample());
  std::string old = good;
  const size_t at = old.find("\"reserved_held_milli_ms\":100000000,");
  ASSERT_NE(at, std::string::npos) << good;
  old.erase(at, std::string("\"reserved_held_milli_ms\":100000000,").size());
  auto back = DecodeLedgerRecord(old);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->totals.reserved_held_milli_ms, 0);
  std::string over = good;
  over.replace(over.find("100000000"), 9, "900000000");
  EXPECT_THAT(DecodeLedgerRecord(over).status().message(),
              HasSubstr("'reserved_held_milli_ms' is more than the reserved_headroom bucket"));
}

TEST(LedgerRecord, BadTextNamesWhatIsWrong) {
  EXPECT_THAT(DecodeLedgerRecord("{").status().message(), HasSubstr("not JSON"));
  EXPECT_THAT(DecodeLedgerRecord("[]").status().message(), HasSubstr("not a JSON object"));
  const std::string good = EncodeLedgerRecord(Sample());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = good;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return DecodeLedgerRecord(t.replace(at, from.size(), to)).status().message();
  };
  EXPECT_THAT(with("\"since\":1000000", "\"since\":\"x\""), HasSubstr("'since' is not an integer"));
  EXPECT_THAT(with("\"saved_at\":4600000", "\"saved_at\":5"),
              HasSubstr("'saved_at' is before 'since'"));
  EXPECT_THAT(with("\"useful\":5000000000", "\"useful\":-1"),
              HasSubstr("'buckets.useful' is negative"));
  EXPECT_THAT(with("\"useful\"", "\"busy\""),
              HasSubstr("'buckets.busy' is not a bucket of this airtime"));
  EXPECT_THAT(with("\"useful\":5000000000", "\"useful\":5000000001"),
              HasSubstr("'buckets' add up to 7140000002, not to 'installed_milli_ms'"));
  EXPECT_THAT(with("\"value\":12.25", "\"value\":null"), HasSubstr("'value'"));
  EXPECT_THAT(with("\"unobserved_ms\":30000", "\"unobserved_ms\":9999999"),
              HasSubstr("'unobserved_ms' is longer than the window"));
}

TEST(LedgerRecord, BucketsMissingFromAnOlderRecordCountAsZero) {
  LedgerRecord r = Sample();
  std::string t = EncodeLedgerRecord(r);
  // Drop the "down" bucket (0 here), as a record written before it existed would.
  const std::string down = ",\"down\":0";
  const size_t at = t.find(down);
  ASSERT_NE(at, std::string::npos) << t;
  auto back = DecodeLedgerRecord(t.erase(at, down.size()));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->totals.milli_ms[static_cast<size_t>(Bucket::kDown)], 0);
}

}  // namespace
}  // namespace airtime
