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
#include "tests/support/farm_processes.h"

namespace farm::testing {
namespace {

using ::testing::HasSubstr;

class GpuWorkersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("gpu-workers");
    auto c = CoordinatorProcess::Start(*dir_ / "data");
    ASSERT_TRUE(c.ok()) << c.status();
    coordinator_ = new CoordinatorProcess(std::move(*c));
    for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
             {"gpu1", {"--slots", "1", "--gpu", "sm_90:H100:80GiB", "--gpu", "7.5"}},
             {"plain", {"--slots", "1"}}}) {
      auto w = WorkerProcess::Start(coordinator_->grpc_address(), coordinator_->token_file(), name,
                                    dir_->path().string(), args);
      ASSERT_TRUE(w.ok()) << w.status();
      workers_.push_back(std::move(*w));
    }
    ASSERT_TRUE(WaitFor(
        [] {
          auto w = ListWorkersJson(coordinator_->grpc_address(), coordinator_->token_file());
          return StateOf(w, "gpu1") == "online" && StateOf(w, "plain") == "online";
        },
        absl::Seconds(30)))
        << ReadFile(coordinator_->log_path());
  }
  static void TearDownTestSuite() {
    for (auto& w : workers_) w.Stop();
    workers_.clear();
    if (coordinator_ != nullptr) coordinator_->Stop();
    delete coordinator_;
    coordinator_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }

  static CommandResult Farmctl(std::vector<std::string> args) {
    args.insert(args.begin(), {"--coordinator", coordinator_->grpc_address(), "--token-file",
                               coordinator_->token_file()});
    return RunFarmctl(args);
  }

  static nlohmann::json WorkerJson(const std::string& name) {
    for (const auto& w :
         ListWorkersJson(coordinator_->grpc_address(), coordinator_->token_file())) {
      if (w.value("name", "") == name) return w;
    }
    return nlohmann::json::object();
  }

  static TempDir* dir_;
  static CoordinatorProcess* coordinator_;
  static std::vector<WorkerProcess> workers_;
};

TempDir* GpuWorkersTest::dir_ = nullptr;
CoordinatorProcess* GpuWorkersTest::coordinator_ = nullptr;
std::vector<WorkerProcess> GpuWorkersTest::workers_;

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
  EXPECT_THAT(ReadFile(workers_[1].log_path()), HasSubstr("no NVIDIA driver"));
}

TEST_F(GpuWorkersTest, TheJsonApiShowsEachWorkersGpus) {
  auto hp = ParseHostPort(coordinator_->http_address());
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
        {FarmBinary("farm-worker"), "--coordinator", coordinator_->grpc_address(), "--token-file",
         coordinator_->token_file(), "--name", "bad", "--work-dir", *dir_ / "bad", "--gpu", bad},
        absl::Seconds(30));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->exit_code, 2) << bad << ": " << Output(*r);
    EXPECT_THAT(r->stderr_text + r->stdout_text, HasSubstr(absl::StrCat("--gpu '", bad, "'")));
    EXPECT_THAT(r->stderr_text + r->stdout_text, HasSubstr("Fix: --gpu SM[:NAME[:MEMORY]]"));
  }
  EXPECT_EQ(
      StateOf(ListWorkersJson(coordinator_->grpc_address(), coordinator_->token_file()), "bad"),
      "");
}

}  // namespace
}  // namespace farm::testing
