// A PEP 503 "simple" package index over loopback for tests: real HTTP (python's http.server)
// serving project pages the test writes, each linking files with the hash fragment it chooses.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "libfarm/process/subprocess.h"

namespace farm::testing {

class SimpleIndex {
 public:
  // Serves `root` (created) on 127.0.0.1 at a free port; fails if /usr/bin/python3 is missing.
  static absl::StatusOr<SimpleIndex> Start(const std::filesystem::path& root);
  // Moved-from indexes stop nothing.
  SimpleIndex(SimpleIndex&& other) noexcept
      : root_(std::move(other.root_)),
        server_(std::exchange(other.server_, std::nullopt)),
        url_(std::move(other.url_)) {}
  SimpleIndex& operator=(SimpleIndex&&) = delete;
  ~SimpleIndex();

  // ".../simple/": what a recipe's `index` or PIP_INDEX_URL names.
  std::string url() const { return url_; }
  // Copies `file` into the index and lists it on `project`'s page with `fragment` ("" for none,
  // "sha256" for its real sha256, or a literal "#sha256=..."). Returns the file's sha256.
  std::string Publish(const std::string& project, const std::filesystem::path& file,
                      const std::string& fragment = "sha256");

 private:
  SimpleIndex(std::filesystem::path root, Subprocess server, std::string url)
      : root_(std::move(root)), server_(std::move(server)), url_(std::move(url)) {}
  std::filesystem::path root_;
  std::optional<Subprocess> server_;
  std::string url_;
};

}  // namespace farm::testing
