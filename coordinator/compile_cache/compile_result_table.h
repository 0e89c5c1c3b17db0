// farm-nvcc's whole-compile cache on the coordinator: CompileResult by scope and key, in
// RocksDB. The scope says whose entry it is (compile_cache_scope.h): the same key in two
// scopes is two entries, so no writer answers a compile outside its own scope. An entry
// whose outputs left the CAS is no entry; a new entry must name outputs the CAS holds, so a
// hit can always be restored.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/state_store.h"
#include "farm/v1/actions.pb.h"

namespace farm::coordinator {

class CompileResultTable {
 public:
  CompileResultTable(StateStore* store, BlobStore* blobs) : store_(store), blobs_(blobs) {}

  // The entry for `key` in the first of `scopes` that has one; NOT_FOUND for none (an entry
  // with an output evicted from the CAS is none).
  absl::StatusOr<farm::v1::CompileResult> Get(const std::vector<std::string>& scopes,
                                              const std::string& key);
  // INVALID_ARGUMENT for an empty scope, a malformed key, path or digest, or an oversized
  // entry; FAILED_PRECONDITION for an output the CAS lacks.
  absl::Status Put(const std::string& scope, const std::string& key,
                   const farm::v1::CompileResult& result);

 private:
  StateStore* const store_;
  BlobStore* const blobs_;
};

}  // namespace farm::coordinator
