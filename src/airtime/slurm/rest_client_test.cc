// RestSlurmClient's parts that need no Slurm (the e2e tests drive the rest against a lab).
#include "airtime/slurm/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <stdlib.h>

#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>

namespace airtime::slurm {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

std::string Sample(const std::string& version, const std::string& name) {
  std::ifstream f(std::string(AIRTIME_SOURCE_DIR) + "/src/airtime/slurm/testdata/" + version + "/" +
                  name);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// A slurmrestd of Slurm 24.05 (v0.0.39 to v0.0.41) on a local port, answering with the
// samples of testdata/v0.0.41/ and recording every POST body it is sent.
class FakeSlurmrestd {
 public:
  FakeSlurmrestd() {
    server_.Get("/openapi", [](const httplib::Request&, httplib::Response& res) {
      const json doc = {{"paths",
                         {{"/slurm/v0.0.39/ping", json::object()},
                          {"/slurm/v0.0.40/ping", json::object()},
                          {"/slurm/v0.0.41/ping", json::object()}}}};
      res.set_content(doc.dump(), "application/json");
    });
    for (const char* v : {"v0.0.40", "v0.0.41"}) {
      const std::string version = v;
      for (const char* what : {"ping", "nodes", "jobs", "partitions"}) {
        server_.Get("/slurm/" + version + "/" + what, [version, what](const httplib::Request&,
                                                                      httplib::Response& res) {
          res.set_content(Sample(version, std::string(what) + ".json"), "application/json");
        });
      }
      server_.Post("/slurm/" + version + R"(/job/(submit|\d+))",
                   [this, version](const httplib::Request& req, httplib::Response& res) {
                     std::lock_guard<std::mutex> lock(mu_);
                     posts_.push_back({req.path, json::parse(req.body, nullptr, false)});
                     res.set_content(req.path.find("submit") != std::string::npos
                                         ? Sample(version, "submit_held.json")
                                         : R"({"errors": [], "warnings": []})",
                                     "application/json");
                   });
    }
    port_ = server_.bind_to_any_port("127.0.0.1");
    // Bound and listening already: connections wait in the backlog until the loop runs.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~FakeSlurmrestd() {
    server_.stop();
    thread_.join();
  }
  SlurmConnectOptions Options() const {
    SlurmConnectOptions o;
    o.rest.url = "http://127.0.0.1:" + std::to_string(port_);
    o.rest.user = "airtime";
    o.rest.token = "tok";
    o.scontrol.binary = "/nonexistent/scontrol";  // REST must do what the test asks
    return o;
  }
  std::vector<std::pair<std::string, json>> Posts() {
    std::lock_guard<std::mutex> lock(mu_);
    return posts_;
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::pair<std::string, json>> posts_;
};

// Against a newer Slurm the client chooses the newest version both speak, reads its shapes,
// and steers a pending job over REST (v0.0.38 needed scontrol for it).
TEST(ConnectSlurm, SpeaksTheNewestVersionANewerSlurmOffers) {
  FakeSlurmrestd fake;
  auto client = ConnectSlurm(fake.Options());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->ApiVersion(), "v0.0.41");
  EXPECT_EQ((*client)->SlurmRelease(), "24.05.8");
  auto nodes = (*client)->Nodes();
  ASSERT_TRUE(nodes.ok()) << nodes.status().ToString();
  EXPECT_EQ(nodes->size(), 4u);
  auto jobs = (*client)->Jobs();
  ASSERT_TRUE(jobs.ok()) << jobs.status().ToString();
  ASSERT_EQ(jobs->size(), 4u);
  EXPECT_EQ((*jobs)[2].gpus.size(), 2u);

  JobRequest r;
  r.name = "w";
  r.script = "#!/bin/sh\nexec true\n";
  r.gpus_per_node = 1;
  r.gpu_type = "h100";
  auto id = (*client)->Submit(r);
  ASSERT_TRUE(id.ok()) << id.status().ToString();
  EXPECT_EQ(*id, 10);
  ASSERT_TRUE((*client)->SetRequiredNodes(12, {"n3"}).ok());
  ASSERT_TRUE((*client)->Release(12).ok());
  const auto posts = fake.Posts();
  ASSERT_EQ(posts.size(), 3u);
  EXPECT_EQ(posts[0].first, "/slurm/v0.0.41/job/submit");
  EXPECT_EQ(posts[0].second["job"]["tres_per_node"], "gres/gpu:h100:1");
  EXPECT_EQ(posts[1].first, "/slurm/v0.0.41/job/12");
  EXPECT_EQ(posts[1].second, json({{"required_nodes", "n3"}}));
  EXPECT_EQ(posts[2].second, json({{"hold", false}, {"begin_time", "now"}}));
}

// SLURM_REST_API pins a version; one the build does not speak is refused at start, by name.
TEST(ConnectSlurm, UsesThePinnedVersionAndRefusesAnUnknownOne) {
  FakeSlurmrestd fake;
  SlurmConnectOptions o = fake.Options();
  o.api_version = "v0.0.40";
  auto client = ConnectSlurm(o);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  EXPECT_EQ((*client)->ApiVersion(), "v0.0.40");
  EXPECT_EQ((*client)->SlurmRelease(), "23.11.10");
  o.api_version = "v0.0.39";
  auto refused = ConnectSlurm(o);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(), HasSubstr("'v0.0.39' (SLURM_REST_API)"));
  EXPECT_THAT(refused.status().message(), HasSubstr("v0.0.44"));
}

TEST(SlurmOptionsFromEnv, ReadsTheLabsEnvFileVariables) {
  setenv("SLURMRESTD_URL", "http://127.0.0.1:6820", 1);
  setenv("SLURM_REST_TOKEN", "tok", 1);
  setenv("SLURM_REST_USER", "airtime", 1);
  setenv("SLURM_CONF", "/tmp/lab/slurm.conf", 1);
  setenv("SLURM_REST_API", "v0.0.41", 1);
  auto o = SlurmOptionsFromEnv();
  ASSERT_TRUE(o.ok()) << o.status().ToString();
  EXPECT_EQ(o->rest.url, "http://127.0.0.1:6820");
  EXPECT_EQ(o->rest.token, "tok");
  EXPECT_EQ(o->rest.user, "airtime");
  EXPECT_EQ(o->scontrol.slurm_conf, "/tmp/lab/slurm.conf");
  EXPECT_EQ(o->api_version, "v0.0.41");
  unsetenv("SLURM_REST_API");

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
