#include "coordinator/index/package_index.h"

#include <filesystem>
#include <fstream>
#include <tuple>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "coordinator/index/simple_format.h"
#include "coordinator/index/simple_pages.h"
#include "libfarm/process/subprocess.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Writes a wheel with Python's zipfile: METADATA `metadata` under `dist_info`, plus a module
// whose text is `payload` (so two wheels of one name can differ).
void WriteWheel(const std::string& path, const std::string& dist_info, const std::string& metadata,
                const std::string& payload, const std::string& extra_member = "") {
  const std::string script = absl::StrCat(
      "import sys, zipfile\n"
      "with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:\n"
      "  z.writestr(sys.argv[2] + '/METADATA', sys.argv[3])\n"
      "  z.writestr(sys.argv[2] + '/WHEEL', 'Wheel-Version: 1.0\\nTag: py3-none-any\\n')\n"
      "  z.writestr('demo_pkg/__init__.py', sys.argv[4])\n"
      "  if sys.argv[5]: z.writestr(sys.argv[5], 'x')\n");
  auto r = RunCommand({"python3", "-c", script, path, dist_info, metadata, payload, extra_member});
  ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
}

constexpr char kMetadata[] =
    "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.0+cu126\nRequires-Python: >=3.8\n"
    "Summary: demo\n\nLong description.\n";

class PackageIndexTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("package_index_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "in");
    Reopen();
  }
  void TearDown() override {
    index_.reset();
    blobs_.reset();
    state_.reset();
    fs::remove_all(dir_);
  }
  void Reopen(uint64_t quota = 64 << 10) {
    index_.reset();
    blobs_.reset();
    state_.reset();
    auto state = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(state.ok()) << state.status();
    state_ = std::move(*state);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), state_.get(), quota);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
    auto index = PackageIndex::Open(state_.get(), blobs_.get());
    ASSERT_TRUE(index.ok()) << index.status();
    index_ = std::move(*index);
  }
  std::string In(const std::string& name) { return (dir_ / "in" / name).string(); }

  fs::path dir_;
  std::unique_ptr<StateStore> state_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<PackageIndex> index_;
};

TEST_F(PackageIndexTest, PublishedWheelIsListedPinnedAndSurvivesRestart) {
  const std::string wheel = In("demo_pkg-1.0+cu126-py3-none-any.whl");
  WriteWheel(wheel, "demo_pkg-1.0+cu126.dist-info", kMetadata, "v = 1\n");
  index_->SetBaseUrl("http://127.0.0.1:7421");
  auto published = index_->Publish(wheel);
  ASSERT_TRUE(published.ok()) << published.status();
  EXPECT_FALSE(published->already_present);
  EXPECT_EQ(published->file.project(), "demo-pkg");
  EXPECT_EQ(published->file.requires_python(), ">=3.8");
  EXPECT_EQ(published->url,
            absl::StrCat("http://127.0.0.1:7421/files/", published->file.wheel().hash(),
                         "/demo_pkg-1.0%2Bcu126-py3-none-any.whl"));
  EXPECT_EQ(published->project_url, "http://127.0.0.1:7421/simple/demo-pkg/");
  EXPECT_TRUE(fs::exists(wheel)) << "publishing must not consume the caller's file";

  Reopen();
  EXPECT_EQ(index_->Projects(), std::vector<std::string>{"demo-pkg"});
  auto found = index_->Find(published->file.wheel().hash(), "demo_pkg-1.0+cu126-py3-none-any.whl");
  ASSERT_TRUE(found.has_value());
  auto metadata_path = index_->BlobPath(found->core_metadata());
  ASSERT_TRUE(metadata_path.ok());
  std::ifstream in(*metadata_path);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), kMetadata);
  EXPECT_FALSE(index_->Find(std::string(64, 'a'), "demo_pkg-1.0+cu126-py3-none-any.whl"));

  // Fill the CAS far past its 64 KiB quota: unpinned blobs go, the published wheel stays.
  for (int i = 0; i < 40; ++i) {
    ASSERT_TRUE(
        blobs_->PutBytes(std::string(8 << 10, static_cast<char>('a' + i % 26)) + std::to_string(i))
            .ok());
  }
  EXPECT_GT(blobs_->evictions(), 0u);
  EXPECT_TRUE(blobs_->Contains(found->wheel()));
  EXPECT_TRUE(blobs_->Contains(found->core_metadata()));
}

TEST_F(PackageIndexTest, SameBytesAgainIsIdempotentDifferentBytesAreRefused) {
  const std::string wheel = In("demo_pkg-1.0+cu126-py3-none-any.whl");
  WriteWheel(wheel, "demo_pkg-1.0+cu126.dist-info", kMetadata, "v = 1\n");
  ASSERT_TRUE(index_->Publish(wheel).ok());
  auto again = index_->Publish(wheel);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE(again->already_present);

  fs::create_directories(dir_ / "in2");
  const std::string other = (dir_ / "in2" / "demo_pkg-1.0+cu126-py3-none-any.whl").string();
  WriteWheel(other, "demo_pkg-1.0+cu126.dist-info", kMetadata, "v = 2\n");
  auto refused = index_->Publish(other);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_THAT(refused.status().message(), HasSubstr("File already exists"));
  EXPECT_EQ(index_->Files("demo-pkg").size(), 1u);
}

std::string ProbeMetadata(const std::string& name, const std::string& version) {
  return absl::StrCat("Metadata-Version: 2.1\nName: ", name, "\nVersion: ", version, "\n\n");
}

// Issue 15, item 6: names pip reads as one file are one file to the index.
TEST_F(PackageIndexTest, SpellingsPipReadsAsThePublishedFileCannotBringOtherBytes) {
  const std::string published = In("probe_ok-2.0-py3-none-any.whl");
  WriteWheel(published, "probe_ok-2.0.dist-info", ProbeMetadata("probe_ok", "2.0"), "v = 1\n");
  auto first = index_->Publish(published);
  ASSERT_TRUE(first.ok()) << first.status();

  struct Spelling {
    std::string filename, dist_info, name, version;
  };
  const std::vector<Spelling> spellings = {
      {"Probe_OK-2.0-py3-none-any.whl", "Probe_OK-2.0.dist-info", "Probe_OK", "2.0"},
      {"probe_ok-2.0-PY3-none-any.whl", "probe_ok-2.0.dist-info", "probe_ok", "2.0"},
      {"probe_ok-2.0.0-py3-none-any.whl", "probe_ok-2.0.0.dist-info", "probe_ok", "2.0.0"},
      {"probe.ok-v2.00-py3-NONE-Any.whl", "probe.ok-v2.00.dist-info", "probe.ok", "v2.00"},
  };
  int n = 0;
  for (const Spelling& sp : spellings) {
    SCOPED_TRACE(sp.filename);
    const fs::path dir = dir_ / absl::StrCat("spelling", n++);
    fs::create_directories(dir);
    const std::string other = (dir / sp.filename).string();
    WriteWheel(other, sp.dist_info, ProbeMetadata(sp.name, sp.version), "v = 2\n");
    auto refused = index_->Publish(other);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists);
    EXPECT_THAT(refused.status().message(),
                HasSubstr("pip reads it as the published probe_ok-2.0-py3-none-any.whl"));
  }
  // Other releases and other files of the release are still new names.
  for (const auto& [filename, version, tag] :
       std::vector<std::tuple<std::string, std::string, std::string>>{
           {"probe_ok-2.0.1-py3-none-any.whl", "2.0.1", "py3-none-any"},
           {"probe_ok-2.0-1-py3-none-any.whl", "2.0", "py3-none-any"},
           {"probe_ok-2.0-py2.py3-none-any.whl", "2.0", "py2.py3-none-any"}}) {
    const fs::path dir = dir_ / absl::StrCat("new", n++);
    fs::create_directories(dir);
    const std::string wheel = (dir / filename).string();
    WriteWheel(wheel, absl::StrCat("probe_ok-", version, ".dist-info"),
               ProbeMetadata("probe_ok", version), "v = 3\n");
    auto ok = index_->Publish(wheel);
    EXPECT_TRUE(ok.ok()) << filename << ": " << ok.status();
  }
  // The same bytes under another spelling are the published file, as before.
  const fs::path same_dir = dir_ / "same";
  fs::create_directories(same_dir);
  fs::copy_file(published, same_dir / "Probe_OK-2.0-py3-none-any.whl");
  auto same = index_->Publish((same_dir / "Probe_OK-2.0-py3-none-any.whl").string());
  ASSERT_TRUE(same.ok()) << same.status();
  EXPECT_TRUE(same->already_present);
  EXPECT_EQ(same->file.filename(), "probe_ok-2.0-py3-none-any.whl");

  ASSERT_EQ(index_->Files("probe-ok").size(), 4u);
  EXPECT_EQ(index_->Files("probe-ok")[0].filename(), "probe_ok-2.0-1-py3-none-any.whl");
  // Only the published spelling is a file URL.
  const std::string sha = first->file.wheel().hash();
  EXPECT_TRUE(index_->Find(sha, "probe_ok-2.0-py3-none-any.whl").has_value());
  EXPECT_FALSE(index_->Find(sha, "probe_ok-2.0.0-py3-none-any.whl").has_value());
}

TEST_F(PackageIndexTest, RecordsThatShadowEachOtherFromBeforeKeepTheFirstPublished) {
  // What an index written before names were compared normalized may hold: 2.0.0 uploaded
  // after 2.0 with other bytes. On start only the first is listed; nothing is deleted.
  auto store_record = [&](const std::string& filename, const std::string& version,
                          const std::string& bytes, int64_t uploaded) {
    auto wheel = blobs_->PutBytes(bytes);
    auto metadata = blobs_->PutBytes(ProbeMetadata("probe_ok", version));
    ASSERT_TRUE(wheel.ok() && metadata.ok());
    farm::v1::PackageFile f;
    f.set_project("probe-ok");
    f.set_display_name("probe_ok");
    f.set_version(version);
    f.set_filename(filename);
    *f.mutable_wheel() = *wheel;
    *f.mutable_core_metadata() = *metadata;
    f.mutable_uploaded_at()->set_seconds(uploaded);
    ASSERT_TRUE(state_->Put(Table::kPackages, "probe-ok/" + filename, f).ok());
  };
  store_record("probe_ok-2.0.0-py3-none-any.whl", "2.0.0", "shadow", 1700000100);
  store_record("probe_ok-2.0-py3-none-any.whl", "2.0", "original", 1700000000);
  store_record("Probe_OK-2.0-PY3-none-any.whl", "2.0", "another", 1700000200);
  Reopen();
  const auto files = index_->Files("probe-ok");
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files[0].filename(), "probe_ok-2.0-py3-none-any.whl");
  EXPECT_EQ(files[0].uploaded_at().seconds(), 1700000000);
  farm::v1::PackageFile kept_record;
  EXPECT_TRUE(
      state_->Get(Table::kPackages, "probe-ok/probe_ok-2.0.0-py3-none-any.whl", &kept_record).ok())
      << "the shadowed record stays in the store";
  EXPECT_EQ(kept_record.version(), "2.0.0");
}

TEST_F(PackageIndexTest, RefusesWheelsWhoseMetadataOrMembersDoNotFit) {
  const std::string renamed = In("other-1.0-py3-none-any.whl");
  WriteWheel(renamed, "other-1.0.dist-info", kMetadata, "v = 1\n");
  auto mismatch = index_->Publish(renamed);
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(mismatch.status().message(), HasSubstr("METADATA says Name: Demo_Pkg"));

  const std::string slip = In("demo_pkg-1.0+cu126-py2-none-any.whl");
  WriteWheel(slip, "demo_pkg-1.0+cu126.dist-info", kMetadata, "v = 1\n", "../evil.py");
  auto unsafe = index_->Publish(slip);
  EXPECT_EQ(unsafe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(unsafe.status().message(), HasSubstr("unsafe member path"));
  EXPECT_TRUE(index_->Projects().empty());
}

TEST(SimpleFormatTest, NegotiatesLikePep691) {
  // pip 23+'s header.
  EXPECT_EQ(NegotiateSimpleFormat("application/vnd.pypi.simple.v1+json, "
                                  "application/vnd.pypi.simple.v1+html; q=0.1, text/html; q=0.01")
                .format,
            SimpleFormat::kJson);
  const NegotiatedFormat html = NegotiateSimpleFormat("text/html");
  EXPECT_EQ(html.format, SimpleFormat::kHtml);
  EXPECT_THAT(html.content_type, HasSubstr("text/html"));
  EXPECT_EQ(NegotiateSimpleFormat("").format, SimpleFormat::kHtml);
  EXPECT_EQ(NegotiateSimpleFormat("*/*").format, SimpleFormat::kHtml);
  EXPECT_EQ(NegotiateSimpleFormat("application/vnd.pypi.simple.latest+json").content_type,
            "application/vnd.pypi.simple.v1+json");
  EXPECT_EQ(NegotiateSimpleFormat("application/vnd.pypi.simple.v1+json;q=0.2, "
                                  "application/vnd.pypi.simple.v1+html")
                .content_type,
            "application/vnd.pypi.simple.v1+html");
  EXPECT_EQ(NegotiateSimpleFormat("image/png").format, SimpleFormat::kNotAcceptable);
  EXPECT_EQ(NegotiateSimpleFormat("text/html;q=0").format, SimpleFormat::kNotAcceptable);
}

TEST(SimplePagesTest, HtmlAndJsonDescribeTheSameFiles) {
  farm::v1::PackageFile f;
  f.set_project("demo-pkg");
  f.set_version("1.0+cu126");
  f.set_filename("demo_pkg-1.0+cu126-py3-none-any.whl");
  f.mutable_wheel()->set_hash(std::string(64, 'a'));
  f.mutable_wheel()->set_size_bytes(1234);
  f.mutable_core_metadata()->set_hash(std::string(64, 'b'));
  f.set_requires_python(">=3.8");
  f.mutable_uploaded_at()->set_seconds(1700000000);
  const std::string html = RenderProjectHtml("demo-pkg", {f});
  EXPECT_THAT(html, HasSubstr(absl::StrCat("<a href=\"../../files/", std::string(64, 'a'),
                                           "/demo_pkg-1.0%2Bcu126-py3-none-any.whl#sha256=",
                                           std::string(64, 'a'), "\"")));
  EXPECT_THAT(html, HasSubstr("data-requires-python=\"&gt;=3.8\""));
  EXPECT_THAT(html, HasSubstr(absl::StrCat("data-core-metadata=\"sha256=", std::string(64, 'b'))));
  EXPECT_THAT(html, HasSubstr(">demo_pkg-1.0+cu126-py3-none-any.whl</a>"));
  EXPECT_THAT(html, HasSubstr("<meta name=\"pypi:repository-version\" content=\"1.1\">"));

  const auto j = nlohmann::json::parse(RenderProjectJson("demo-pkg", {f}));
  EXPECT_EQ(j["meta"]["api-version"], "1.1");
  EXPECT_EQ(j["name"], "demo-pkg");
  EXPECT_EQ(j["versions"], nlohmann::json::array({"1.0+cu126"}));
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0]["hashes"]["sha256"], std::string(64, 'a'));
  EXPECT_EQ(j["files"][0]["size"], 1234);
  EXPECT_EQ(j["files"][0]["requires-python"], ">=3.8");
  EXPECT_EQ(j["files"][0]["url"], RelativeFileUrl(f));
  EXPECT_EQ(j["files"][0]["upload-time"], "2023-11-14T22:13:20.000000Z");

  const auto root = nlohmann::json::parse(RenderRootJson({"demo-pkg"}));
  EXPECT_EQ(root["projects"][0]["name"], "demo-pkg");
  EXPECT_THAT(RenderRootHtml({"demo-pkg"}), HasSubstr("<a href=\"demo-pkg/\">demo-pkg</a>"));
}

}  // namespace
}  // namespace farm::coordinator
