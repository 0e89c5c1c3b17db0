// GPUs as workers report them (issue 28, item 1): a worker whose operator declares a GPU
// (--gpu) shows it in `farmctl workers`, its JSON and the dashboard's JSON API; one on this
// driverless host reports none and still runs; a --gpu that names no GPU is refused at start.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libfarm/net/address.h"
#include "tests/support/suite_fixture.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

class GpuWorkersTest : public SuiteFixture<GpuWorkersTest> {
 protected:
  static void SetUpSuite() {
    dir_ = std::make_unique<TempDir>("gpu-workers");
    auto farm = TestFarm::Start(
        dir_->path(),
        {.workers = {{.name = "gpu1", .args = {"--gpu", "sm_90:H100:80GiB", "--gpu", "7.5"}},
                     {.name = "plain"}}});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  static void TearDownSuite() {
    farm_.reset();
    dir_.reset();
  }

  static CommandResult Farmctl(const std::vector<std::string>& args) {
    return farm_->Farmctl(args);
  }

  static nlohmann::json WorkerJson(const std::string& name) {
    for (const auto& w : farm_->ListWorkers()) {
      if (w.value("name", "") == name) return w;
    }
    return nlohmann::json::object();
  }

  static inline std::unique_ptr<TempDir> dir_;
  static inline std::unique_ptr<TestFarm> farm_;
};

TEST_F(GpuWorkersTest, DeclaredGpusAreListedInFarmctlWorkers) {
  CommandResult r = Farmctl({"workers"});
  ASSERT_EQ(r.exit_code, 0) << Output(r);
  EXPECT_THAT(r.stdout_text, HasSubstr("GPUS"));
  EXPECT_THAT(r.stdout_text, ::testing::ContainsRegex("gpu1 .* sm_90 \\(declared\\), sm_75 "
                                                      "\\(declared\\) "))
      << r.stdout_text;

  const nlohmann::json gpu1 = WorkerJson("gpu1");
  ASSERT_EQ(gpu1.value("gpus", nlohmann::json::array()).size(), 2u) << gpu1.dump(2);
  EXPECT_EQ(gpu1["gpus"][0]["sm"], "sm_90");
  EXPECT_EQ(gpu1["gpus"][0]["name"], "H100");
  EXPECT_EQ(gpu1["gpus"][0]["memory_bytes"], uint64_t{80} << 30);
  EXPECT_EQ(gpu1["gpus"][0]["declared"], true);
  EXPECT_EQ(gpu1["gpus"][1]["sm"], "sm_75");
}

// This host has no NVIDIA driver: the worker without --gpu asked for one, found none, and
// registered all the same.
TEST_F(GpuWorkersTest, AWorkerOnAHostWithoutADriverReportsNoGpus) {
  const nlohmann::json plain = WorkerJson("plain");
  EXPECT_EQ(plain.value("state", ""), "online");
  EXPECT_EQ(plain.value("gpus", nlohmann::json("missing")), nlohmann::json::array())
      << plain.dump(2);
  EXPECT_THAT(Farmctl({"workers"}).stdout_text, ::testing::ContainsRegex("plain .* - +0/1 "));
  EXPECT_THAT(ReadFile(farm_->worker("plain").log_path()), HasSubstr("no NVIDIA driver"));
}

TEST_F(GpuWorkersTest, TheJsonApiShowsEachWorkersGpus) {
  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok()) << hp.status();
  httplib::Client http(hp->host, hp->port);
  auto res = http.Get("/api/v1/workers");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const nlohmann::json fleet = nlohmann::json::parse(res->body, nullptr, false);
  bool seen = false;
  for (const auto& w : fleet.value("workers", nlohmann::json::array())) {
    if (w.value("name", "") != "gpu1") continue;
    seen = true;
    const auto& gpus = w["capabilities"]["gpus"];
    ASSERT_EQ(gpus.size(), 2u) << w.dump(2);
    EXPECT_EQ(gpus[0]["sm"], "sm_90");
    EXPECT_EQ(gpus[0]["declared"], true);
  }
  EXPECT_TRUE(seen) << res->body;
}

TEST_F(GpuWorkersTest, AGpuFlagThatNamesNoGpuIsRefusedAtStart) {
  for (const char* bad : {"sm_91", "sm_90a", "sm_90:H100:lots"}) {
    auto r = RunCommand(
        {FarmBinary("farm-worker"), "--coordinator", farm_->address(), "--token-file",
         farm_->admin_token_file(), "--name", "bad", "--work-dir", *dir_ / "bad", "--gpu", bad},
        absl::Seconds(30));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->exit_code, 2) << bad << ": " << Output(*r);
    EXPECT_THAT(r->stderr_text + r->stdout_text, HasSubstr(absl::StrCat("--gpu '", bad, "'")));
    EXPECT_THAT(r->stderr_text + r->stdout_text, HasSubstr("Fix: --gpu SM[:NAME[:MEMORY]]"));
  }
  EXPECT_EQ(farm_->WorkerState("bad"), "");
}

}  // namespace
}  // namespace farm::testing
