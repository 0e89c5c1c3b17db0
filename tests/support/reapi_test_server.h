// The coordinator's REAPI services (coordinator/reapi/) for unit tests: Capabilities,
// ContentAddressableStorage, ByteStream and ActionCache over a TempBlobStore, behind an
// RpcGate that knows the admin token kAdminToken, a read token kReadToken and a submit token
// kSubmitToken, with the operator's `grants`, served in process. Header-only:
// the coordinator's unit tests link what it needs.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/status/statusor.h"
#include "coordinator/reapi/action_cache_service.h"
#include "coordinator/reapi/bytestream_service.h"
#include "coordinator/reapi/capabilities_service.h"
#include "coordinator/reapi/content_addressable_storage_service.h"
#include "coordinator/rpc_gate.h"
#include "tests/support/temp_blob_store.h"

namespace farm::testing {

class ReapiTestServer {
 public:
  static constexpr char kAdminToken[] = "0123456789abcdef0123456789abcdef";
  static constexpr char kReadToken[] = "reapi-read-token";
  static constexpr char kSubmitToken[] = "reapi-submit-token";

  // `label` names the store's directory; `quota` is the store's.
  static absl::StatusOr<std::unique_ptr<ReapiTestServer>> Start(const std::string& label,
                                                                uint64_t quota = 64 << 20,
                                                                MethodGrants grants = {}) {
    auto cas = TempBlobStore::Open(label, quota);
    if (!cas.ok()) return cas.status();
    std::unique_ptr<ReapiTestServer> s(new ReapiTestServer());
    s->cas_ = std::move(*cas);
    s->auth_ = std::make_unique<TokenVerifier>(kAdminToken, &s->directory_, std::move(grants));
    s->gate_ = std::make_unique<coordinator::RpcGate>(s->auth_.get(), &s->metrics_);
    coordinator::RpcGate* gate = s->gate_.get();
    s->capabilities_ = std::make_unique<coordinator::reapi::CapabilitiesService>(gate);
    s->storage_ = std::make_unique<coordinator::reapi::ContentAddressableStorageService>(
        gate, s->cas_->blobs(), &s->metrics_);
    s->bytestream_ = std::make_unique<coordinator::reapi::ByteStreamService>(gate, s->cas_->blobs(),
                                                                             &s->metrics_);
    s->action_cache_ = std::make_unique<coordinator::reapi::ActionCacheService>(
        gate, s->cas_->state(), s->cas_->blobs(), &s->metrics_);
    grpc::ServerBuilder builder;
    builder.RegisterService(s->capabilities_.get());
    builder.RegisterService(s->storage_.get());
    builder.RegisterService(s->bytestream_.get());
    builder.RegisterService(s->action_cache_.get());
    s->server_ = builder.BuildAndStart();
    return s;
  }
  ~ReapiTestServer() {
    server_->Shutdown();
    cas_.reset();
  }

  std::shared_ptr<grpc::Channel> Channel() { return server_->InProcessChannel({}); }
  coordinator::BlobStore* blobs() { return cas_->blobs(); }
  coordinator::StateStore* state() { return cas_->state(); }
  const TempBlobStore& cas() const { return *cas_; }
  MetricsRegistry& metrics() { return metrics_; }

 private:
  class ReadTokenDirectory : public TokenDirectory {
   public:
    std::optional<Caller> Find(absl::string_view token) const override {
      if (token == kReadToken) return Caller{.token_id = "t-read", .role = Role::kRead};
      if (token == kSubmitToken) return Caller{.token_id = "t-submit", .role = Role::kSubmit};
      return std::nullopt;
    }
  };

  ReapiTestServer() = default;

  ReadTokenDirectory directory_;
  std::unique_ptr<TokenVerifier> auth_;
  MetricsRegistry metrics_;
  std::unique_ptr<coordinator::RpcGate> gate_;
  std::unique_ptr<TempBlobStore> cas_;
  std::unique_ptr<coordinator::reapi::CapabilitiesService> capabilities_;
  std::unique_ptr<coordinator::reapi::ContentAddressableStorageService> storage_;
  std::unique_ptr<coordinator::reapi::ByteStreamService> bytestream_;
  std::unique_ptr<coordinator::reapi::ActionCacheService> action_cache_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace farm::testing
