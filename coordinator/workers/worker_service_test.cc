#include "coordinator/workers/worker_service.h"

#include <filesystem>

#include <gmock/gmock.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "coordinator/cas/blob_store.h"
#include "coordinator/scheduler/blob_store_index.h"
#include "libfarm/digest/digest.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

class WorkerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("worker_service_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    auto store = StateStore::Open((dir_ / "state").string());
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(*store);
    auto tokens = TokenStore::Load(store_.get(), [](const std::string&) { return false; });
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = std::move(*tokens);
    auth_ = std::make_unique<TokenVerifier>(kToken, tokens_.get());
    gate_ = std::make_unique<RpcGate>(auth_.get(), &metrics_);
    auto blobs = BlobStore::Open((dir_ / "cas").string(), store_.get(), 1 << 20);
    ASSERT_TRUE(blobs.ok()) << blobs.status();
    blobs_ = std::move(*blobs);
    blob_index_ = std::make_unique<BlobStoreIndex>(blobs_.get());
    registry_ = std::make_unique<WorkerRegistry>(store_.get(), absl::Seconds(30),
                                                 [] { return absl::Now(); });
    scheduler_ = std::make_unique<Scheduler>(
        store_.get(), blob_index_.get(), [this] { return registry_->ListOnline(); }, &metrics_,
        SchedulerOptions{}, [] { return absl::Now(); });
    ASSERT_TRUE(scheduler_->Load().ok());
    registry_->SetSessionEndedHandler(
        [this](const std::string& name, const std::string& session, bool died) {
          scheduler_->OnSessionEnded(name, session, died);
        });
    service_ = std::make_unique<WorkerServiceImpl>(gate_.get(), registry_.get(), scheduler_.get());
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = farm::v1::WorkerService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    server_->Shutdown();
    scheduler_.reset();
    registry_.reset();
    blobs_.reset();
    tokens_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  // A new worker token's text.
  std::string WorkerToken(const std::string& name) {
    auto made = tokens_->Create(Role::kWorker, name);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? made->token() : "";
  }
  grpc::Status Register(const std::string& name, const std::string& token,
                        const std::vector<std::string>& libraries = {},
                        farm::v1::RegisterResponse* out = nullptr) {
    grpc::ClientContext ctx;
    if (!token.empty()) AttachToken(ctx, token);
    farm::v1::RegisterRequest req;
    req.set_name(name);
    req.mutable_capabilities()->set_slots(1);
    for (const auto& lib : libraries) req.mutable_capabilities()->add_libraries(lib);
    farm::v1::RegisterResponse resp;
    return stub_->Register(&ctx, req, out != nullptr ? out : &resp);
  }
  // A call of `method` as worker `name` with `session`, carrying `token`.
  template <typename Request, typename Response, typename Method>
  grpc::Status Call(Method method, const std::string& token, Request req, Response* resp) {
    grpc::ClientContext ctx;
    AttachToken(ctx, token);
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ((*stub_).*method)(&ctx, req, resp);
  }
  template <typename Request>
  Request As(const std::string& name, const std::string& session) {
    Request req;
    req.set_name(name);
    req.set_session_id(session);
    return req;
  }
  farm::v1::ActionStatus Submit(const std::string& argv0 = "/bin/true") {
    farm::v1::Action a;
    a.add_argv(argv0);
    a.add_output_paths("out");
    a.set_build_id("b1");
    auto s = scheduler_->Execute({a});
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? s->front() : farm::v1::ActionStatus();
  }
  std::vector<farm::v1::Lease> Lease(const std::string& token, const std::string& session) {
    auto req = As<farm::v1::LeaseActionsRequest>("w1", session);
    req.set_free_slots(1);
    farm::v1::LeaseActionsResponse resp;
    grpc::Status s = Call(&farm::v1::WorkerService::Stub::LeaseActions, token, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return {resp.leases().begin(), resp.leases().end()};
  }
  // A completion of `lease` whose one output is `output`.
  farm::v1::CompleteActionsRequest Completion(const std::string& session,
                                              const farm::v1::Lease& lease,
                                              const farm::v1::Digest& output) {
    auto req = As<farm::v1::CompleteActionsRequest>("w1", session);
    auto* c = req.add_completions();
    c->set_lease_id(lease.lease_id());
    c->set_action_id(lease.action_id());
    auto* o = c->mutable_result()->add_outputs();
    o->set_path("out");
    *o->mutable_digest() = output;
    return req;
  }
  farm::v1::ActionStatus ActionNow(const std::string& id) {
    auto s = scheduler_->Get(id);
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : farm::v1::ActionStatus();
  }

  fs::path dir_;
  MetricsRegistry metrics_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<TokenStore> tokens_;
  std::unique_ptr<TokenVerifier> auth_;
  std::unique_ptr<RpcGate> gate_;
  std::unique_ptr<BlobStore> blobs_;
  std::unique_ptr<BlobStoreIndex> blob_index_;
  std::unique_ptr<WorkerRegistry> registry_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<WorkerServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<farm::v1::WorkerService::Stub> stub_;
};

TEST_F(WorkerServiceTest, MissingOrWrongTokenIsUnauthenticatedAndChangesNothing) {
  EXPECT_EQ(Register("w1", "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Register("w1", "ffffffffffffffffffffffffffffffff").error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(registry_->List().empty());
  EXPECT_TRUE(Register("w1", kToken).ok());
  EXPECT_EQ(registry_->List().size(), 1u);
}

TEST_F(WorkerServiceTest, InvalidNamesAreRefused) {
  for (const char* bad : {"", "../etc", "has space", "a/b"}) {
    grpc::Status s = Register(bad, kToken);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_NE(s.error_message().find("--name"), std::string::npos);
  }
  EXPECT_TRUE(registry_->List().empty());
}

TEST_F(WorkerServiceTest, HostileLibraryListsAreRefused) {
  grpc::Status s = Register("w1", kToken, {"libc.so.6", "<script>.so"});
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("is not a soname"), std::string::npos) << s.error_message();
  s = Register("w1", kToken, std::vector<std::string>(4097, "libc.so.6"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(registry_->List().empty());
  ASSERT_TRUE(Register("w1", kToken, {"libc.so.6", "libcudnn.so.9"}).ok());
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->List()[0].capabilities().libraries_size(), 2);
}

// A worker's GPUs land in every fleet listing and pick where smoke tests run: checked.
TEST_F(WorkerServiceTest, GpusThatAreNoKnownSmAreRefused) {
  grpc::ClientContext ctx;
  AttachToken(ctx, kToken);
  farm::v1::RegisterRequest req;
  req.set_name("w1");
  req.mutable_capabilities()->set_slots(1);
  req.mutable_capabilities()->add_gpus()->set_sm("sm_9000");
  farm::v1::RegisterResponse resp;
  grpc::Status s = stub_->Register(&ctx, req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("not a known sm_XY"), std::string::npos) << s.error_message();
  EXPECT_TRUE(registry_->List().empty());

  grpc::ClientContext again;
  AttachToken(again, kToken);
  req.mutable_capabilities()->mutable_gpus(0)->set_sm("sm_90");
  ASSERT_TRUE(stub_->Register(&again, req, &resp).ok());
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->List()[0].capabilities().gpus(0).sm(), "sm_90");
}

// A capability a worker sends that is not UTF-8 (a hostname, a label, a toolkit's path) makes
// the request one protobuf refuses to parse: the worker is told which field and the fix, not
// INTERNAL, and nothing is registered.
TEST_F(WorkerServiceTest, ACapabilityThatIsNotUtf8IsRefusedNamingTheFieldAndTheFix) {
  auto send = [&](const std::function<void(farm::v1::WorkerCapabilities&)>& set) {
    grpc::ClientContext ctx;
    AttachToken(ctx, kToken);
    farm::v1::RegisterRequest req;
    req.set_name("w1");
    req.mutable_capabilities()->set_slots(1);
    set(*req.mutable_capabilities());
    farm::v1::RegisterResponse resp;
    return stub_->Register(&ctx, req, &resp);
  };
  grpc::Status host = send([](auto& c) { c.set_hostname("ho\xffst"); });
  EXPECT_EQ(host.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << host.error_message();
  EXPECT_THAT(host.error_message(), HasSubstr("capabilities.hostname (\"ho\\xffst\")"));
  EXPECT_THAT(host.error_message(), HasSubstr("is not UTF-8"));
  EXPECT_THAT(host.error_message(), HasSubstr("Fix: use this version's farm-worker"));
  grpc::Status label = send([](auto& c) { (*c.mutable_labels())["zone"] = "caf\xe9"; });
  EXPECT_EQ(label.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << label.error_message();
  EXPECT_THAT(label.error_message(), HasSubstr("capabilities.labels[\"zone\"]"));
  EXPECT_THAT(label.error_message(), HasSubstr("Fix: pass --labels as UTF-8 text"));
  grpc::Status path = send([](auto& c) { c.add_cuda()->set_path("/opt/cuda-\xe9"); });
  EXPECT_EQ(path.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << path.error_message();
  EXPECT_THAT(path.error_message(), HasSubstr("capabilities.cuda[0].path"));
  EXPECT_TRUE(registry_->List().empty());
  EXPECT_THAT(metrics_.Render(), HasSubstr("farm_rpc_requests_total{code=\"INVALID_ARGUMENT\","
                                           "method=\"Register\"} 3\n"));
  // The same worker with its text in UTF-8 registers.
  EXPECT_TRUE(send([](auto& c) { c.set_hostname("host"); }).ok());
}

TEST_F(WorkerServiceTest, HeartbeatWithUnknownSessionAsksToRegister) {
  farm::v1::HeartbeatResponse resp;
  EXPECT_EQ(Call(&farm::v1::WorkerService::Stub::Heartbeat, kToken,
                 As<farm::v1::HeartbeatRequest>("ghost", "x"), &resp)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
}

// Issue 24, hole 6: with another worker token, a worker's name and session (which once came
// with every fleet listing) drained, leased from, completed for and ended that worker.
TEST_F(WorkerServiceTest, AnotherWorkerTokenCannotActForAWorkerEvenWithItsSession) {
  const std::string a = WorkerToken("grace-a");
  const std::string b = WorkerToken("grace-b");
  farm::v1::RegisterResponse registered;
  ASSERT_TRUE(Register("w1", a, {}, &registered).ok());
  const std::string session = registered.session_id();
  const std::string action = Submit().action_id();
  auto leases = Lease(a, session);
  ASSERT_EQ(leases.size(), 1u);
  const farm::v1::Digest output = *blobs_->PutBytes("the output");
  Submit("/bin/false");  // a second action, queued, that B would lease

  auto expect_refused = [](const grpc::Status& s, const char* call) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << call;
    EXPECT_THAT(s.error_message(), HasSubstr("worker name 'w1' is bound to token")) << call;
    EXPECT_THAT(s.error_message(), HasSubstr("Fix:")) << call;
  };
  auto heartbeat = As<farm::v1::HeartbeatRequest>("w1", session);
  heartbeat.set_draining(true);
  heartbeat.add_lease_ids("not-" + leases[0].lease_id());
  farm::v1::HeartbeatResponse heartbeat_resp;
  expect_refused(Call(&farm::v1::WorkerService::Stub::Heartbeat, b, heartbeat, &heartbeat_resp),
                 "Heartbeat");
  EXPECT_EQ(heartbeat_resp.revoked_lease_ids_size(), 0);
  auto lease = As<farm::v1::LeaseActionsRequest>("w1", session);
  lease.set_free_slots(1);
  farm::v1::LeaseActionsResponse lease_resp;
  expect_refused(Call(&farm::v1::WorkerService::Stub::LeaseActions, b, lease, &lease_resp),
                 "LeaseActions");
  EXPECT_EQ(lease_resp.leases_size(), 0);
  farm::v1::CompleteActionsResponse complete_resp;
  expect_refused(Call(&farm::v1::WorkerService::Stub::CompleteActions, b,
                      Completion(session, leases[0], output), &complete_resp),
                 "CompleteActions");
  farm::v1::LeaveResponse leave_resp;
  for (int i = 0; i < 12; ++i) {  // more than the attempts an action gets
    expect_refused(Call(&farm::v1::WorkerService::Stub::Leave, b,
                        As<farm::v1::LeaveRequest>("w1", session), &leave_resp),
                   "Leave");
  }

  // A's worker, its action and the queue are as they were.
  ASSERT_EQ(registry_->List().size(), 1u);
  EXPECT_EQ(registry_->List()[0].state(), farm::v1::WORKER_STATE_ONLINE);
  farm::v1::ActionStatus running = ActionNow(action);
  EXPECT_EQ(running.state(), farm::v1::ACTION_STATE_RUNNING);
  EXPECT_EQ(running.attempts(), 1u);
  EXPECT_EQ(scheduler_->CountsByState().queued, 1u);
  // And A carries on: it completes its action.
  ASSERT_TRUE(Call(&farm::v1::WorkerService::Stub::CompleteActions, a,
                   Completion(session, leases[0], output), &complete_resp)
                  .ok());
  EXPECT_EQ(complete_resp.rejected_lease_ids_size(), 0);
  EXPECT_EQ(ActionNow(action).state(), farm::v1::ACTION_STATE_COMPLETED);
}

// Issue 24: a result naming an output that was never uploaded does not complete the action
// (nor enter the action cache); the attempt fails and the action is retried.
TEST_F(WorkerServiceTest, AResultNamingABlobThatWasNeverUploadedIsRefused) {
  const std::string a = WorkerToken("grace-a");
  farm::v1::RegisterResponse registered;
  ASSERT_TRUE(Register("w1", a, {}, &registered).ok());
  const std::string action = Submit().action_id();
  auto leases = Lease(a, registered.session_id());
  ASSERT_EQ(leases.size(), 1u);
  farm::v1::CompleteActionsResponse resp;
  ASSERT_TRUE(
      Call(&farm::v1::WorkerService::Stub::CompleteActions, a,
           Completion(registered.session_id(), leases[0], DigestOfBytes("bytes nobody uploaded")),
           &resp)
          .ok());
  farm::v1::ActionStatus status = ActionNow(action);
  EXPECT_EQ(status.state(), farm::v1::ACTION_STATE_QUEUED) << status.DebugString();
  EXPECT_THAT(status.error(),
              HasSubstr(absl::StrCat("worker w1 reported output 1 of 1 (",
                                     DigestToString(DigestOfBytes("bytes nobody uploaded")),
                                     "), which is not in the CAS (never uploaded)")));
  EXPECT_EQ(status.attempts(), 1u);
  // Nothing entered the action cache.
  farm::v1::ActionResult cached;
  EXPECT_EQ(store_->Get(Table::kActionCache, status.action_key(), &cached).code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace farm::coordinator
