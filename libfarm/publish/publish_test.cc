#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "libfarm/process/subprocess.h"
#include "libfarm/publish/command_hook_publisher.h"
#include "libfarm/publish/core_metadata.h"
#include "libfarm/publish/http_url.h"
#include "libfarm/publish/legacy_upload_form.h"
#include "libfarm/publish/multipart_body.h"
#include "libfarm/publish/upload_digests.h"
#include "libfarm/publish/wheel_package.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("publish_test_" + std::to_string(::getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

TEST(CoreMetadataTest, ParsesHeadersContinuationsAndBody) {
  auto m = ParseCoreMetadata(
      "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.0\nClassifier: A\nClassifier: B\n"
      "License: line one\n        line two\nRequires-Python: >=3.8\n\nThe body.\nMore.\n");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->name(), "Demo_Pkg");
  EXPECT_EQ(m->requires_python(), ">=3.8");
  EXPECT_THAT(m->GetAll("classifier"), ElementsAre("A", "B"));
  EXPECT_EQ(m->Get("License"), "line one\nline two");
  EXPECT_EQ(m->body, "The body.\nMore.\n");
  EXPECT_THAT(ParseCoreMetadata("Version: 1\n").status().message(), HasSubstr("no Name"));
  EXPECT_THAT(ParseCoreMetadata("Name: x\n").status().message(), HasSubstr("no Version"));
  EXPECT_FALSE(ParseCoreMetadata("Name x\n").ok());
  EXPECT_EQ(NormalizeProjectName("Demo__Pkg.x-Y"), "demo-pkg-x-y");
}

TEST(CoreMetadataTest, TextThatIsNotUtf8IsRefusedNamingTheLine) {
  auto m =
      ParseCoreMetadata("Metadata-Version: 2.1\nName: x\nVersion: 1\nRequires-Python: >=3.8\xff\n");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      m.status().message(),
      HasSubstr("METADATA line 4 is not UTF-8 (byte 23 of \"Requires-Python: >=3.8\\xff\")"));
  EXPECT_THAT(m.status().message(), HasSubstr("Fix:"));
  // In the description too; UTF-8 anywhere is fine.
  EXPECT_THAT(ParseCoreMetadata("Name: x\nVersion: 1\n\ncaf\xe9\n").status().message(),
              HasSubstr("line 4 is not UTF-8"));
  EXPECT_TRUE(ParseCoreMetadata("Name: x\nVersion: 1\nSummary: caf\xc3\xa9\n").ok());
}

TEST(WheelPackageTest, FileNamesThatCouldEscapeOrAreNotWheelsAreRefused) {
  EXPECT_TRUE(CheckWheelFilename("demo_pkg-1.0+cu126-py3-none-any.whl").ok());
  for (const char* bad : {"../demo-1.0-py3-none-any.whl", "a/demo-1.0-py3-none-any.whl",
                          "a\\demo-1.0-py3-none-any.whl", "demo..x-1.0-py3-none-any.whl",
                          ".demo-1.0-py3-none-any.whl", "demo-1.0.tar.gz", "demo-1.0.whl", ""}) {
    EXPECT_FALSE(CheckWheelFilename(bad).ok()) << bad;
  }
  EXPECT_THAT(CheckWheelFilename("demo-1.0.tar.gz").status().message(),
              HasSubstr("source distribution"));
  EXPECT_FALSE(CheckWheelFilename(std::string("demo\n-1.0-py3-none-any.whl")).ok());
  EXPECT_TRUE(SameVersionSpelling("1.0+CU126", "1.0+cu126"));
  EXPECT_FALSE(SameVersionSpelling("1.0", "1.1"));
}

TEST(HttpUrlTest, ParsesRepositoryUrls) {
  auto u = ParseHttpUrl("https://pypi.example.com/legacy/");
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->port, 443);
  EXPECT_EQ(u->path, "/legacy/");
  EXPECT_EQ(u->Origin(), "https://pypi.example.com:443");
  auto local = ParseHttpUrl("http://127.0.0.1:8080");
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->port, 8080);
  EXPECT_EQ(local->path, "/");
  auto v6 = ParseHttpUrl("http://[::1]:9/x");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->Origin(), "http://[::1]:9");
  EXPECT_THAT(ParseHttpUrl("ftp://x/").status().message(), HasSubstr("only http://"));
  EXPECT_THAT(ParseHttpUrl("https://u:p@x/").status().message(), HasSubstr("credentials"));
  EXPECT_FALSE(ParseHttpUrl("http://x:99999/").ok());
  EXPECT_FALSE(ParseHttpUrl("http:///").ok());
}

TEST(UploadDigestsTest, HashesFilesAndAcceptsBothMd5Spellings) {
  TempDir dir;
  WriteFile(dir / "f", "hello");
  auto d = DigestFileForUpload(dir / "f");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->sha256_hex, "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824");
  EXPECT_EQ(d->md5_hex, "5d41402abc4b2a76b9719d911017c592");
  EXPECT_TRUE(Md5Matches("5D41402ABC4B2A76B9719D911017C592", d->md5_hex));
  EXPECT_TRUE(Md5Matches("XUFAKrxLKna5cZ2REBfFkg", d->md5_hex));  // urlsafe b64, no padding
  EXPECT_FALSE(Md5Matches("00000000000000000000000000000000", d->md5_hex));
}

TEST(MultipartBodyTest, StreamsFieldsAndFileWithAnExactLength) {
  TempDir dir;
  const std::string content(3 * 1000 + 7, 'z');
  WriteFile(dir / "w.whl", content);
  MultipartBody body("BOUNDARY");
  body.AddField(":action", "file_upload");
  ASSERT_TRUE(body.AddFile("content", "w.whl", dir / "w.whl").ok());
  body.Finish();
  EXPECT_EQ(body.content_type(), "multipart/form-data; boundary=BOUNDARY");
  std::string all;
  for (uint64_t off = 0;;) {
    auto chunk = body.Read(off, 1000);  // smaller than the file: reads straddle parts
    ASSERT_TRUE(chunk.ok()) << chunk.status();
    if (chunk->empty()) break;
    off += chunk->size();
    all += *chunk;
  }
  EXPECT_EQ(all.size(), body.size());
  EXPECT_EQ(all, absl::StrCat("--BOUNDARY\r\nContent-Disposition: form-data; name=\":action\"\r\n"
                              "\r\nfile_upload\r\n--BOUNDARY\r\nContent-Disposition: form-data; "
                              "name=\"content\"; filename=\"w.whl\"\r\nContent-Type: "
                              "application/octet-stream\r\n\r\n",
                              content, "\r\n--BOUNDARY--\r\n"));
  EXPECT_FALSE(MultipartBody().AddFile("content", "x", dir / "missing").ok());
}

TEST(LegacyUploadFormTest, SendsWhatTwineSends) {
  WheelPackage wheel;
  wheel.filename = "Demo_Pkg-1.0-py2.py3-none-any.whl";
  wheel.parsed = *ParseWheelFilename(wheel.filename);
  wheel.metadata = *ParseCoreMetadata(
      "Metadata-Version: 2.1\nName: Demo_Pkg\nVersion: 1.0\nRequires-Dist: numpy\n"
      "Requires-Dist: six\nHome-page: http://x\n\nBody\n");
  const FormFields f = LegacyUploadFields(wheel, {"ab", "cd"});
  EXPECT_THAT(f, ::testing::IsSupersetOf(
                     {Pair(":action", "file_upload"), Pair("protocol_version", "1"),
                      Pair("filetype", "bdist_wheel"), Pair("pyversion", "py2.py3"),
                      Pair("metadata_version", "2.1"), Pair("name", "Demo-Pkg"),
                      Pair("version", "1.0"), Pair("sha256_digest", "ab"), Pair("md5_digest", "cd"),
                      Pair("requires_dist", "numpy"), Pair("requires_dist", "six"),
                      Pair("home_page", "http://x"), Pair("description", "Body\n")}));
  EXPECT_EQ(UploadProjectName("a_b..c--d"), "a-b..c-d");
}

TEST(CommandHookPublisherTest, RunsTheCommandWithPlaceholdersAndReportsFailures) {
  TempDir dir;
  const std::string wheel = dir / "demo_pkg-1.0-py3-none-any.whl";
  WriteFile(wheel, "wheel bytes");
  fs::create_directories(dir / "dest");
  auto copy =
      CommandHookPublisher::Create({"cp", "{wheel}", dir / "dest/{name}-{version}-{filename}"});
  ASSERT_TRUE(copy.ok()) << copy.status();
  auto done = (*copy)->Publish(wheel);
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_TRUE(fs::exists(dir / "dest/demo_pkg-1.0-demo_pkg-1.0-py3-none-any.whl"));

  auto failing = CommandHookPublisher::Create(
      {"sh", "-c", "echo first >&2; echo 'upload refused: no such release' >&2; exit 4",
       "{wheel}"});
  ASSERT_TRUE(failing.ok());
  auto failed = (*failing)->Publish(wheel);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kAborted);
  EXPECT_THAT(failed.status().message(), HasSubstr("exited with 4"));
  EXPECT_THAT(failed.status().message(), HasSubstr("upload refused: no such release"));

  auto missing = CommandHookPublisher::Create({"no-such-program-wheelfarm", "{wheel}"});
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE((*missing)->Publish(wheel).ok());
  EXPECT_THAT(CommandHookPublisher::Create({"cp", "{whel}"}).status().message(),
              HasSubstr("unknown placeholder \"{whel}\""));
  EXPECT_FALSE(CommandHookPublisher::Create({}).ok());
}

// A value in a shell's script would be shell text: refused when the hook is made, with the
// fix (issue 24). As an argument after the script, or from the environment, it is data.
TEST(CommandHookPublisherTest, RefusesAPlaceholderInsideAShellScript) {
  for (const std::vector<std::string>& hook : std::vector<std::vector<std::string>>{
           {"sh", "-c", "gh release upload v1 {wheel}"},
           {"/bin/bash", "-euo", "pipefail", "-c", "cp {filename} /x"},
           {"bash", "--norc", "-lc", "echo {version}"},
           {"/usr/bin/env", "A=1", "-u", "B", "dash", "-c", "echo {name}"},
           {"busybox", "sh", "-c", "echo {wheel}"}}) {
    auto made = CommandHookPublisher::Create(hook);
    ASSERT_FALSE(made.ok()) << hook[0] << " " << hook.back();
    EXPECT_THAT(made.status().message(), HasSubstr("so a value would become shell text"));
    EXPECT_THAT(made.status().message(),
                HasSubstr(R"(Fix: pass the value as an argument after the script)"));
    EXPECT_THAT(made.status().message(),
                HasSubstr(R"(["sh", "-c", "gh release upload v1 \"$1\"", "sh", "{wheel}"])"));
  }
  for (const std::vector<std::string>& hook : std::vector<std::vector<std::string>>{
           {"sh", "-c", "gh release upload v1 \"$1\"", "sh", "{wheel}"},
           {"sh", "upload.sh", "{wheel}"},
           {"python3", "upload.py", "{wheel}"},
           {"aws", "s3", "cp", "{wheel}", "s3://bucket/{name}/{filename}"}}) {
    EXPECT_TRUE(CommandHookPublisher::Create(hook).ok()) << hook.back();
  }
}

TEST(CommandHookPublisherTest, PassesValuesAsArgumentsAndInTheEnvironment) {
  TempDir dir;
  const std::string wheel = dir / "demo_pkg-1.0-py3-none-any.whl";
  WriteFile(wheel, "wheel bytes");
  auto hook = CommandHookPublisher::Create(
      {"sh", "-c",
       "printf '%s|%s|%s|%s|%s' \"$1\" \"$FARM_WHEEL\" \"$FARM_WHEEL_FILENAME\" "
       "\"$FARM_WHEEL_NAME\" \"$FARM_WHEEL_VERSION\" > \"$2\"",
       "sh", "{filename}", dir / "out"});
  ASSERT_TRUE(hook.ok()) << hook.status();
  ASSERT_TRUE((*hook)->Publish(wheel).ok());
  std::ifstream in(dir / "out");
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(out, absl::StrCat("demo_pkg-1.0-py3-none-any.whl|", wheel,
                              "|demo_pkg-1.0-py3-none-any.whl|demo_pkg|1.0"));
}

// The attack of issue 24: a wheel named to run a command is never handed to the hook.
TEST(CommandHookPublisherTest, RefusesAWheelWhoseNameIsNotAWheelName) {
  TempDir dir;
  const std::string wheel = dir / "probe_pkg-1.0.0$(touch PWNED)-py3-none-linux_x86_64.whl";
  WriteFile(wheel, "wheel bytes");
  auto hook = CommandHookPublisher::Create({"cp", "{wheel}", dir / "dest"});
  ASSERT_TRUE(hook.ok());
  auto published = (*hook)->Publish(wheel);
  EXPECT_EQ(published.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(published.status().message(), HasSubstr("is not a PEP 440 version"));
  EXPECT_FALSE(fs::exists(dir / "dest"));
}

}  // namespace
}  // namespace farm
