#include "airtime/server/hold_record.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace airtime {
namespace {

using ::testing::HasSubstr;

HoldRecord Sample() {
  HoldBook b;
  HoldDecision d;
  d.at = 1796016031693;
  d.service = 3;
  d.name = "chat";
  d.needed = 1;
  d.held = 2;
  d.capacity_rps = 10;
  d.per_request = 0.002;
  d.cold_start = 30 * kSecond;
  d.replica_gpus = 2;
  d.waiting_density = 4;
  d.why = "kept: the last hour's peak needs 3";
  b.Record(d);
  b.Advance(3, d.at, d.at + kMinute, 25);  // a burst: 15 rps over the needed replica
  d.at += kHour;
  d.held = 0;
  d.why = "released";
  b.Record(d);
  b.Advance(3, d.at - kHour + kMinute, d.at + kMinute, 5);
  HoldRecord r;
  r.saved_at = d.at + kMinute;
  r.state = b.Save(1);
  return r;
}

TEST(HoldRecord, RoundTrips) {
  const HoldRecord r = Sample();
  ASSERT_EQ(r.state.calls.size(), 1u);
  ASSERT_EQ(r.state.base.at("chat").holds, 1);
  const std::string text = EncodeHoldRecord(r);
  auto back = DecodeHoldRecord(text);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->saved_at, r.saved_at);
  EXPECT_EQ(EncodeHoldRecord(*back), text);
  const ScoredHold& s = back->state.calls.at(0);
  EXPECT_EQ(s.decision.cold_start, 30 * kSecond);
  EXPECT_EQ(s.decision.replica_gpus, 2);
  EXPECT_EQ(s.until, kNever);
  EXPECT_GT(back->state.base.at("chat").protected_requests, 0);
}

TEST(HoldRecord, ANameThatIsNotUtf8IsWrittenWithAReplacementCharacter) {
  HoldRecord r = Sample();
  r.state.calls[0].decision.name = "bad\xff";
  r.state.base["bad\xfe"] = r.state.base.at("chat");
  auto back = DecodeHoldRecord(EncodeHoldRecord(r));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->state.calls[0].decision.name, "bad\xef\xbf\xbd");
  EXPECT_EQ(back->state.base.count("bad\xef\xbf\xbd"), 1u);
}

TEST(HoldRecord, ErrorsNameTheField) {
  EXPECT_THAT(DecodeHoldRecord("nope").status().message(), HasSubstr("not JSON"));
  EXPECT_THAT(DecodeHoldRecord("[]").status().message(), HasSubstr("not a JSON object"));
  EXPECT_THAT(DecodeHoldRecord("{}").status().message(), HasSubstr("'saved_at'"));
  std::string text = EncodeHoldRecord(Sample());
  text.replace(text.find("\"hours\""), 7, "\"hourz\"");
  EXPECT_THAT(DecodeHoldRecord(text).status().message(),
              HasSubstr("'decisions[0]'.'hours' is missing"));
  text = EncodeHoldRecord(Sample());
  text.replace(text.find("\"handoffs\""), 10, "\"handoffz\"");
  EXPECT_THAT(DecodeHoldRecord(text).status().message(),
              HasSubstr("'services.chat': hold summary: 'handoffs' is missing"));
}

}  // namespace
}  // namespace airtime
