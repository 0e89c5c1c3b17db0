#include "coordinator/coordinator.h"

#include <malloc.h>

#include <filesystem>

#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>

#include "absl/strings/str_cat.h"
#include "coordinator/data_dir.h"
#include "libfarm/auth/token.h"
#include "libfarm/cas/cas_limits.h"
#include "libfarm/disk/disk_space.h"
#include "libfarm/logging/logger.h"
#include "libfarm/net/address.h"
#include "libfarm/status/status_macros.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

absl::StatusOr<std::string> LoadOrCreateToken(const std::string& explicit_file,
                                              const std::string& data_dir, std::string* used_file) {
  if (!explicit_file.empty()) {
    *used_file = explicit_file;
    return ReadTokenFile(explicit_file);
  }
  *used_file = (fs::path(data_dir) / "token").string();
  std::error_code ec;
  if (fs::exists(*used_file, ec)) return ReadTokenFile(*used_file);
  auto created = CreateTokenFile(*used_file);
  if (created.ok()) {
    ComponentLogger("coordinator")->info("created farm token {}", *used_file);
  }
  return created;
}

void WarnIfPlainBeyondLoopback(const std::string& address, const char* what, bool tls) {
  auto hp = ParseHostPort(address);
  if (!tls && hp.ok() && !IsLoopbackHost(hp->host)) {
    ComponentLogger("coordinator")
        ->warn(
            "{} listens on {}, beyond loopback, without TLS: the token and artifacts travel in "
            "clear text. Fix: pass --tls-cert and --tls-key (docs/security.md, TLS)",
            what, address);
  }
}

std::shared_ptr<grpc::ServerCredentials> GrpcCredentials(const std::optional<ServerTls>& tls) {
  if (!tls) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions ssl(
      tls->client_ca_pem.empty() ? GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE
                                 : GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY);
  ssl.pem_root_certs = tls->client_ca_pem;
  ssl.pem_key_cert_pairs.push_back({tls->key_pem, tls->cert_pem});
  return grpc::SslServerCredentials(ssl);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Coordinator>> Coordinator::Start(const CoordinatorOptions& options) {
  auto log = ComponentLogger("coordinator");
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError("--data-dir is required");
  }
  if (options.worker_timeout < absl::Milliseconds(300)) {
    return absl::InvalidArgumentError("--worker-timeout must be at least 300ms");
  }
  FARM_ASSIGN_OR_RETURN(const HostPort grpc_hp, ParseHostPort(options.listen));
  if (!options.http_listen.empty()) {
    FARM_RETURN_IF_ERROR(ParseHostPort(options.http_listen).status());
  }

  // Before touching the data dir: a bad certificate or an exposed key is the operator's to fix.
  FARM_ASSIGN_OR_RETURN(const std::optional<ServerTls> tls, LoadServerTls(options.tls));

  std::unique_ptr<Coordinator> c(new Coordinator());
  c->identity_.version = FARM_VERSION;
  c->identity_.tls = tls.has_value();
  c->identity_.started_at = absl::Now();
  c->action_retention_ = options.action_retention;
  c->retention_check_interval_ = options.retention_check_interval;
  FARM_RETURN_IF_ERROR(PrepareDataDir(options.data_dir));
  FARM_ASSIGN_OR_RETURN(const std::string token,
                        LoadOrCreateToken(options.token_file, options.data_dir, &c->token_file_));

  FARM_ASSIGN_OR_RETURN(c->store_, StateStore::Open(StateDir(options.data_dir)));
  FARM_ASSIGN_OR_RETURN(c->blob_store_,
                        BlobStore::Open((fs::path(options.data_dir) / "cas").string(),
                                        c->store_.get(), options.cas_quota_bytes));
  // Right after the CAS opens: the index pins every published wheel before anything that
  // could evict runs.
  FARM_ASSIGN_OR_RETURN(c->package_index_,
                        PackageIndex::Open(c->store_.get(), c->blob_store_.get()));
  c->registry_ = std::make_unique<WorkerRegistry>(c->store_.get(), options.worker_timeout,
                                                  [] { return absl::Now(); });
  FARM_RETURN_IF_ERROR(c->registry_->Load());
  c->blob_index_ = std::make_unique<BlobStoreIndex>(c->blob_store_.get());
  WorkerRegistry* registry_ptr = c->registry_.get();
  c->scheduler_ = std::make_unique<Scheduler>(
      c->store_.get(), c->blob_index_.get(), [registry_ptr] { return registry_ptr->ListOnline(); },
      &c->metrics_,
      SchedulerOptions{.lease_ttl = options.worker_timeout,
                       .placement = options.placement,
                       .queue_order = options.queue_order,
                       .memory_aware = options.memory_aware,
                       .finished_retention = options.action_retention,
                       .max_finished = options.max_finished_actions,
                       .prune_interval = options.retention_check_interval,
                       .max_action_input_bytes = options.max_action_input_bytes},
      [] { return absl::Now(); });
  FARM_RETURN_IF_ERROR(c->scheduler_->Load());
  Scheduler* scheduler_ptr = c->scheduler_.get();
  // Build progress and queue metrics follow the scheduler's transitions; adding them replays
  // the actions already known, which rebuilds shard progress after a restart.
  c->builds_ =
      std::make_unique<BuildRegistry>(c->store_.get(), &c->metrics_, [] { return absl::Now(); });
  FARM_RETURN_IF_ERROR(c->builds_->Load());
  c->queue_metrics_ = std::make_unique<QueueMetrics>(&c->metrics_);
  c->scheduler_->AddObservers({c->builds_.get(), c->queue_metrics_.get()});
  // Build tokens live while their build runs; the rest until revoked.
  BuildRegistry* builds_ptr = c->builds_.get();
  FARM_ASSIGN_OR_RETURN(c->tokens_,
                        TokenStore::Load(c->store_.get(), [builds_ptr](const std::string& id) {
                          auto build = builds_ptr->Get(id);
                          return build.ok() && !IsTerminalBuildState(build->state());
                        }));
  MethodGrants grants;
  if (!options.reapi_action_cache_writers.empty()) {
    grants["ActionCache.UpdateActionResult"] = options.reapi_action_cache_writers;
  }
  FARM_RETURN_IF_ERROR(CheckGrants(grants));
  c->auth_ = std::make_unique<TokenVerifier>(token, c->tokens_.get(), std::move(grants));
  // Waits hold no thread (scheduler/wait_pool.h): four per call the server serves at once.
  c->call_admission_ = std::make_unique<CallAdmission>(4 * options.grpc_max_calls, &c->metrics_);
  c->rpc_gate_ = std::make_unique<RpcGate>(c->auth_.get(), &c->metrics_, c->call_admission_.get());
  TokenStore* tokens_ptr = c->tokens_.get();
  c->registry_->SetTokenIsValid(
      [tokens_ptr](const std::string& id) { return tokens_ptr->IsValid(id); });
  c->registry_->SetSessionEndedHandler(
      [scheduler_ptr](const std::string& name, const std::string& session, bool died) {
        scheduler_ptr->OnSessionEnded(name, session, died);
      });

  c->worker_service_ = std::make_unique<WorkerServiceImpl>(c->rpc_gate_.get(), c->registry_.get(),
                                                           c->scheduler_.get(), c->tokens_.get());
  c->compile_results_ = std::make_unique<CompileResultTable>(c->store_.get(), c->blob_store_.get());
  c->action_service_ = std::make_unique<ActionServiceImpl>(
      c->rpc_gate_.get(), c->scheduler_.get(), c->compile_results_.get(), c->builds_.get());
  c->farm_service_ =
      std::make_unique<FarmServiceImpl>(c->rpc_gate_.get(), c->registry_.get(), &c->identity_);
  c->cas_service_ =
      std::make_unique<CasServiceImpl>(c->rpc_gate_.get(), c->blob_store_.get(), &c->metrics_);
  c->reapi_capabilities_ = std::make_unique<reapi::CapabilitiesService>(c->rpc_gate_.get());
  c->reapi_cas_ = std::make_unique<reapi::ContentAddressableStorageService>(
      c->rpc_gate_.get(), c->blob_store_.get(), &c->metrics_);
  c->reapi_bytestream_ = std::make_unique<reapi::ByteStreamService>(
      c->rpc_gate_.get(), c->blob_store_.get(), &c->metrics_);
  c->reapi_action_cache_ = std::make_unique<reapi::ActionCacheService>(
      c->rpc_gate_.get(), c->store_.get(), c->blob_store_.get(), &c->metrics_);
  c->backup_service_ =
      std::make_unique<BackupServiceImpl>(c->rpc_gate_.get(), c->store_.get(), c->blob_store_.get(),
                                          (fs::path(options.data_dir) / "backup-scratch").string());
  // A bad recipe is logged and skipped; the coordinator serves the others.
  const std::string recipes_dir = ResolveRecipesDir(options.recipes_dir, options.data_dir);
  c->recipe_service_ = std::make_unique<RecipeServiceImpl>(c->rpc_gate_.get(), recipes_dir,
                                                           LoadRecipesLogged(recipes_dir));
  // Smoke tests install the wheel's run dependencies from this farm's own index too.
  Coordinator* self = c.get();
  c->smoke_stage_ = std::make_unique<SmokeStage>(
      c->builds_.get(), c->scheduler_.get(), c->registry_.get(), [self]() -> std::string {
        if (self->identity_.http_address.empty()) return "";
        return absl::StrCat(self->identity_.tls ? "https://" : "http://",
                            self->identity_.http_address, "/simple/");
      });
  c->wheel_finisher_ = std::make_unique<WheelFinisher>(
      c->builds_.get(), c->package_index_.get(), (fs::path(options.data_dir) / "wheels").string(),
      c->blob_store_.get(), c->smoke_stage_.get());
  c->wheel_pipeline_ = std::make_unique<WheelPipeline>(
      c->builds_.get(), c->scheduler_.get(), c->registry_.get(), c->blob_store_.get(),
      &c->recipe_service_->recipes(), c->wheel_finisher_.get());
  c->token_service_ = std::make_unique<TokenServiceImpl>(c->rpc_gate_.get(), c->tokens_.get());
  c->build_service_ = std::make_unique<BuildServiceImpl>(c->rpc_gate_.get(), c->builds_.get(),
                                                         c->wheel_pipeline_.get());
  grpc::ServerBuilder builder;
  // CAS blobs stream in 1 MiB chunks; this bounds what one message may cost us.
  builder.SetMaxReceiveMessageSize(kCasMaxMessageBytes);
  int bound_port = 0;
  builder.AddListeningPort(options.listen, GrpcCredentials(tls), &bound_port);
  // gRPC sets SO_REUSEPORT by default, which would let two coordinators share a port.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Each call in progress holds a thread of the synchronous server, and gRPC adds threads
  // without bound: the quota caps them, and a call that finds none free is answered
  // RESOURCE_EXHAUSTED ("Server Threadpool Exhausted") without running. One more thread
  // than calls, since one always waits for the next call.
  grpc::ResourceQuota grpc_quota("farm-coordinator-grpc");
  grpc_quota.SetMaxThreads(options.grpc_max_calls + 1);
  builder.SetResourceQuota(grpc_quota);
  builder.RegisterService(c->worker_service_.get());
  builder.RegisterService(c->farm_service_.get());
  builder.RegisterService(c->action_service_.get());
  builder.RegisterService(c->cas_service_.get());
  builder.RegisterService(c->reapi_capabilities_.get());
  builder.RegisterService(c->reapi_cas_.get());
  builder.RegisterService(c->reapi_bytestream_.get());
  builder.RegisterService(c->reapi_action_cache_.get());
  builder.RegisterService(c->backup_service_.get());
  builder.RegisterService(c->build_service_.get());
  builder.RegisterService(c->recipe_service_.get());
  builder.RegisterService(c->token_service_.get());
  c->grpc_server_ = builder.BuildAndStart();
  if (!c->grpc_server_ || bound_port == 0) {
    return absl::UnavailableError(absl::StrCat(
        "cannot listen for gRPC on ", options.listen,
        ": the port is in use or the address is not local. Fix: choose another --listen"));
  }
  c->identity_.grpc_address = FormatHostPort({grpc_hp.host, bound_port});
  WarnIfPlainBeyondLoopback(c->identity_.grpc_address, "gRPC", c->identity_.tls);
  if (tls) {
    log->info("TLS with certificate {} ({}, valid until {}){}", options.tls.cert_file, tls->subject,
              absl::FormatTime("%Y-%m-%d", tls->not_after, absl::UTCTimeZone()),
              tls->client_ca_pem.empty() ? std::string("")
                                         : absl::StrCat("; gRPC clients need a certificate from ",
                                                        options.tls.client_ca_file));
  }

  if (!options.http_listen.empty()) {
    c->api_routes_ =
        std::make_unique<ApiRoutes>(c->farm_service_.get(), c->builds_.get(), c->auth_.get());
    c->dashboard_routes_ = std::make_unique<DashboardRoutes>();
    c->index_routes_ = std::make_unique<IndexRoutes>(
        c->package_index_.get(),
        IndexHttpOptions{.auth = c->auth_.get(),
                         .max_upload_bytes = options.index_max_upload_bytes});
    auto http = HttpServer::Start(
        options.http_listen, &c->metrics_,
        {c->api_routes_.get(), c->dashboard_routes_.get(), c->index_routes_.get()},
        options.http_limits,
        HttpTlsFiles{.cert_file = options.tls.cert_file, .key_file = options.tls.key_file});
    if (!http.ok()) {
      c->grpc_server_->Shutdown();
      return http.status();
    }
    c->http_server_ = std::move(*http);
    c->identity_.http_address = c->http_server_->address();
    c->package_index_->SetBaseUrl(
        absl::StrCat(c->identity_.tls ? "https://" : "http://", c->identity_.http_address));
    // Build hosts install farm wheels (farm_requirements) from this index.
    c->wheel_pipeline_->SetIndexUrl(
        absl::StrCat(c->identity_.tls ? "https://" : "http://", c->identity_.http_address));
    WarnIfPlainBeyondLoopback(c->identity_.http_address, "HTTP", c->identity_.tls);
  }

  WorkerRegistry* registry = c->registry_.get();
  MetricsRegistry* metrics = &c->metrics_;
  metrics->GetGauge("farm_build_info", "Coordinator version.", {{"version", FARM_VERSION}})->Set(1);
  metrics->GetGauge("farm_coordinator_start_time_seconds", "When this coordinator started.")
      ->Set(absl::ToDoubleSeconds(c->identity_.started_at - absl::UnixEpoch()));
  metrics->AddRefreshHook([registry, metrics] {
    const WorkerCounts n = registry->Counts();
    const char* help = "Workers by state.";
    metrics->GetGauge("farm_workers", help, {{"state", "online"}})->Set(n.online);
    metrics->GetGauge("farm_workers", help, {{"state", "draining"}})->Set(n.draining);
    metrics->GetGauge("farm_workers", help, {{"state", "lost"}})->Set(n.lost);
    metrics->GetGauge("farm_workers", help, {{"state", "offline"}})->Set(n.offline);
    metrics->GetGauge("farm_worker_slots_online", "Slots offered by online workers.")
        ->Set(n.slots_online);
  });
  metrics->AddRefreshHook([scheduler_ptr, metrics] {
    const Scheduler::Counts n = scheduler_ptr->CountsByState();
    const char* help = "Actions by state.";
    metrics->GetGauge("farm_actions", help, {{"state", "queued"}})->Set(n.queued);
    metrics->GetGauge("farm_actions", help, {{"state", "running"}})->Set(n.running);
    metrics->GetGauge("farm_actions", help, {{"state", "completed"}})->Set(n.completed);
    metrics->GetGauge("farm_actions", help, {{"state", "failed"}})->Set(n.failed);
    metrics->GetGauge("farm_actions", help, {{"state", "cancelled"}})->Set(n.cancelled);
  });

  metrics->AddRefreshHook([metrics, store = c->store_.get()] {
    const StateStore::MemoryUse m = store->Memory();
    const char* help = "Memory RocksDB holds for the coordinator's state, by kind.";
    for (const auto& [kind, bytes] : {std::pair<const char*, uint64_t>{"memtables", m.memtables},
                                      {"block_cache", m.block_cache},
                                      {"table_readers", m.table_readers}}) {
      metrics->GetGauge("farm_state_store_memory_bytes", help, {{"kind", kind}})
          ->Set(static_cast<double>(bytes));
    }
    metrics
        ->GetGauge("farm_state_quarantined_records",
                   "Stored records the coordinator could not read, kept aside byte for byte in "
                   "the state's quarantine table (the log names each).")
        ->Set(static_cast<double>(store->QuarantinedRecords()));
  });
  metrics->AddRefreshHook([metrics, dir = options.data_dir] {
    if (auto free = FreeBytes(dir); free.ok()) {
      metrics
          ->GetGauge("farm_data_dir_free_bytes",
                     "Free space on the filesystem of the coordinator's data dir.")
          ->Set(static_cast<double>(*free));
    }
  });

  c->sweeper_ = std::thread([raw = c.get()] { raw->SweepLoop(); });
  c->wheel_pipeline_->Start();
  log->info("farm-coordinator {} serving gRPC{} on {}{}; data dir {}", FARM_VERSION,
            c->identity_.tls ? " (TLS)" : "", c->identity_.grpc_address,
            c->identity_.http_address.empty()
                ? std::string(", HTTP disabled")
                : absl::StrCat(c->identity_.tls ? ", HTTPS on " : ", HTTP on ",
                               c->identity_.http_address),
            options.data_dir);
  return c;
}

void Coordinator::SweepLoop() {
  const absl::Duration period = std::min(absl::Seconds(1), registry_->timeout() / 4);
  uint64_t sweeps = 0;
  absl::Time retention_checked = absl::InfinitePast();
  while (!stopping_.WaitForNotificationWithTimeout(period)) {
    if (absl::Status s = registry_->Sweep(); !s.ok()) {
      ComponentLogger("coordinator")->error("liveness sweep failed: {}", s.ToString());
    }
    scheduler_->Sweep();
    // A build leaves with its last action (the scheduler's retention); one that ran none (a
    // rebuild the compile cache answered) after as long.
    if (const absl::Time now = absl::Now(); now - retention_checked >= retention_check_interval_) {
      retention_checked = now;
      builds_->DeleteBuildsWithoutActions(now - action_retention_);
    }
    // Pages freed after a burst (finished actions leaving memory, gRPC buffers) stay with
    // glibc's arenas unless handed back: return them every ten sweeps so RSS follows use. The
    // first time right after the first sweep, which ends what starting up allocated for a
    // while (loading the store, the first retention pass over every stored record).
    if (++sweeps % 10 == 1) malloc_trim(0);
    if (absl::Status s = tokens_->DropEndedBuildTokens(); !s.ok()) {
      ComponentLogger("coordinator")
          ->error("dropping ended builds' tokens failed: {}", s.ToString());
    }
  }
}

void Coordinator::Shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  if (!stopping_.HasBeenNotified()) stopping_.Notify();
  if (sweeper_.joinable()) sweeper_.join();
  if (wheel_pipeline_) wheel_pipeline_->Stop();
  if (http_server_) http_server_->Stop();
  // Open waits are answered first: the server's shutdown waits for every call it has open.
  if (action_service_) action_service_->StopWaits();
  if (grpc_server_)
    grpc_server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(5));
  ComponentLogger("coordinator")->info("farm-coordinator stopped");
}

Coordinator::~Coordinator() { Shutdown(); }

}  // namespace farm::coordinator
