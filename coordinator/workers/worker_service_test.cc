#include "coordinator/workers/worker_service.h"

#include <filesystem>

#include <grpcpp/create_channel.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";

class WorkerServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("worker_service_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    auto store = StateStore::Open(dir_.string());
    ASSERT_TRUE(store.ok());
    store_ = std::move(*store);
    registry_ = std::make_unique<WorkerRegistry>(store_.get(), absl::Seconds(30),
                                                 [] { return absl::Now(); });
    service_ = std::make_unique<WorkerServiceImpl>(&gate_, registry_.get(), nullptr);
    grpc::ServerBuilder builder;
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    stub_ = farm::v1::WorkerService::NewStub(server_->InProcessChannel({}));
  }
  void TearDown() override {
    server_->Shutdown();
    registry_.reset();
    store_.reset();
    fs::remove_all(dir_);
  }
  grpc::Status Register(const std::string& name, const std::string& token,
                        const std::vector<std::string>& libraries = {}) {
    grpc::ClientContext ctx;
    if (!token.empty()) AttachToken(ctx, token);
    farm::v1::RegisterRequest req;
    req.set_name(name);
    req.mutable_capabilities()->set_slots(1);
    for (const auto& lib : libraries) req.mutable_capabilities()->add_libraries(lib);
    farm::v1::RegisterResponse resp;
    return stub_->Register(&ctx, req, &resp);
  }

  fs::path dir_;
  TokenVerifier auth_{kToken};
  MetricsRegistry metrics_;
  RpcGate gate_{&auth_, &metrics_};
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<WorkerRegistry> registry_;
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

TEST_F(WorkerServiceTest, HeartbeatWithUnknownSessionAsksToRegister) {
  grpc::ClientContext ctx;
  AttachToken(ctx, kToken);
  farm::v1::HeartbeatRequest req;
  req.set_name("ghost");
  req.set_session_id("x");
  farm::v1::HeartbeatResponse resp;
  EXPECT_EQ(stub_->Heartbeat(&ctx, req, &resp).error_code(), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace farm::coordinator
