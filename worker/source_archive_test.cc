// source_archive.py as farm-worker runs it: fetching sdists from a real HTTP index and release
// archives by URL (SimpleIndex: python's http.server over loopback), and unpacking archives made
// by python's tarfile, hostile ones included.
#include "worker/source_archive.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/digest/digest.h"
#include "libfarm/process/subprocess.h"
#include "tests/support/simple_index.h"

namespace farm::worker {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kPython[] = "/usr/bin/python3";

// Makes archives with tarfile: `members` is python source for a list of (name, kind, data).
void MakeTar(const fs::path& archive, const std::string& members,
             const std::string& mode = "w:gz") {
  const std::string code = absl::StrCat(R"(
import io, sys, tarfile
with tarfile.open(sys.argv[1], sys.argv[2]) as t:
    for name, kind, data in )",
                                        members, R"(:
        i = tarfile.TarInfo(name)
        if kind == "dir":
            i.type = tarfile.DIRTYPE; t.addfile(i)
        elif kind == "sym":
            i.type = tarfile.SYMTYPE; i.linkname = data; t.addfile(i)
        elif kind == "fifo":
            i.type = tarfile.FIFOTYPE; t.addfile(i)
        else:
            b = data.encode(); i.size = len(b); i.mode = 0o755 if kind == "exe" else 0o644
            t.addfile(i, io.BytesIO(b))
)");
  auto r = RunCommand({kPython, "-c", code, archive.string(), mode});
  ASSERT_TRUE(r.ok() && r->exit_code == 0) << (r.ok() ? r->stderr_text : r.status().ToString());
}

class SourceArchiveTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kPython)) << "the test needs " << kPython;
    dir_ = fs::temp_directory_path() / absl::StrCat("source_archive_test_", ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    script_ = dir_ / "source_archive.py";
    std::ofstream(script_) << SourceArchiveScript();
  }
  void TearDown() override {
    index_.reset();
    fs::remove_all(dir_);
  }
  CommandResult Unpack(const fs::path& archive, const fs::path& into) {
    auto r = RunCommand({kPython, script_.string(), "unpack", archive.string(), into.string()});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : CommandResult{};
  }
  // A project page listing a small sdist named `file`, with `fragment` (see SimpleIndex).
  std::string Publish(const std::string& project, const std::string& file,
                      const std::string& fragment = "sha256") {
    if (!index_) {
      auto started = testing::SimpleIndex::Start(dir_ / "index");
      EXPECT_TRUE(started.ok()) << started.status();
      index_.emplace(std::move(*started));
    }
    MakeTar(dir_ / file,
            R"py([("pkg-1.0", "dir", ""), ("pkg-1.0/setup.py", "file", "print('hi')")])py");
    return index_->Publish(project, dir_ / file, fragment);
  }
  std::string Sha256(const fs::path& file) {
    auto d = DigestOfFile(file.string());
    EXPECT_TRUE(d.ok());
    return d.ok() ? d->hash() : "";
  }

  fs::path dir_;
  fs::path script_;
  std::optional<testing::SimpleIndex> index_;
};

TEST_F(SourceArchiveTest, UnpacksTheTopDirectoryAsTheTree) {
  MakeTar(dir_ / "a.tar.gz",
          R"([("pkg-1.0", "dir", ""), ("pkg-1.0/setup.py", "file", "x"),
              ("pkg-1.0/tools/run.sh", "exe", "#!/bin/sh"), ("pkg-1.0/csrc", "dir", ""),
              ("pkg-1.0/pkg/csrc", "sym", "../csrc")])");
  auto r = Unpack(dir_ / "a.tar.gz", dir_ / "src");
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_TRUE(fs::is_regular_file(dir_ / "src" / "setup.py"));
  EXPECT_NE(fs::status(dir_ / "src" / "tools" / "run.sh").permissions() & fs::perms::owner_exec,
            fs::perms::none);
  EXPECT_EQ(fs::read_symlink(dir_ / "src" / "pkg" / "csrc"), "../csrc");
}

TEST_F(SourceArchiveTest, UnpacksXzAndBzip2WhateverTheArchiveIsNamed) {
  for (const std::string mode : {"w:xz", "w:bz2"}) {
    // The build's input is named .wheelfarm/source-archive: the bytes say the compression.
    const fs::path archive = dir_ / ("source-archive-" + mode.substr(2));
    MakeTar(archive, R"([("vision-0.26.0", "dir", ""), ("vision-0.26.0/setup.py", "file", "x")])",
            mode);
    auto r = Unpack(archive, dir_ / ("src-" + mode.substr(2)));
    ASSERT_EQ(r.exit_code, 0) << mode << ": " << r.stderr_text;
    EXPECT_TRUE(fs::is_regular_file(dir_ / ("src-" + mode.substr(2)) / "setup.py")) << mode;
  }
}

TEST_F(SourceArchiveTest, RefusesMembersThatWouldWriteOutsideTheTree) {
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {R"([("p-1", "dir", ""), ("p-1/../../evil", "file", "x")])", "outside the tree"},
      {R"([("/etc/p-1", "file", "x")])", "outside the tree"},
      {R"([("p-1", "dir", ""), ("p-1/up", "sym", "../../.."), ("p-1/x", "file", "")])",
       "leaves the tree"},
      {R"([("p-1", "dir", ""), ("p-1/abs", "sym", "/etc")])", "leaves the tree"},
      {R"([("p-1", "dir", ""), ("p-1/ok", "sym", "."), ("p-1/fifo", "fifo", "")])",
       "neither a file"},
      {R"([("p-1/a", "file", ""), ("q-1/b", "file", "")])", "2 top-level entries"},
  };
  int i = 0;
  for (const auto& [members, why] : hostile) {
    // Half as gzip (sdists), half as xz (release archives): the same checks either way.
    const fs::path archive = dir_ / absl::StrCat("h", i, ".tar");
    MakeTar(archive, members, i++ % 2 == 0 ? "w:gz" : "w:xz");
    auto r = Unpack(archive, dir_ / absl::StrCat("out", i));
    EXPECT_EQ(r.exit_code, 2) << members;
    EXPECT_THAT(r.stderr_text, HasSubstr(why)) << members;
  }
  EXPECT_FALSE(fs::exists(dir_.parent_path() / "evil"));
}

TEST_F(SourceArchiveTest, FetchesTheSdistTheIndexListsAndChecksItsHash) {
  const std::string sha = Publish("my-pkg", "my_pkg-1.0.tar.gz");
  const std::string index = index_->url();
  auto fetched = FetchSdist(kPython, index, "My.Pkg", "1.0", (dir_ / "fetch").string());
  ASSERT_TRUE(fetched.ok()) << fetched.status();
  EXPECT_EQ(fetched->file, "my_pkg-1.0.tar.gz");
  EXPECT_EQ(fetched->sha256, sha);
  EXPECT_EQ(Sha256(fetched->path), sha);

  auto missing = FetchSdist(kPython, index, "my-pkg", "2.0", (dir_ / "fetch2").string());
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("no source distribution of my-pkg 2.0 (sdists there: my_pkg-1.0.tar.gz)"));
}

TEST_F(SourceArchiveTest, RefusesAnSdistWithoutAHashOrWithAnotherHash) {
  Publish("nohash", "nohash-1.0.tar.gz", "");
  Publish("wrong", "wrong-1.0.tar.gz", "#sha256=" + std::string(64, '0'));
  const std::string index = index_->url();
  auto nohash = FetchSdist(kPython, index, "nohash", "1.0", (dir_ / "f1").string());
  ASSERT_FALSE(nohash.ok());
  EXPECT_THAT(std::string(nohash.status().message()), HasSubstr("without a sha256 hash"));
  auto wrong = FetchSdist(kPython, index, "wrong", "1.0", (dir_ / "f2").string());
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("the index says 0000"));
  EXPECT_FALSE(fs::exists(dir_ / "f2" / "wrong-1.0.tar.gz"));
}

TEST_F(SourceArchiveTest, AnUnreachableIndexSaysWhereSdistsComeFrom) {
  auto r = FetchSdist(kPython, "http://127.0.0.1:1/simple/", "x", "1.0", (dir_ / "f").string());
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("PIP_INDEX_URL"));
  EXPECT_EQ(SdistIndexUrl("", ""), "https://pypi.org/simple/");
  EXPECT_EQ(SdistIndexUrl("", "http://mirror/simple"), "http://mirror/simple");
  EXPECT_EQ(SdistIndexUrl("http://own/simple", "http://mirror/simple"), "http://own/simple");
}

// A release archive by URL (kind "archive"), served by http.server over loopback.
TEST_F(SourceArchiveTest, DownloadsAnArchiveCheckingTheRecipesSha256WhenItNamesOne) {
  const std::string sha = Publish("vision", "v0.26.0.tar.gz");
  const std::string url = index_->url() + "../files/v0.26.0.tar.gz";

  auto pinned = DownloadArchive(kPython, url, sha, (dir_ / "d1").string());
  ASSERT_TRUE(pinned.ok()) << pinned.status();
  EXPECT_EQ(pinned->file, "v0.26.0.tar.gz");
  EXPECT_EQ(pinned->sha256, sha);
  EXPECT_EQ(Sha256(pinned->path), sha);
  EXPECT_EQ(pinned->size, fs::file_size(pinned->path));

  // No sha256 in the recipe: fetched, and the result says what the bytes hash to.
  auto unpinned = DownloadArchive(kPython, url, "", (dir_ / "d2").string());
  ASSERT_TRUE(unpinned.ok()) << unpinned.status();
  EXPECT_EQ(unpinned->sha256, sha);

  // Another digest: refused naming both, and nothing left behind.
  const std::string other(64, 'b');
  auto wrong = DownloadArchive(kPython, url, other, (dir_ / "d3").string());
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(std::string(wrong.status().message()),
              HasSubstr(absl::StrCat("has sha256 ", sha, ", the recipe says ", other)));
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("Fix:"));
  EXPECT_FALSE(fs::exists(dir_ / "d3" / "v0.26.0.tar.gz"));
}

TEST_F(SourceArchiveTest, RefusesArchiveUrlsItCannotOrShouldNotFetch) {
  Publish("vision", "v0.26.0.tar.gz");
  const std::string files = index_->url() + "../files/";
  const std::vector<std::pair<std::string, std::string>> refused = {
      {files + "missing-1.0.tar.gz", "HTTP Error 404"},
      {"http://127.0.0.1:1/x-1.0.tar.gz", "cannot download"},
      {"file:///etc/passwd.tar.gz", "is not an http(s) URL"},
      {files + "v0.26.0.zip", "names no archive file"},
      {files, "names no archive file"},
  };
  int i = 0;
  for (const auto& [url, why] : refused) {
    auto r = DownloadArchive(kPython, url, "", (dir_ / absl::StrCat("r", i++)).string());
    ASSERT_FALSE(r.ok()) << url;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(why)) << url;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("downloading the source archive"));
  }
  auto bad = DownloadArchive(kPython, files + "v0.26.0.tar.gz", "abc", (dir_ / "r9").string());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("is not a sha256"));
}

}  // namespace
}  // namespace farm::worker
