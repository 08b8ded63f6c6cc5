// TenantUsers: the tenant -> user mapping file and its default.
#include "airtime/server/tenant_users.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

namespace airtime {
namespace {

using ::testing::HasSubstr;

TEST(TenantUsers, MapsATenantToItsUserAndGroup) {
  auto users = TenantUsers::Parse("# who runs what\n\nteam-a nobody\nteam-b nobody:daemon\n", "tu");
  ASSERT_TRUE(users.ok()) << users.status().message();
  auto a = users->Resolve("team-a");
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->name, "nobody");
  EXPECT_EQ(a->uid, 65534u);
  EXPECT_EQ(a->gid, 65534u);
  auto b = users->Resolve("team-b");
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(b->uid, 65534u);
  EXPECT_EQ(b->gid, 1u);  // Debian's group "daemon"
}

TEST(TenantUsers, ATenantWithoutALineAndWithoutItsDefaultUserIsRefused) {
  auto users = TenantUsers::Parse("", "DATA/tenant-users");
  ASSERT_TRUE(users.ok());
  auto u = users->Resolve("no-such-tenant-xyz");
  ASSERT_FALSE(u.ok());
  EXPECT_EQ(u.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(u.status().message(),
              HasSubstr("tenant 'no-such-tenant-xyz' has no user to run as: add a line "
                        "'no-such-tenant-xyz USER' to DATA/tenant-users or create the user "
                        "airtime-no-such-tenant-xyz"));
}

TEST(TenantUsers, RootAndTheDaemonsOwnUserAreRefused) {
  passwd* self = getpwuid(geteuid());
  ASSERT_NE(self, nullptr);
  auto users = TenantUsers::Parse("r root\nz 0\nself " + std::string(self->pw_name) + "\n", "tu");
  ASSERT_TRUE(users.ok());
  for (const char* tenant : {"r", "z", "self"}) {
    auto u = users->Resolve(tenant);
    EXPECT_FALSE(u.ok()) << tenant;
  }
  EXPECT_THAT(users->Resolve("r").status().message(), HasSubstr("is root"));
}

TEST(TenantUsers, AMappingToAMissingUserNamesIt) {
  auto users = TenantUsers::Parse("team-a airtime-no-such-user-q\n", "tu");
  ASSERT_TRUE(users.ok());
  auto u = users->Resolve("team-a");
  ASSERT_FALSE(u.ok());
  EXPECT_THAT(u.status().message(),
              HasSubstr("tenant 'team-a': tu says user 'airtime-no-such-user-q': user "
                        "'airtime-no-such-user-q' does not exist"));
}

TEST(TenantUsers, BadLinesNameTheLine) {
  EXPECT_THAT(TenantUsers::Parse("a b\nteam-a\n", "tu").status().message(),
              HasSubstr("tu:2: expected 'TENANT USER[:GROUP]'"));
  EXPECT_THAT(TenantUsers::Parse("a b c\n", "tu").status().message(), HasSubstr("tu:1:"));
  EXPECT_THAT(TenantUsers::Parse("a b:\n", "tu").status().message(),
              HasSubstr("tu:1: empty user or group"));
  EXPECT_THAT(TenantUsers::Parse("a b\na c\n", "tu").status().message(),
              HasSubstr("tu:2: tenant 'a' has a line already"));
}

TEST(TenantUsers, AMissingFileIsAnEmptyMapping) {
  auto users = TenantUsers::Load("/nonexistent/tenant-users");
  ASSERT_TRUE(users.ok()) << users.status().message();
  EXPECT_THAT(users->Resolve("q").status().message(), HasSubstr("/nonexistent/tenant-users"));
}

}  // namespace
}  // namespace airtime
