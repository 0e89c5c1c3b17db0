// The farm's tokens beyond the coordinator's token file: made, listed and revoked by an
// admin (farmctl token), or issued by the coordinator to each wheel build it leases. Only
// each token's SHA-256 is stored (table "tokens"); lookups compare digests, so a copy of the
// data dir or a backup holds no usable token. Revocation takes effect for the next call.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "coordinator/state_store.h"
#include "farm/v1/tokens.pb.h"
#include "libfarm/auth/role.h"
#include "libfarm/rpc/token_auth.h"

namespace farm::coordinator {

class TokenStore : public TokenDirectory {
 public:
  // Whether a build still runs: a build token is valid only while its build does.
  using BuildIsRunning = std::function<bool(const std::string& build_id)>;

  // Reads every stored token; build tokens of builds that no longer run are deleted.
  static absl::StatusOr<std::unique_ptr<TokenStore>> Load(StateStore* store,
                                                          BuildIsRunning build_is_running);

  // A new token: its text (only here, never stored) and its record without the digest.
  // `build_id` is for Role::kBuild only.
  absl::StatusOr<farm::v1::CreateTokenResponse> Create(Role role, const std::string& name,
                                                       const std::string& build_id = "");
  // Every token, by id, without digests.
  std::vector<farm::v1::TokenRecord> List() const;
  // NOT_FOUND naming the id when there is no such token.
  absl::Status Revoke(const std::string& id);
  // Deletes the build tokens whose build no longer runs (the coordinator's sweep).
  absl::Status DropEndedBuildTokens();
  // Whether `id` names a token that is still valid ("farm", the token file's, always is).
  bool IsValid(const std::string& id) const;

  std::optional<Caller> Find(absl::string_view token) const override;

 private:
  TokenStore(StateStore* store, BuildIsRunning build_is_running)
      : store_(store), build_is_running_(std::move(build_is_running)) {}

  StateStore* store_;
  BuildIsRunning build_is_running_;
  mutable absl::Mutex mu_;
  std::map<std::string, farm::v1::TokenRecord> by_digest_ ABSL_GUARDED_BY(mu_);
};

// INVALID_ARGUMENT with the fix unless `name` is 1-64 characters of [A-Za-z0-9._@-].
absl::Status CheckTokenName(absl::string_view name);

}  // namespace farm::coordinator
