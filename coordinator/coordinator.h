// Wires the coordinator together: state store, worker registry, gRPC services, HTTP,
// and the liveness sweep.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include <grpcpp/server.h>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "coordinator/admin/backup_service.h"
#include "coordinator/builds/build_registry.h"
#include "coordinator/builds/build_service.h"
#include "coordinator/builds/queue_metrics.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/cas/cas_service.h"
#include "coordinator/dashboard/api_routes.h"
#include "coordinator/dashboard/dashboard_routes.h"
#include "coordinator/farm_service.h"
#include "coordinator/http/http_server.h"
#include "coordinator/index/index_routes.h"
#include "coordinator/index/package_index.h"
#include "coordinator/reapi/action_cache_service.h"
#include "coordinator/reapi/bytestream_service.h"
#include "coordinator/reapi/capabilities_service.h"
#include "coordinator/reapi/content_addressable_storage_service.h"
#include "coordinator/recipes/recipe_service.h"
#include "coordinator/rpc_gate.h"
#include "coordinator/scheduler/action_service.h"
#include "coordinator/scheduler/blob_store_index.h"
#include "coordinator/scheduler/scheduler.h"
#include "coordinator/state_store.h"
#include "coordinator/tokens/token_service.h"
#include "coordinator/tokens/token_store.h"
#include "coordinator/wheels/wheel_finisher.h"
#include "coordinator/wheels/wheel_pipeline.h"
#include "coordinator/workers/worker_registry.h"
#include "coordinator/workers/worker_service.h"
#include "libfarm/metrics/registry.h"
#include "libfarm/rpc/token_auth.h"
#include "libfarm/tls/server_tls.h"

namespace farm::coordinator {

struct CoordinatorOptions {
  std::string listen = "127.0.0.1:7420";
  std::string http_listen = "127.0.0.1:7421";  // empty: no HTTP
  std::string data_dir;
  std::string token_file;  // empty: <data_dir>/token, created on first start
  absl::Duration worker_timeout = absl::Seconds(30);
  // --action-retention, --max-finished-actions: how long and how many finished action records
  // are kept; --retention-check-interval: how often that is enforced (SchedulerOptions).
  absl::Duration action_retention = absl::Hours(24 * 7);
  size_t max_finished_actions = 100'000;
  absl::Duration retention_check_interval = absl::Minutes(10);
  // --queue-order, --memory-aware (SchedulerOptions).
  QueueOrder queue_order = QueueOrder::kLongestFirst;
  bool memory_aware = true;
  uint64_t cas_quota_bytes = uint64_t{20} << 30;  // --cas-quota: LRU eviction beyond this
  // --max-action-input: what a client's action may name as input (SchedulerOptions).
  uint64_t max_action_input_bytes = uint64_t{4} << 30;
  // --recipes-dir; empty: <data_dir>/recipes if present, else the source tree's recipes/.
  std::string recipes_dir;
  // --index-max-upload: the largest file the built-in index accepts through its upload API.
  uint64_t index_max_upload_bytes = uint64_t{2} << 30;
  // Request size, time and connection limits of the HTTP port; --http-allow-host names.
  HttpLimits http_limits;
  // --grpc-max-calls: gRPC calls served at once, long polls (Wait, LeaseActions) and streams
  // (CAS, logs) included; each holds a thread while it runs. A call beyond them is answered
  // RESOURCE_EXHAUSTED at once, which workers retry.
  int grpc_max_calls = 4096;
  // --tls-cert/--tls-key: TLS on the gRPC and HTTP ports; --tls-client-ca: gRPC clients
  // (workers, farmctl, farm-nvcc) must also show a certificate from this CA. Empty: plain.
  ServerTlsFiles tls;
  // --device-cpu-archs: where actions naming no CPU arch (device compiles) may run.
  PlacementPolicy placement;
  // --reapi-action-cache-writers: roles beyond admin that may write REAPI's action cache
  // (docs/reapi.md: the write policy). Empty: admins only.
  std::vector<Role> reapi_action_cache_writers;
};

class Coordinator {
 public:
  static absl::StatusOr<std::unique_ptr<Coordinator>> Start(const CoordinatorOptions& options);
  ~Coordinator();

  const std::string& grpc_address() const { return identity_.grpc_address; }
  const std::string& http_address() const { return identity_.http_address; }
  const std::string& token_file() const { return token_file_; }
  // Whether the gRPC and HTTP ports speak TLS.
  bool tls() const { return identity_.tls; }
  // The CAS (<data-dir>/cas). Pins are in memory: re-pin live work before serving.
  BlobStore* blob_store() const { return blob_store_.get(); }
  // Build records and progress; the wheel pipeline drives wheel builds through it.
  BuildRegistry* builds() const { return builds_.get(); }
  // The built-in package index (/simple/); the wheel pipeline publishes through it.
  PackageIndex* package_index() const { return package_index_.get(); }
  // The recipes loaded at start (read-only).
  const RecipeServiceImpl* recipes() const { return recipe_service_.get(); }

  // Stops accepting calls, lets running calls finish, and closes the store.
  void Shutdown();

 private:
  Coordinator() = default;
  void SweepLoop();

  CoordinatorIdentity identity_;
  std::string token_file_;
  MetricsRegistry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<BlobStore> blob_store_;
  std::unique_ptr<CasServiceImpl> cas_service_;
  // REAPI v2's cache side, over the same CAS and gate (docs/reapi.md).
  std::unique_ptr<reapi::CapabilitiesService> reapi_capabilities_;
  std::unique_ptr<reapi::ContentAddressableStorageService> reapi_cas_;
  std::unique_ptr<reapi::ByteStreamService> reapi_bytestream_;
  std::unique_ptr<reapi::ActionCacheService> reapi_action_cache_;
  std::unique_ptr<BackupServiceImpl> backup_service_;
  std::unique_ptr<TokenStore> tokens_;
  std::unique_ptr<TokenVerifier> auth_;
  // Every gRPC handler runs through it (auth, metrics); the services never see auth_.
  std::unique_ptr<CallAdmission> call_admission_;
  std::unique_ptr<RpcGate> rpc_gate_;
  std::unique_ptr<WorkerRegistry> registry_;
  std::unique_ptr<BlobStoreIndex> blob_index_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<BuildRegistry> builds_;
  std::unique_ptr<QueueMetrics> queue_metrics_;
  std::unique_ptr<BuildServiceImpl> build_service_;
  std::unique_ptr<ApiRoutes> api_routes_;
  std::unique_ptr<DashboardRoutes> dashboard_routes_;
  std::unique_ptr<PackageIndex> package_index_;
  std::unique_ptr<IndexRoutes> index_routes_;
  std::unique_ptr<CompileResultTable> compile_results_;
  std::unique_ptr<ActionServiceImpl> action_service_;
  std::unique_ptr<WorkerServiceImpl> worker_service_;
  std::unique_ptr<TokenServiceImpl> token_service_;
  std::unique_ptr<FarmServiceImpl> farm_service_;
  std::unique_ptr<RecipeServiceImpl> recipe_service_;
  std::unique_ptr<SmokeStage> smoke_stage_;
  std::unique_ptr<WheelFinisher> wheel_finisher_;
  std::unique_ptr<WheelPipeline> wheel_pipeline_;
  std::unique_ptr<grpc::Server> grpc_server_;
  std::unique_ptr<HttpServer> http_server_;
  // --action-retention and how often it is applied: builds that ran no action follow it too.
  absl::Duration action_retention_;
  absl::Duration retention_check_interval_;
  absl::Notification stopping_;
  std::thread sweeper_;
  bool shut_down_ = false;
};

}  // namespace farm::coordinator
