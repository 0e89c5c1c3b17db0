#include "cli/worker_view.h"

#include <gmock/gmock.h>
#include <google/protobuf/util/time_util.h>
#include <gtest/gtest.h>

namespace farm::cli {
namespace {

using ::testing::HasSubstr;

farm::v1::Worker SampleWorker() {
  farm::v1::Worker w;
  w.set_name("grace-1");
  w.set_state(farm::v1::WORKER_STATE_LOST);
  auto* c = w.mutable_capabilities();
  c->set_os("linux");
  c->set_cpu_arch("aarch64");
  c->set_glibc("2.35");
  c->set_slots(16);
  auto* t = c->add_cuda();
  t->set_version("13.0");
  t->set_release("V13.0.88");
  t->add_sms("sm_75");
  t->add_sms("sm_121");
  (*c->mutable_labels())["instance"] = "m8g.8xlarge";
  auto* py = c->add_python();
  py->set_version("3.10");
  py->set_release("3.10.12");
  py->set_path("/usr/bin/python3.10");
  *w.mutable_last_seen() = google::protobuf::util::TimeUtil::SecondsToTimestamp(1000);
  return w;
}

TEST(WorkerViewTest, JsonHasTheDocumentedFields) {
  nlohmann::json j = WorkerToJson(SampleWorker());
  EXPECT_EQ(j["name"], "grace-1");
  EXPECT_EQ(j["state"], "lost");
  EXPECT_EQ(j["cpu_arch"], "aarch64");
  EXPECT_EQ(j["glibc"], "2.35");
  EXPECT_EQ(j["slots"], 16);
  ASSERT_EQ(j["cuda"].size(), 1u);
  EXPECT_EQ(j["cuda"][0]["version"], "13.0");
  EXPECT_EQ(j["cuda"][0]["sms"], nlohmann::json({"sm_75", "sm_121"}));
  EXPECT_EQ(j["labels"]["instance"], "m8g.8xlarge");
  EXPECT_EQ(j["python"][0]["version"], "3.10");
  EXPECT_EQ(j["python"][0]["path"], "/usr/bin/python3.10");
  EXPECT_EQ(j["last_seen"], "1970-01-01T00:16:40Z");
  EXPECT_EQ(j["sandboxed"], false);
  farm::v1::Worker sandboxed = SampleWorker();
  sandboxed.mutable_capabilities()->set_sandboxed(true);
  EXPECT_EQ(WorkerToJson(sandboxed)["sandboxed"], true);
}

TEST(WorkerViewTest, TableSaysWhichWorkersSandboxTheirActions) {
  farm::v1::ListWorkersResponse resp;
  *resp.add_workers() = SampleWorker();
  resp.add_workers()->CopyFrom(SampleWorker());
  resp.mutable_workers(1)->set_name("grace-2");
  resp.mutable_workers(1)->mutable_capabilities()->set_sandboxed(true);
  const std::string text = WorkersTable(resp, absl::FromUnixSeconds(1030));
  EXPECT_THAT(text, HasSubstr("SANDBOX"));
  EXPECT_THAT(text, ::testing::ContainsRegex("grace-1 .* NO "));
  EXPECT_THAT(text, ::testing::ContainsRegex("grace-2 .* yes "));
}

TEST(WorkerViewTest, TableShowsPlatformCudaAndAge) {
  farm::v1::ListWorkersResponse resp;
  *resp.add_workers() = SampleWorker();
  const std::string text = WorkersTable(resp, absl::FromUnixSeconds(1030));
  EXPECT_THAT(text, HasSubstr("NAME"));
  EXPECT_THAT(text, HasSubstr("grace-1"));
  EXPECT_THAT(text, HasSubstr("lost"));
  EXPECT_THAT(text, HasSubstr("linux/aarch64"));
  EXPECT_THAT(text, HasSubstr(" 13.0.88 "));
  EXPECT_THAT(text, HasSubstr("sm_75,121"));
  EXPECT_THAT(text, HasSubstr("0/16"));
  EXPECT_THAT(text, HasSubstr("30s ago"));
}

TEST(WorkerViewTest, EmptyFleetSaysHowToAddWorkers) {
  EXPECT_THAT(WorkersTable({}, absl::FromUnixSeconds(0)), HasSubstr("farmctl up"));
}

TEST(WorkerViewTest, AgesAndSizesReadWell) {
  const absl::Time now = absl::FromUnixSeconds(100000);
  EXPECT_EQ(Ago(now - absl::Seconds(5), now), "5s ago");
  EXPECT_EQ(Ago(now - absl::Minutes(5), now), "5m ago");
  EXPECT_EQ(Ago(now - absl::Hours(5), now), "5h ago");
  EXPECT_EQ(HumanBytes(512), "512 B");
  EXPECT_EQ(HumanBytes(3ULL << 30), "3.0 GiB");
}

TEST(WorkerViewTest, ShowsEachGpuInTheTableAndTheJson) {
  farm::v1::Worker w = SampleWorker();
  auto* gpu = w.mutable_capabilities()->add_gpus();
  gpu->set_name("NVIDIA H100 80GB HBM3");
  gpu->set_sm("sm_90");
  gpu->set_memory_bytes(uint64_t{80} << 30);
  gpu->set_driver_cuda_version("13.0");
  auto* declared = w.mutable_capabilities()->add_gpus();
  declared->set_sm("sm_75");
  declared->set_declared(true);
  const nlohmann::json j = WorkerToJson(w);
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["sm"], "sm_90");
  EXPECT_EQ(j["gpus"][0]["name"], "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(j["gpus"][0]["memory_bytes"], uint64_t{80} << 30);
  EXPECT_EQ(j["gpus"][0]["driver_cuda_version"], "13.0");
  EXPECT_EQ(j["gpus"][1]["declared"], true);
  farm::v1::ListWorkersResponse resp;
  *resp.add_workers() = w;
  *resp.add_workers() = SampleWorker();
  resp.mutable_workers(1)->set_name("grace-2");
  const std::string text = WorkersTable(resp, absl::FromUnixSeconds(1030));
  EXPECT_THAT(text, HasSubstr("GPUS"));
  EXPECT_THAT(text, HasSubstr("sm_90, sm_75 (declared)"));
  EXPECT_THAT(text, ::testing::ContainsRegex("grace-2 .* - +0/16"));
}

}  // namespace
}  // namespace farm::cli
