#include "coordinator/state_store.h"

#include <filesystem>
#include <set>

#include <rocksdb/cache.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "libfarm/disk/disk_space.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"
#include "libfarm/text/utf8.h"
#include "libfarm/text/utf8_fields.h"
#include "libfarm/units/byte_size.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

// Order matches enum Table.
const std::vector<std::string>& OurFamilies() {
  static const std::vector<std::string> kNames = {
      "meta",           "workers",    "actions",           "action_cache",  "cas",
      "builds",         "build_logs", "packages",          "compile_cache", "tokens",
      "action_history", "quarantine", "reapi_action_cache"};
  return kNames;
}

absl::Status Damaged(const std::string& dir, const std::string& detail) {
  return absl::DataLossError(absl::StrCat(
      "the farm state in ", dir, " is corrupt (", detail,
      "). Nothing was changed. Fix: restore the data dir from a backup; or run farm-coordinator "
      "--repair with the same --data-dir, which keeps a copy first and salvages what it can; or "
      "move it aside to start an empty farm"));
}

absl::Status DiskFull(const std::string& dir, const std::string& detail) {
  return absl::FailedPreconditionError(absl::StrCat(
      "disk full: free space on the filesystem of ", dir, " (", detail,
      "). Fix: free space there (farm-coordinator --cas-quota bounds the CAS beside it), then "
      "start the coordinator again; its state is intact"));
}

absl::Status FromRocks(const rocksdb::Status& s, const std::string& dir) {
  if (s.ok()) return absl::OkStatus();
  const std::string detail = s.ToString();
  if (s.IsNoSpace() || IsDiskFull(absl::InternalError(detail))) return DiskFull(dir, detail);
  if (s.IsCorruption()) return Damaged(dir, detail);
  // CURRENT naming a manifest that is gone: the store is damaged, not merely unreachable.
  if (s.IsIOError() && absl::StrContains(detail, "MANIFEST") &&
      absl::StrContains(detail, "No such file")) {
    return Damaged(dir, detail);
  }
  if (s.IsIOError() && absl::StrContains(detail, "lock")) {
    return absl::FailedPreconditionError(
        absl::StrCat("the data dir ", dir, " is in use by another farm-coordinator (", detail,
                     "). Fix: stop that coordinator, or give this one its own --data-dir"));
  }
  if (absl::StrContains(detail, "Permission denied") ||
      absl::StrContains(detail, "Read-only file system")) {
    return absl::PermissionDeniedError(absl::StrCat(
        "cannot write the farm state in ", dir, " (", detail,
        "). Fix: make the data dir writable by this user, or choose another --data-dir"));
  }
  return absl::InternalError(absl::StrCat("RocksDB error in ", dir, ": ", detail));
}

rocksdb::Options StoreOptions() {
  rocksdb::Options options;
  options.create_if_missing = true;
  options.create_missing_column_families = true;
  options.paranoid_checks = true;
  // RocksDB's default (point in time) stops replaying the WAL at the first corrupt record and
  // opens without a word, dropping every acknowledged write behind it. This mode forgives only
  // a torn last record (a write that was never acknowledged) and refuses any other damage.
  options.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  options.keep_log_file_num = 5;
  // Memtables are the store's memory: 64 MiB per family by default, ten families. One budget
  // for all of them bounds the coordinator's RSS however many actions pass through it.
  options.write_buffer_size = 8 << 20;
  options.db_write_buffer_size = StateStore::kMemtableBudgetBytes;
  options.max_manifest_file_size = 64 << 20;
  // The rest of it: blocks read from table files. Every family shares one cache, and each
  // table's index and filter blocks are kept in it too rather than beside it, so this
  // memory stays within the cache however many records the store holds. Bloom filters let
  // a lookup of an absent key (most action-cache and CAS lookups) skip reading blocks.
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(StateStore::kBlockCacheBytes);
  table.cache_index_and_filter_blocks = true;
  table.pin_l0_filter_and_index_blocks_in_cache = true;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return options;
}

// The default family first, then ours in Table order, then any a newer coordinator wrote
// (opened too, and left alone).
std::vector<rocksdb::ColumnFamilyDescriptor> Families(const rocksdb::Options& options,
                                                      const std::string& dir) {
  std::vector<std::string> names = OurFamilies();
  names.insert(names.begin(), rocksdb::kDefaultColumnFamilyName);
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(options, dir, &existing).ok()) {
    for (const auto& n : existing) {
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names) descriptors.emplace_back(n, rocksdb::ColumnFamilyOptions(options));
  return descriptors;
}

// Opening writes: replaying the WAL into a table file and a new manifest. Started on a full
// disk, RocksDB fails half-way through that (Debian's build then aborts on an assertion) and
// systemd would restart it into the same abort; refused up front it is a clear exit 2.
absl::Status CheckRoomToOpen(const std::string& dir) {
  constexpr uint64_t kHeadroom = 16ull << 20;
  std::error_code ec;
  uint64_t wal_bytes = 0;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".log") wal_bytes += entry.file_size(ec);
  }
  const std::string where = fs::exists(dir, ec) ? dir : fs::path(dir).parent_path().string();
  auto free = FreeBytes(where);
  if (!free.ok()) return absl::OkStatus();  // unknown: let RocksDB say what is wrong
  const uint64_t needed = kHeadroom + 2 * wal_bytes;
  if (*free >= needed) return absl::OkStatus();
  return DiskFull(dir, absl::StrCat(FormatByteSize(*free), " free, opening the farm state needs ",
                                    FormatByteSize(needed)));
}

}  // namespace

absl::StatusOr<std::string> StateStore::Repair(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec) || fs::is_empty(dir, ec)) {
    return absl::NotFoundError(
        absl::StrCat("no farm state in ", dir, " to repair. Fix: pass the --data-dir of the farm"));
  }
  const std::string copy = absl::StrCat(
      dir, ".before-repair-", absl::FormatTime("%Y%m%dT%H%M%S", absl::Now(), absl::UTCTimeZone()));
  fs::copy(dir, copy, fs::copy_options::recursive, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot copy ", dir, " to ", copy, " before repairing (", ec.message(),
                     "); nothing was changed. Fix: free space next to the data dir"));
  }
  const rocksdb::Options options = StoreOptions();
  rocksdb::Status s = rocksdb::RepairDB(dir, options, Families(options, dir), options);
  if (!s.ok()) {
    return absl::InternalError(absl::StrCat("RocksDB could not repair ", dir, ": ", s.ToString(),
                                            ". The state before the attempt is in ", copy));
  }
  return copy;
}

absl::StatusOr<std::unique_ptr<StateStore>> StateStore::Open(const std::string& dir,
                                                             rocksdb::Env* env) {
  std::error_code ec;
  // A directory with store files but no CURRENT is a damaged store, not a new one: creating a
  // fresh database there would silently drop the farm's state.
  if (fs::is_directory(dir, ec) && !fs::is_empty(dir, ec) &&
      !fs::exists(fs::path(dir) / "CURRENT", ec)) {
    return absl::DataLossError(absl::StrCat(
        "the farm state in ", dir,
        " has files but no CURRENT file, so it is damaged or not a farm store. Nothing was "
        "changed. Fix: restore it from a backup, or move it aside to start an empty farm"));
  }

  FARM_RETURN_IF_ERROR(CheckRoomToOpen(dir));

  rocksdb::Options options = StoreOptions();
  if (env != nullptr) options.env = env;
  const std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = Families(options, dir);
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, descriptors, &handles, &raw);
  if (!s.ok()) return FromRocks(s, dir);
  // Drop the default family handle; ours start at index 0 to match Table.
  std::unique_ptr<rocksdb::DB> db(raw);
  db->DestroyColumnFamilyHandle(handles.front());
  handles.erase(handles.begin());
  std::unique_ptr<StateStore> store(new StateStore(dir, std::move(db), std::move(handles)));
  uint64_t quarantined = 0;
  FARM_RETURN_IF_ERROR(
      store->ForEach(Table::kQuarantine, [&](const std::string&, const std::string&) {
        ++quarantined;
        return absl::OkStatus();
      }));
  store->quarantined_ = quarantined;
  if (quarantined > 0) {
    ComponentLogger("coordinator")
        ->warn(
            "the farm state in {} holds {} quarantined record(s) (table \"quarantine\"): records "
            "an earlier start could not read, kept byte for byte for the operator",
            dir, quarantined);
  }
  return store;
}

StateStore::StateStore(std::string dir, std::unique_ptr<rocksdb::DB> db,
                       std::vector<rocksdb::ColumnFamilyHandle*> handles)
    : dir_(std::move(dir)), db_(std::move(db)), handles_(std::move(handles)) {}

StateStore::~StateStore() {
  for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
  db_->Close();
}

rocksdb::ColumnFamilyHandle* StateStore::Handle(Table table) const {
  return handles_[static_cast<size_t>(table)];
}

absl::Status StateStore::Put(Table table, const std::string& key,
                             const google::protobuf::Message& value) {
  std::string bytes;
  if (!value.SerializeToString(&bytes)) {
    return absl::InternalError(absl::StrCat("cannot serialize ", value.GetTypeName()));
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(db_->Put(sync, Handle(table), key, bytes), dir_);
}

absl::Status StateStore::Delete(Table table, const std::string& key) {
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(db_->Delete(sync, Handle(table), key), dir_);
}

void StateBatch::Put(Table table, const std::string& key, const google::protobuf::Message& value) {
  ops_.push_back({table, key, value.SerializeAsString()});
}

void StateBatch::Delete(Table table, const std::string& key) {
  ops_.push_back({table, key, std::nullopt});
}

void StateBatch::Append(StateBatch&& other) {
  ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()),
              std::make_move_iterator(other.ops_.end()));
  other.ops_.clear();
}

absl::Status StateStore::Write(const StateBatch& batch) {
  rocksdb::WriteBatch wb;
  for (const auto& op : batch.ops_) {
    if (op.value) {
      wb.Put(Handle(op.table), op.key, *op.value);
    } else {
      wb.Delete(Handle(op.table), op.key);
    }
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  return FromRocks(db_->Write(sync, &wb), dir_);
}

absl::Status StateStore::Checkpoint(const std::string& dir) const {
  rocksdb::Checkpoint* raw = nullptr;
  FARM_RETURN_IF_ERROR(FromRocks(rocksdb::Checkpoint::Create(db_.get(), &raw), dir_));
  std::unique_ptr<rocksdb::Checkpoint> checkpoint(raw);
  return FromRocks(checkpoint->CreateCheckpoint(dir), dir_);
}

absl::Status StateStore::Get(Table table, const std::string& key,
                             google::protobuf::Message* value) const {
  std::string bytes;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), Handle(table), key, &bytes);
  if (s.IsNotFound()) return absl::NotFoundError(key);
  if (!s.ok()) return FromRocks(s, dir_);
  if (ParseEscapingInvalidUtf8(bytes, value) < 0) {
    return absl::DataLossError(
        absl::StrCat("record ", key, " in ", dir_, " is not a valid ", value->GetTypeName()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> StateStore::MoveToQuarantine(
    Table table, const std::string& key, const std::string& bytes,
    const google::protobuf::Message* readable) {
  const std::string base = absl::StrCat(OurFamilies()[static_cast<size_t>(table)], "/", key);
  std::string kept = base;
  std::string ignored;
  for (int n = 2; db_->Get(rocksdb::ReadOptions(), Handle(Table::kQuarantine), kept, &ignored).ok();
       ++n) {
    kept = absl::StrCat(base, "#", n);  // the same record went bad again: keep both
  }
  rocksdb::WriteBatch batch;
  batch.Put(Handle(Table::kQuarantine), kept, bytes);
  if (readable != nullptr) {
    batch.Put(Handle(table), key, readable->SerializeAsString());
  } else {
    batch.Delete(Handle(table), key);
  }
  rocksdb::WriteOptions sync;
  sync.sync = true;
  FARM_RETURN_IF_ERROR(FromRocks(db_->Write(sync, &batch), dir_));
  ++quarantined_;
  return kept;
}

absl::StatusOr<std::string> StateStore::Quarantine(Table table, const std::string& key,
                                                   const std::string& why) {
  std::string bytes;
  FARM_RETURN_IF_ERROR(
      FromRocks(db_->Get(rocksdb::ReadOptions(), Handle(table), key, &bytes), dir_));
  FARM_ASSIGN_OR_RETURN(const std::string kept, MoveToQuarantine(table, key, bytes, nullptr));
  ComponentLogger("coordinator")
      ->error(
          "record \"{}\" of table {} moved to the quarantine as \"{}\" and left out: {}. The "
          "farm goes on without it. Fix: restore it from a backup if it is needed",
          ValidUtf8OrEscaped(key), OurFamilies()[static_cast<size_t>(table)], kept, why);
  return kept;
}

absl::Status StateStore::ForEachParsed(
    Table table, google::protobuf::Message* record,
    const std::function<absl::Status(const std::string& key)>& visit) {
  const std::string& family = OurFamilies()[static_cast<size_t>(table)];
  // Writes during the scan are not seen by it: its iterator reads the store as it began.
  return ForEach(table, [&](const std::string& key, const std::string& bytes) -> absl::Status {
    const int escaped = ParseEscapingInvalidUtf8(bytes, record);
    if (escaped == 0) return visit(key);
    FARM_ASSIGN_OR_RETURN(const std::string kept,
                          MoveToQuarantine(table, key, bytes, escaped > 0 ? record : nullptr));
    auto log = ComponentLogger("coordinator");
    if (escaped < 0) {
      log->error(
          "record \"{}\" of table {} does not parse as a {}: moved to the quarantine as "
          "\"{}\" and left out; the farm starts without it. Fix: restore it from a backup "
          "if it is needed",
          ValidUtf8OrEscaped(key), family, record->GetTypeName(), kept);
      return absl::OkStatus();
    }
    log->warn(
        "record \"{}\" of table {} held {} text value(s) that are not UTF-8: read and "
        "stored again with those bytes escaped as \\xNN; its original bytes are in the "
        "quarantine as \"{}\"",
        ValidUtf8OrEscaped(key), family, escaped, kept);
    return visit(key);
  });
}

absl::Status StateStore::ForEach(
    Table table,
    const std::function<absl::Status(const std::string& key, const std::string& value)>& visit)
    const {
  // A scan of a whole table would push every useful block out of the cache.
  rocksdb::ReadOptions scan;
  scan.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(scan, Handle(table)));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    absl::Status s = visit(it->key().ToString(), it->value().ToString());
    if (!s.ok()) return s;
  }
  return FromRocks(it->status(), dir_);
}

StateStore::MemoryUse StateStore::Memory() const {
  MemoryUse use;
  uint64_t bytes = 0;
  if (db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kCurSizeAllMemTables, &bytes)) {
    use.memtables = bytes;
  }
  if (db_->GetAggregatedIntProperty(rocksdb::DB::Properties::kEstimateTableReadersMem, &bytes)) {
    use.table_readers = bytes;
  }
  // Every cache any family reads through, each counted once.
  std::set<rocksdb::Cache*> caches;
  for (auto* h : handles_) {
    const auto* table =
        db_->GetOptions(h).table_factory->GetOptions<rocksdb::BlockBasedTableOptions>();
    if (table != nullptr && table->block_cache != nullptr) caches.insert(table->block_cache.get());
  }
  for (rocksdb::Cache* cache : caches) {
    use.block_cache += cache->GetUsage();
    use.block_cache_capacity += cache->GetCapacity();
  }
  return use;
}

}  // namespace farm::coordinator
