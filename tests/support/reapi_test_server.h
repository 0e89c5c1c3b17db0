// The coordinator's REAPI services (coordinator/reapi/) for unit tests: Capabilities,
// ContentAddressableStorage and ByteStream over a TempBlobStore, behind an RpcGate that knows
// the admin token kAdminToken and a read token kReadToken, served in process. Header-only:
// the coordinator's unit tests link what it needs.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>

#include "absl/status/statusor.h"
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

  // `label` names the store's directory; `quota` is the store's.
  static absl::StatusOr<std::unique_ptr<ReapiTestServer>> Start(const std::string& label,
                                                                uint64_t quota = 64 << 20) {
    auto cas = TempBlobStore::Open(label, quota);
    if (!cas.ok()) return cas.status();
    std::unique_ptr<ReapiTestServer> s(new ReapiTestServer());
    s->cas_ = std::move(*cas);
    s->capabilities_ = std::make_unique<coordinator::reapi::CapabilitiesService>(&s->gate_);
    s->storage_ = std::make_unique<coordinator::reapi::ContentAddressableStorageService>(
        &s->gate_, s->cas_->blobs(), &s->metrics_);
    s->bytestream_ = std::make_unique<coordinator::reapi::ByteStreamService>(
        &s->gate_, s->cas_->blobs(), &s->metrics_);
    grpc::ServerBuilder builder;
    builder.RegisterService(s->capabilities_.get());
    builder.RegisterService(s->storage_.get());
    builder.RegisterService(s->bytestream_.get());
    s->server_ = builder.BuildAndStart();
    return s;
  }
  ~ReapiTestServer() {
    server_->Shutdown();
    cas_.reset();
  }

  std::shared_ptr<grpc::Channel> Channel() { return server_->InProcessChannel({}); }
  coordinator::BlobStore* blobs() { return cas_->blobs(); }
  const TempBlobStore& cas() const { return *cas_; }
  MetricsRegistry& metrics() { return metrics_; }

 private:
  class ReadTokenDirectory : public TokenDirectory {
   public:
    std::optional<Caller> Find(absl::string_view token) const override {
      if (token == kReadToken) return Caller{.token_id = "t-read", .role = Role::kRead};
      return std::nullopt;
    }
  };

  ReapiTestServer() = default;

  ReadTokenDirectory directory_;
  TokenVerifier auth_{kAdminToken, &directory_};
  MetricsRegistry metrics_;
  coordinator::RpcGate gate_{&auth_, &metrics_};
  std::unique_ptr<TempBlobStore> cas_;
  std::unique_ptr<coordinator::reapi::CapabilitiesService> capabilities_;
  std::unique_ptr<coordinator::reapi::ContentAddressableStorageService> storage_;
  std::unique_ptr<coordinator::reapi::ByteStreamService> bytestream_;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace farm::testing
