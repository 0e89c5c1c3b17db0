// Text that is not UTF-8 (issue 24, hole 5), with real processes: a proto3 `string` field
// serializes any bytes but refuses to parse them, so one such byte once kept the coordinator
// from starting, made `farmctl builds` fail for everyone, and left an action RUNNING while its
// worker's report was refused. Such text is never fatal and never lost: uploads whose metadata
// is not UTF-8 are refused, workers send their output escaped (the bytes stay in the CAS), and
// records stored before the fix are read escaped at start, their original bytes quarantined.
#include <httplib.h>

#include <rocksdb/db.h>

#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "farm/v1/builds.pb.h"
#include "farm/v1/package_index.pb.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/digest/digest.h"
#include "libfarm/net/address.h"
#include "libfarm/status/exit_code.h"
#include "tests/support/fake_wheel.h"
#include "tests/support/test_farm.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kProject[] = "non-utf8-demo";
constexpr char kWheelName[] = "non_utf8_demo-1.0-py3-none-any.whl";
constexpr char kJson[] = "application/vnd.pypi.simple.v1+json";

// Writes kWheelName into `dir` with `requires_python` (any bytes) in its METADATA.
std::string WriteWheel(const fs::path& dir, const std::string& requires_python) {
  auto path = WriteTestWheel(
      dir, {.project = kProject,
            .version = "1.0",
            .members = {{"non_utf8_demo/__init__.py", ""}},
            .metadata_fields = absl::StrCat("Requires-Python: ", requires_python, "\n")});
  EXPECT_TRUE(path.ok()) << path.status();
  return path.ok() ? ReadFile(*path) : "";
}

httplib::Client HttpTo(const TestFarm& farm) {
  auto hp = ParseHostPort(farm.coordinator().http_address());
  EXPECT_TRUE(hp.ok()) << farm.coordinator().http_address();
  httplib::Client client(hp->host, hp->port);
  client.set_read_timeout(std::chrono::seconds(30));
  return client;
}

// The upload twine sends.
httplib::Result Upload(const TestFarm& farm, const std::string& wheel) {
  httplib::Client client = HttpTo(farm);
  const std::string token = farm.AdminToken();
  client.set_basic_auth("__token__", token.c_str());
  httplib::MultipartFormDataItems items = {
      {":action", "file_upload", "", ""},
      {"protocol_version", "1", "", ""},
      {"name", kProject, "", ""},
      {"version", "1.0", "", ""},
      {"filetype", "bdist_wheel", "", ""},
      {"sha256_digest", DigestOfBytes(wheel).hash(), "", ""},
      {"content", wheel, kWheelName, "application/octet-stream"}};
  return client.Post("/legacy/", items);
}

httplib::Result ProjectJson(const TestFarm& farm) {
  httplib::Client client = HttpTo(farm);
  return client.Get(absl::StrCat("/simple/", kProject, "/"), {{"Accept", kJson}});
}

CommandResult Farmctl(const TestFarm& farm, const std::vector<std::string>& args) {
  return farm.Farmctl(args);
}

// The value of an unlabelled gauge in /metrics, or -1.
double Gauge(const TestFarm& farm, const std::string& name) {
  httplib::Client client = HttpTo(farm);
  auto res = client.Get("/metrics");
  if (!res || res->status != 200) return -1;
  const std::string prefix = "\n" + name + " ";
  const size_t at = res->body.find(prefix);
  return at == std::string::npos ? -1 : std::stod(res->body.substr(at + prefix.size()));
}

// RocksDB opened directly, as nothing of the coordinator's is: the store it left behind.
class RawStore {
 public:
  explicit RawStore(const std::string& data_dir) {
    const std::string dir = data_dir + "/state";
    std::vector<std::string> names;
    EXPECT_TRUE(rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions(), dir, &names).ok());
    std::vector<rocksdb::ColumnFamilyDescriptor> families;
    for (const auto& n : names) families.emplace_back(n, rocksdb::ColumnFamilyOptions());
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(rocksdb::Options(), dir, families, &handles_, &db);
    EXPECT_TRUE(s.ok()) << s.ToString();
    db_.reset(db);
    for (size_t i = 0; i < names.size(); ++i) by_name_[names[i]] = handles_[i];
  }
  ~RawStore() {
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    db_->Close();
  }
  std::string Get(const std::string& family, const std::string& key) {
    std::string value;
    EXPECT_TRUE(db_->Get(rocksdb::ReadOptions(), by_name_.at(family), key, &value).ok()) << key;
    return value;
  }
  void Put(const std::string& family, const std::string& key, const std::string& value) {
    rocksdb::WriteOptions sync;
    sync.sync = true;
    EXPECT_TRUE(db_->Put(sync, by_name_.at(family), key, value).ok()) << key;
  }
  std::vector<std::string> Keys(const std::string& family) {
    std::vector<std::string> keys;
    if (by_name_.count(family) == 0) return keys;
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions(), by_name_.at(family)));
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
    return keys;
  }

 private:
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> by_name_;
};

TEST(NonUtf8TextTest, AStoreWithRecordsTodaysCoordinatorCannotReadStartsAndServesThem) {
  TempDir dir("non-utf8-restart");
  const std::string data = dir / "data";
  auto started = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  auto up = Upload(test_farm, WriteWheel(dir / "ok", ">=3.8"));
  ASSERT_TRUE(up) << "no answer";
  ASSERT_EQ(up->status, 200) << up->body;
  test_farm.StopCoordinator();
  // What coordinators before the fix stored: a Requires-Python with a byte that is not UTF-8,
  // a build that failed on a wheel member named in Latin-1, and a record that is no record.
  const std::string package_key = absl::StrCat(kProject, "/", kWheelName);
  const std::string latin1_reason =
      "the wheel cannot be tagged for publishing: member 'non_utf8_demo/caf\xe9.py' ...";
  std::string package_bytes;
  {
    RawStore raw(data);
    farm::v1::PackageFile file;
    ASSERT_TRUE(file.ParseFromString(raw.Get("packages", package_key)));
    file.set_requires_python(">=3.8\xff");
    package_bytes = file.SerializeAsString();
    raw.Put("packages", package_key, package_bytes);
    farm::v1::Build build;
    build.set_id("latin1-build");
    build.set_kind(farm::v1::BUILD_KIND_WHEEL);
    build.set_package("demo");
    build.set_version("1.0");
    build.set_state(farm::v1::BUILD_STATE_FAILED);
    build.set_reason(latin1_reason);
    build.mutable_submitted_at()->set_seconds(1700000000);
    raw.Put("builds", "latin1-build", build.SerializeAsString());
    raw.Put("builds", "truncated-build", std::string("\x0a\xff\xff\x03", 4));
  }

  absl::Status restarted = test_farm.RestartCoordinator();
  ASSERT_TRUE(restarted.ok()) << restarted;
  const std::string log = ReadFile(test_farm.coordinator().log_path());
  EXPECT_THAT(log, HasSubstr("record \"latin1-build\" of table builds held 1 text value(s) that "
                             "are not UTF-8"));
  EXPECT_THAT(log, HasSubstr(absl::StrCat("record \"", package_key, "\" of table packages held")));
  EXPECT_THAT(log,
              HasSubstr("record \"truncated-build\" of table builds does not parse as a "
                        "farm.v1.Build: moved to the quarantine as \"builds/truncated-build\""));
  EXPECT_EQ(Gauge(test_farm, "farm_state_quarantined_records"), 3);

  // Every client reads the builds again, the Latin-1 byte shown escaped.
  CommandResult builds = Farmctl(test_farm, {"builds"});
  EXPECT_EQ(builds.exit_code, 0) << Output(builds);
  EXPECT_THAT(builds.stdout_text, HasSubstr("latin1-build"));
  CommandResult build = Farmctl(test_farm, {"build", "latin1-build"});
  EXPECT_EQ(build.exit_code, 0) << Output(build);
  EXPECT_THAT(build.stdout_text, HasSubstr("member 'non_utf8_demo/caf\\xe9.py'"));
  CommandResult json = Farmctl(test_farm, {"--json", "builds"});
  ASSERT_EQ(json.exit_code, 0) << Output(json);
  EXPECT_THAT(json.stdout_text, HasSubstr("caf\\\\xe9.py"));  // JSON escapes the backslash
  // The index serves the project, its Requires-Python escaped.
  auto page = ProjectJson(test_farm);
  ASSERT_TRUE(page) << "no answer";
  ASSERT_EQ(page->status, 200) << page->body;
  auto j = nlohmann::json::parse(page->body);
  ASSERT_EQ(j["files"].size(), 1u) << page->body;
  EXPECT_EQ(j["files"][0]["requires-python"], ">=3.8\\xff");
  test_farm.StopCoordinator();

  // Nothing was lost: the quarantine holds the original bytes; the records read cleanly now.
  {
    RawStore raw(data);
    EXPECT_EQ(raw.Get("quarantine", "packages/" + package_key), package_bytes);
    EXPECT_EQ(raw.Get("quarantine", "builds/truncated-build"), std::string("\x0a\xff\xff\x03", 4));
    EXPECT_THAT(raw.Keys("builds"), Not(::testing::Contains("truncated-build")));
    farm::v1::Build build;
    ASSERT_TRUE(build.ParseFromString(raw.Get("builds", "latin1-build")));
    EXPECT_EQ(build.reason(),
              "the wheel cannot be tagged for publishing: member 'non_utf8_demo/caf\\xe9.py' ...");
  }
  // And the next start finds nothing new to set aside (its log goes on in the same file).
  const size_t logged_before = ReadFile(test_farm.coordinator().log_path()).size();
  absl::Status again = test_farm.RestartCoordinator();
  ASSERT_TRUE(again.ok()) << again;
  const std::string new_log = ReadFile(test_farm.coordinator().log_path()).substr(logged_before);
  EXPECT_THAT(new_log, Not(HasSubstr("of table builds held")));
  EXPECT_THAT(new_log, Not(HasSubstr("moved to the quarantine")));
  EXPECT_THAT(new_log, HasSubstr("holds 3 quarantined record(s)"));
  EXPECT_EQ(Farmctl(test_farm, {"builds"}).exit_code, 0);
}

TEST(NonUtf8TextTest, AnIndexUploadWhoseMetadataIsNotUtf8IsRefusedAndTheIndexServesOn) {
  TempDir dir("non-utf8-upload");
  auto started = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  auto refused = Upload(test_farm, WriteWheel(dir / "bad", ">=3.8\xff"));
  ASSERT_TRUE(refused) << "no answer";
  EXPECT_EQ(refused->status, 400) << refused->body;
  EXPECT_THAT(refused->body, HasSubstr("METADATA line 4 is not UTF-8 (byte 23 of "
                                       "\"Requires-Python: >=3.8\\xff\"): Core Metadata is UTF-8"));
  EXPECT_THAT(refused->body, HasSubstr("Fix:"));
  auto none = ProjectJson(test_farm);
  ASSERT_TRUE(none) << "no answer";
  EXPECT_EQ(none->status, 404) << none->body;

  // The same wheel in UTF-8 is published; the page and a restart are fine.
  auto ok = Upload(test_farm, WriteWheel(dir / "ok", ">=3.8"));
  ASSERT_TRUE(ok) << "no answer";
  EXPECT_EQ(ok->status, 200) << ok->body;
  absl::Status again = test_farm.RestartCoordinator();
  ASSERT_TRUE(again.ok()) << again;
  auto page = ProjectJson(test_farm);
  ASSERT_TRUE(page) << "no answer";
  EXPECT_EQ(page->status, 200) << page->body;
  EXPECT_THAT(page->body, HasSubstr("\"requires-python\":\">=3.8\""));
}

TEST(NonUtf8TextTest, ActionsWhoseOutputIsNotUtf8CompleteWithItEscapedAndTheBytesKept) {
  TempDir dir("non-utf8-actions");
  auto started = TestFarm::Start(
      dir.path(), {.workers = {{.name = "w1", .args = {"--cuda-path", "none"}, .slots = 3}}});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;
  const std::string token = test_farm.AdminToken();
  auto actions = ActionClient::Connect(test_farm.address(), token);
  auto cas = CasClient::Connect(test_farm.address(), token);
  auto shell = [](const std::string& script) {
    farm::v1::Action a;
    a.add_argv("/bin/sh");
    a.add_argv("-c");
    a.add_argv(script);
    (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
    a.set_build_id("non-utf8");
    return a;
  };
  // A lone 0xff; gcc's opening quote cut by the 4 KiB tail; Latin-1 in a failure.
  auto submitted = actions->Execute(
      {shell("printf '\\377' >&2"),
       shell("printf '\\342\\200\\230' >&2; head -c 4095 /dev/zero | tr '\\0' a >&2"),
       shell("printf 'caf\\351' >&2; exit 3")});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  std::vector<std::string> ids;
  for (const auto& s : *submitted) ids.push_back(s.action_id());
  auto done = actions->WaitAll(ids, absl::Seconds(30));
  ASSERT_TRUE(done.ok()) << done.status();
  ASSERT_EQ(done->size(), 3u);
  for (const auto& s : *done) {
    ASSERT_EQ(s.state(), farm::v1::ACTION_STATE_COMPLETED) << s.DebugString();
  }
  const auto& lone = (*done)[0].result();
  EXPECT_EQ(lone.exit_code(), 0);
  EXPECT_EQ(lone.stderr_tail(), "\\xff");
  auto full = cas->DownloadBytes(lone.stderr_digest(), 1 << 20);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_EQ(*full, "\xff");
  // The tail starts after the character the cut split, not inside it.
  EXPECT_EQ((*done)[1].result().stderr_tail(), std::string(4095, 'a'));
  EXPECT_EQ((*done)[2].result().exit_code(), 3);
  EXPECT_EQ((*done)[2].result().stderr_tail(), "caf\\xe9");
}

// A worker's capabilities are text the worker read from its host (hostname, toolkit and
// interpreter paths) or its operator wrote (labels), any bytes. A toolkit at a Latin-1 path once
// made every registration fail with INTERNAL, the worker retrying for ever: now it is sent
// escaped and the worker registers; a label that is not UTF-8 stops the worker at start with
// the label and the fix; and a registration holding such text (an older worker) is refused
// naming the field.
TEST(NonUtf8TextTest, AWorkerCapabilityThatIsNotUtf8IsSentEscapedOrRefusedNamingIt) {
  TempDir dir("non-utf8-worker");
  auto started = TestFarm::Start(dir.path(), FarmOptions{});
  ASSERT_TRUE(started.ok()) << started.status();
  TestFarm& test_farm = **started;

  // The toolkit, seen through a directory whose name is Latin-1.
  const fs::path toolkit = dir / "cuda-caf\xe9";
  fs::create_directories(toolkit);
  for (const auto& entry : fs::directory_iterator("/usr/local/cuda")) {
    fs::create_symlink(fs::canonical(entry.path()), toolkit / entry.path().filename());
  }
  auto w = test_farm.StartWorker(
      {.name = "latin1", .args = {"--cuda-path", toolkit.string()}, .slots = 0});
  ASSERT_TRUE(w.ok()) << w.status();
  const absl::Status online = test_farm.WaitUntilOnline({"latin1"}, absl::Seconds(60));
  EXPECT_TRUE(online.ok()) << online;
  EXPECT_THAT(ReadFile((*w)->log_path()),
              HasSubstr("cuda[0].path (\"" + (dir / "cuda-caf\\xe9") +
                        "\") is not UTF-8: the coordinator is sent it escaped"));
  CommandResult workers = Farmctl(test_farm, {"workers"});
  EXPECT_THAT(workers.stdout_text, HasSubstr("latin1")) << workers.stdout_text;
  test_farm.KillWorker("latin1");

  auto started_labelled =
      test_farm.StartWorker({.name = "labelled",
                             .args = {"--cuda-path", "none", "--labels", "zone=caf\xe9"},
                             .slots = 0});
  ASSERT_TRUE(started_labelled.ok()) << started_labelled.status();
  WorkerProcess& labelled = **started_labelled;
  EXPECT_EQ(labelled.process().Wait(absl::Seconds(30)), kExitConfig)
      << ReadFile(labelled.log_path());
  EXPECT_THAT(ReadFile(labelled.log_path()),
              HasSubstr("label 'zone' (\"caf\\xe9\") is not UTF-8, which the coordinator "
                        "cannot take. Fix: pass --labels as UTF-8 text"));
  EXPECT_EQ(test_farm.WorkerState("labelled"), "");
}

}  // namespace
}  // namespace farm::testing
