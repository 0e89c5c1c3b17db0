// farm-nvcc's whole-compile cache on the coordinator: CompileResult by key, in RocksDB.
// An entry whose outputs left the CAS is no entry; a new entry must name outputs the CAS
// holds, so a hit can always be restored.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/state_store.h"
#include "farm/v1/actions.pb.h"

namespace farm::coordinator {

class CompileResultTable {
 public:
  CompileResultTable(StateStore* store, BlobStore* blobs) : store_(store), blobs_(blobs) {}

  // NOT_FOUND for no entry, or one with an output evicted from the CAS.
  absl::StatusOr<farm::v1::CompileResult> Get(const std::string& key);
  // INVALID_ARGUMENT for a malformed key, path or digest, or an oversized entry;
  // FAILED_PRECONDITION for an output the CAS lacks.
  absl::Status Put(const std::string& key, const farm::v1::CompileResult& result);

 private:
  StateStore* const store_;
  BlobStore* const blobs_;
};

}  // namespace farm::coordinator
