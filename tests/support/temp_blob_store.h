// A coordinator CAS for unit tests: a BlobStore over its own StateStore, in a fresh directory
// under the system's temp dir that goes with the object. Header-only: the coordinator's unit
// tests link what it needs.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/state_store.h"

namespace farm::testing {

class TempBlobStore {
 public:
  // `label` and the process id name the directory; `quota` is the BlobStore's.
  static absl::StatusOr<std::unique_ptr<TempBlobStore>> Open(const std::string& label,
                                                             uint64_t quota) {
    std::unique_ptr<TempBlobStore> made(new TempBlobStore(
        std::filesystem::temp_directory_path() / (label + "_" + std::to_string(::getpid()))));
    std::filesystem::remove_all(made->dir_);
    std::filesystem::create_directories(made->dir_);
    auto state = coordinator::StateStore::Open((made->dir_ / "state").string());
    if (!state.ok()) return state.status();
    made->state_ = std::move(*state);
    auto blobs =
        coordinator::BlobStore::Open((made->dir_ / "cas").string(), made->state_.get(), quota);
    if (!blobs.ok()) return blobs.status();
    made->blobs_ = std::move(*blobs);
    return made;
  }

  ~TempBlobStore() {
    blobs_.reset();
    state_.reset();
    std::filesystem::remove_all(dir_);
  }

  coordinator::BlobStore* blobs() const { return blobs_.get(); }
  coordinator::StateStore* state() const { return state_.get(); }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  explicit TempBlobStore(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::filesystem::path dir_;
  std::unique_ptr<coordinator::StateStore> state_;
  std::unique_ptr<coordinator::BlobStore> blobs_;
};

}  // namespace farm::testing
