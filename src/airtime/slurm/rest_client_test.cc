// RestSlurmClient's parts that need no Slurm (the e2e tests drive the rest against a lab).
#include "airtime/slurm/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

namespace airtime::slurm {
namespace {

using ::testing::HasSubstr;

TEST(SlurmOptionsFromEnv, ReadsTheLabsEnvFileVariables) {
  setenv("SLURMRESTD_URL", "http://127.0.0.1:6820", 1);
  setenv("SLURM_REST_TOKEN", "tok", 1);
  setenv("SLURM_REST_USER", "airtime", 1);
  setenv("SLURM_CONF", "/tmp/lab/slurm.conf", 1);
  auto o = SlurmOptionsFromEnv();
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->rest.url, "http://127.0.0.1:6820");
  EXPECT_EQ(o->rest.token, "tok");
  EXPECT_EQ(o->rest.user, "airtime");
  EXPECT_EQ(o->scontrol.slurm_conf, "/tmp/lab/slurm.conf");

  unsetenv("SLURM_REST_TOKEN");
  EXPECT_THAT(SlurmOptionsFromEnv().status().message(), HasSubstr("SLURM_REST_TOKEN"));
  setenv("SLURM_REST_TOKEN", "tok", 1);
  unsetenv("SLURMRESTD_URL");
  EXPECT_THAT(SlurmOptionsFromEnv().status().message(), HasSubstr("SLURMRESTD_URL"));
}

TEST(ConnectSlurm, NamesTheServerItCannotReach) {
  SlurmConnectOptions o;
  o.rest.url = "http://127.0.0.1:1";  // nothing listens on port 1
  o.rest.user = "airtime";
  o.rest.token = "tok";
  auto client = ConnectSlurm(o);
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), StatusCode::kUnavailable);
  EXPECT_THAT(client.status().message(), HasSubstr("GET http://127.0.0.1:1/openapi"));
}

}  // namespace
}  // namespace airtime::slurm
