// The coordinator's durable state: one RocksDB, one column family per kind of record.
// Every write is synced before it returns, so a caller may acknowledge after it.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <google/protobuf/message.h>
#include <rocksdb/db.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace farm::coordinator {

enum class Table {
  kMeta,           // format version and coordinator identity
  kWorkers,        // farm.v1.Worker by name
  kActions,        // farm.v1.ActionRecord by action id (ids sort in submit order)
  kActionCache,    // farm.v1.ActionResult by action key
  kCas,            // farm.v1.BlobRecord by blob hash (coordinator/cas/blob_store.h)
  kBuilds,         // farm.v1.Build (without shards) by build id (coordinator/builds/)
  kBuildLogs,      // google.protobuf.BytesValue log blocks (coordinator/builds/build_log_blocks.h)
  kPackages,       // farm.v1.PackageFile by "<project>/<filename>" (coordinator/index/)
  kCompileCache,   // farm.v1.CompileResult by key (coordinator/compile_cache/)
  kTokens,         // farm.v1.TokenRecord by id (coordinator/tokens/)
  kActionHistory,  // farm.v1.ActionHistory by Action.history_key (coordinator/scheduler/)
  // Stored records the coordinator could not read, byte for byte, by "<table>/<key>"
  // (ForEachRecord): kept for the operator, never read back by the farm.
  kQuarantine,
  // build.bazel.remote.execution.v2.ActionResult by REAPI action hash
  // (coordinator/reapi/action_cache_service.h): clients' results, apart from kActionCache.
  kReapiActionCache,
};

// Puts and deletes applied together by StateStore::Write, atomically and durably.
class StateBatch {
 public:
  void Put(Table table, const std::string& key, const google::protobuf::Message& value);
  void Delete(Table table, const std::string& key);
  // Adds `other`'s operations after this batch's own.
  void Append(StateBatch&& other);
  bool empty() const { return ops_.empty(); }

 private:
  friend class StateStore;
  struct Op {
    Table table;
    std::string key;
    std::optional<std::string> value;  // nullopt: delete
  };
  std::vector<Op> ops_;
};

class StateStore {
 public:
  // RocksDB's memory, both shared by every table: memtables (writes not yet in table files)
  // and the cache of blocks read from table files, their index and filter blocks included.
  static constexpr size_t kMemtableBudgetBytes = 32 << 20;
  static constexpr size_t kBlockCacheBytes = 8 << 20;

  // Opens or creates the store in `dir`. Never repairs or resets: a corrupt store, a store
  // locked by another process, or an unwritable directory is an error naming the fix.
  // `env` (not owned; default: the process's) lets tests put RocksDB on a file system that
  // fails on command, as RocksDB's own fault-injection tests do.
  static absl::StatusOr<std::unique_ptr<StateStore>> Open(const std::string& dir,
                                                          rocksdb::Env* env = nullptr);
  // What an operator asks for explicitly (farm-coordinator --repair): copies `dir` aside
  // first, then lets RocksDB salvage what it can. Returns the copy's path.
  static absl::StatusOr<std::string> Repair(const std::string& dir);
  ~StateStore();

  absl::Status Put(Table table, const std::string& key, const google::protobuf::Message& value);
  absl::Status Delete(Table table, const std::string& key);
  // Applies the whole batch or nothing, synced. Safe to call from many threads at once:
  // RocksDB commits concurrent batches together with one sync.
  absl::Status Write(const StateBatch& batch);
  // NOT_FOUND when absent; DATA_LOSS when the stored bytes don't parse. A record whose only
  // fault is text that is not UTF-8 is read with that text escaped (ParseEscapingInvalidUtf8).
  absl::Status Get(Table table, const std::string& key, google::protobuf::Message* value) const;
  // Visits every record of `table` in key order; stops at the first error `visit` returns.
  absl::Status ForEach(Table table,
                       const std::function<absl::Status(const std::string& key,
                                                        const std::string& value)>& visit) const;

  // What a loader reads its table with at start: visits every record of `table` parsed as a
  // `Record`, and never lets one record keep the farm from starting. A record whose string
  // fields hold bytes that are not UTF-8 (stored by a coordinator before they were escaped
  // where they enter) is read with them escaped and stored so; its original bytes go to the
  // quarantine. A record that does not parse at all is moved to the quarantine and skipped.
  // Both are logged with the keys. Errors: what `visit` returns, or a failed write.
  template <typename Record>
  absl::Status ForEachRecord(
      Table table,
      const std::function<absl::Status(const std::string& key, Record& record)>& visit) {
    Record record;
    return ForEachParsed(table, &record,
                         [&](const std::string& key) { return visit(key, record); });
  }
  // Moves the record `key` of `table` to the quarantine, byte for byte, saying `why` in the
  // log; for a loader that finds a record it parses but cannot use. Returns the quarantine key.
  absl::StatusOr<std::string> Quarantine(Table table, const std::string& key,
                                         const std::string& why);
  // How many records the quarantine holds (farm_state_quarantined_records).
  uint64_t QuarantinedRecords() const { return quarantined_.load(); }

  // A consistent copy of the whole store as it is now, in `dir` (which must not exist), made
  // while the store serves: table files are hard-linked where the filesystem allows.
  absl::Status Checkpoint(const std::string& dir) const;

  const std::string& dir() const { return dir_; }

  // What RocksDB holds in memory now (docs/benchmarks.md: Retention).
  struct MemoryUse {
    uint64_t memtables = 0;
    uint64_t block_cache = 0;           // blocks read, index and filter blocks included
    uint64_t block_cache_capacity = 0;  // of every cache the tables read through
    uint64_t table_readers = 0;         // open table files, beside the cache
  };
  MemoryUse Memory() const;

 private:
  StateStore(std::string dir, std::unique_ptr<rocksdb::DB> db,
             std::vector<rocksdb::ColumnFamilyHandle*> handles);
  rocksdb::ColumnFamilyHandle* Handle(Table table) const;
  absl::Status ForEachParsed(Table table, google::protobuf::Message* record,
                             const std::function<absl::Status(const std::string& key)>& visit);
  // Keeps `bytes`, record `key` of `table` as stored, in the quarantine under a key not yet
  // taken and, in the same write, replaces the record with `readable` or deletes it.
  // Returns the quarantine key.
  absl::StatusOr<std::string> MoveToQuarantine(Table table, const std::string& key,
                                               const std::string& bytes,
                                               const google::protobuf::Message* readable);

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // all opened families, ours first
  std::atomic<uint64_t> quarantined_{0};
};

}  // namespace farm::coordinator
