#include "coordinator/tokens/token_store.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/auth/token.h"
#include "libfarm/logging/logger.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

constexpr size_t kMaxTokenNameBytes = 64;
constexpr size_t kIdHexChars = 12;

farm::v1::TokenRecord WithoutDigest(farm::v1::TokenRecord record) {
  record.clear_sha256();
  return record;
}

}  // namespace

absl::Status CheckTokenName(absl::string_view name) {
  bool ok = !name.empty() && name.size() <= kMaxTokenNameBytes;
  for (char c : name) {
    ok = ok && (absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
                c == '@' || c == '-');
  }
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(
      "a token's name must be 1-64 characters of letters, digits, '.', '_', '@' and '-'. Fix: "
      "name it after who holds it, e.g. --name ci-arm or --name worker-grace-3");
}

absl::StatusOr<std::unique_ptr<TokenStore>> TokenStore::Load(StateStore* store,
                                                             BuildIsRunning build_is_running) {
  std::unique_ptr<TokenStore> tokens(new TokenStore(store, std::move(build_is_running)));
  std::vector<std::string> ended;
  std::vector<farm::v1::TokenRecord> live;
  absl::Status s = store->ForEachRecord<farm::v1::TokenRecord>(
      Table::kTokens, [&](const std::string& id, farm::v1::TokenRecord& record) -> absl::Status {
        if (record.id() != id || !RoleNamed(record.role())) {
          // Left out, the token is refused: the safe side for a record that says no role.
          return store
              ->Quarantine(Table::kTokens, id,
                           absl::StrCat("the token record names id '", record.id(), "' and role '",
                                        record.role(), "'; the token it stood for is refused"))
              .status();
        }
        if (!record.build_id().empty() && !tokens->build_is_running_(record.build_id())) {
          ended.push_back(id);
          return absl::OkStatus();
        }
        live.push_back(std::move(record));
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  {
    absl::MutexLock lock(&tokens->mu_);
    for (auto& record : live) tokens->by_digest_[record.sha256()] = std::move(record);
  }
  for (const std::string& id : ended) {
    if (absl::Status d = store->Delete(Table::kTokens, id); !d.ok()) return d;
  }
  return tokens;
}

absl::StatusOr<farm::v1::CreateTokenResponse> TokenStore::Create(Role role, const std::string& name,
                                                                 const std::string& build_id) {
  FARM_RETURN_IF_ERROR(CheckTokenName(name));
  if ((role == Role::kBuild) != !build_id.empty()) {
    return absl::InvalidArgumentError("a build token, and only a build token, names a build");
  }
  FARM_ASSIGN_OR_RETURN(const std::string token, GenerateToken());
  FARM_ASSIGN_OR_RETURN(const std::string id, GenerateToken());
  farm::v1::TokenRecord record;
  record.set_id(id.substr(0, kIdHexChars));
  record.set_name(name);
  record.set_role(RoleName(role));
  record.set_sha256(TokenDigest(token));
  record.set_created_unix(absl::ToUnixSeconds(absl::Now()));
  record.set_build_id(build_id);
  FARM_RETURN_IF_ERROR(store_->Put(Table::kTokens, record.id(), record));
  {
    absl::MutexLock lock(&mu_);
    by_digest_[record.sha256()] = record;
  }
  if (role != Role::kBuild) {
    ComponentLogger("tokens")->info("token {} '{}' ({}) created", record.id(), name, record.role());
  }
  farm::v1::CreateTokenResponse response;
  *response.mutable_record() = WithoutDigest(std::move(record));
  response.set_token(token);
  return response;
}

std::vector<farm::v1::TokenRecord> TokenStore::List() const {
  std::map<std::string, farm::v1::TokenRecord> by_id;
  absl::MutexLock lock(&mu_);
  for (const auto& [digest, record] : by_digest_) by_id[record.id()] = WithoutDigest(record);
  std::vector<farm::v1::TokenRecord> out;
  for (auto& [id, record] : by_id) out.push_back(std::move(record));
  return out;
}

absl::Status TokenStore::Revoke(const std::string& id) {
  absl::MutexLock lock(&mu_);
  for (auto it = by_digest_.begin(); it != by_digest_.end(); ++it) {
    if (it->second.id() != id) continue;
    FARM_RETURN_IF_ERROR(store_->Delete(Table::kTokens, id));
    ComponentLogger("tokens")->info("token {} '{}' ({}) revoked", id, it->second.name(),
                                    it->second.role());
    by_digest_.erase(it);
    return absl::OkStatus();
  }
  return absl::NotFoundError(
      absl::StrCat("no token with id '", id, "'. Fix: `farmctl token list` shows the ids"));
}

absl::Status TokenStore::DropEndedBuildTokens() {
  std::vector<std::string> builds;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [digest, record] : by_digest_) {
      if (!record.build_id().empty()) builds.push_back(record.build_id());
    }
  }
  // Asked outside the lock: the callback takes the build registry's.
  std::set<std::string> ended;
  for (const std::string& build : builds) {
    if (!build_is_running_(build)) ended.insert(build);
  }
  if (ended.empty()) return absl::OkStatus();
  absl::MutexLock lock(&mu_);
  for (auto it = by_digest_.begin(); it != by_digest_.end();) {
    if (ended.count(it->second.build_id()) == 0) {
      ++it;
      continue;
    }
    FARM_RETURN_IF_ERROR(store_->Delete(Table::kTokens, it->second.id()));
    it = by_digest_.erase(it);
  }
  return absl::OkStatus();
}

bool TokenStore::IsValid(const std::string& id) const {
  if (id == "farm") return true;
  absl::MutexLock lock(&mu_);
  for (const auto& [digest, record] : by_digest_) {
    if (record.id() == id) return true;
  }
  return false;
}

std::optional<Caller> TokenStore::Find(absl::string_view token) const {
  const std::string digest = TokenDigest(token);
  farm::v1::TokenRecord record;
  {
    absl::MutexLock lock(&mu_);
    auto it = by_digest_.find(digest);
    if (it == by_digest_.end()) return std::nullopt;
    record = it->second;
  }
  std::optional<Role> role = RoleNamed(record.role());
  if (!role) return std::nullopt;
  // Checked on each use too: a build that ended between its last call and RevokeBuild.
  if (!record.build_id().empty() && !build_is_running_(record.build_id())) return std::nullopt;
  return Caller{.token_id = record.id(), .role = *role, .build_id = record.build_id()};
}

}  // namespace farm::coordinator
