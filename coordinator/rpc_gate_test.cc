#include "coordinator/rpc_gate.h"

#include <unistd.h>

#include <filesystem>
#include <map>
#include <optional>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/test/server_context_test_spouse.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "coordinator/coordinator.h"
#include "libfarm/auth/method_access.h"

namespace farm::coordinator {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kToken[] = "0123456789abcdef0123456789abcdef";
constexpr char kReadToken[] = "read-token";
constexpr char kBuildToken[] = "build-token";

// Knows one read token and one token of build "b1".
class TwoTokens : public TokenDirectory {
 public:
  std::optional<Caller> Find(absl::string_view token) const override {
    if (token == kReadToken) return Caller{.token_id = "t-read", .role = Role::kRead};
    if (token == kBuildToken) {
      return Caller{.token_id = "t-build", .role = Role::kBuild, .build_id = "b1"};
    }
    return std::nullopt;
  }
};

class RpcGateTest : public ::testing::Test {
 protected:
  // Serves `method` for a call carrying `token` (none when empty); `body_ran` says whether the
  // handler's body ran and `caller` who it ran for.
  grpc::Status Call(const std::string& token, absl::string_view method, absl::Status result) {
    grpc::ServerContext context;
    grpc::testing::ServerContextTestSpouse spouse(&context);
    if (!token.empty()) spouse.AddClientMetadata("authorization", "Bearer " + token);
    body_ran = false;
    return gate_.Serve(context, method, [&](const Caller& c) {
      body_ran = true;
      caller = c;
      return result;
    });
  }
  std::string Metrics() { return metrics_.Render(); }

  bool body_ran = false;
  Caller caller;
  TwoTokens directory_;
  TokenVerifier auth_{kToken, &directory_};
  MetricsRegistry metrics_;
  RpcGate gate_{&auth_, &metrics_};
};

TEST_F(RpcGateTest, RunsTheBodyForTheCallerOfAKnownTokenAndCountsItUnderTheMethod) {
  grpc::Status s = Call(kBuildToken, "ActionService.Execute", absl::OkStatus());
  EXPECT_TRUE(s.ok()) << s.error_message();
  EXPECT_TRUE(body_ran);
  EXPECT_EQ(caller.token_id, "t-build");
  EXPECT_EQ(caller.role, Role::kBuild);
  EXPECT_EQ(caller.build_id, "b1");
  EXPECT_THAT(Metrics(), HasSubstr("farm_rpc_requests_total{code=\"OK\",method=\"Execute\"} 1\n"));
  EXPECT_TRUE(Call(kToken, "ActionService.Execute", absl::OkStatus()).ok());
  EXPECT_EQ(caller.token_id, "farm");
  EXPECT_EQ(caller.role, Role::kAdmin);
  EXPECT_THAT(Metrics(), HasSubstr("farm_rpc_requests_total{code=\"OK\",method=\"Execute\"} 2\n"));
}

TEST_F(RpcGateTest, ACallWithoutAKnownTokenIsRefusedBeforeTheBodyAndCounted) {
  grpc::Status none = Call("", "CasService.Upload", absl::OkStatus());
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(none.error_message(), HasSubstr("no farm token in the request"));
  EXPECT_FALSE(body_ran);
  grpc::Status wrong = Call("ffff", "CasService.Upload", absl::OkStatus());
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(wrong.error_message(), HasSubstr("does not match"));
  EXPECT_FALSE(body_ran);
  EXPECT_THAT(Metrics(),
              HasSubstr("farm_rpc_requests_total{code=\"UNAUTHENTICATED\",method=\"Upload\"} 2\n"));
}

TEST_F(RpcGateTest, ARoleTheMethodsRowDoesNotNameIsRefusedBeforeTheBody) {
  grpc::Status s = Call(kReadToken, "BuildService.SubmitBuild", absl::OkStatus());
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(),
              HasSubstr("'read' token may not call BuildService.SubmitBuild (roles that may: "
                        "admin, submit)"));
  EXPECT_FALSE(body_ran);
  EXPECT_THAT(Metrics(), HasSubstr("farm_rpc_requests_total{code=\"PERMISSION_DENIED\",method="
                                   "\"SubmitBuild\"} 1\n"));
  EXPECT_TRUE(Call(kReadToken, "BuildService.ListBuilds", absl::OkStatus()).ok());
  EXPECT_TRUE(body_ran);
}

TEST_F(RpcGateTest, TheBodysErrorReachesTheClientUnchangedAndIsCounted) {
  grpc::Status s =
      Call(kToken, "CasService.Stat", absl::NotFoundError("blob x is not in the CAS. Fix: upload"));
  EXPECT_TRUE(body_ran);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "blob x is not in the CAS. Fix: upload");
  EXPECT_THAT(Metrics(),
              HasSubstr("farm_rpc_requests_total{code=\"NOT_FOUND\",method=\"Stat\"} 1\n"));
}

TEST_F(RpcGateTest, ABodyWithoutTheCallerIsGatedTheSame) {
  bool ran = false;
  auto body = [&] {
    ran = true;
    return absl::InternalError("broken");
  };
  grpc::ServerContext context;
  EXPECT_EQ(gate_.Serve(context, "FarmService.GetStatus", body).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_FALSE(ran);
  grpc::testing::ServerContextTestSpouse spouse(&context);
  spouse.AddClientMetadata("authorization", absl::StrCat("Bearer ", kToken));
  grpc::Status s = gate_.Serve(context, "FarmService.GetStatus", body);
  EXPECT_TRUE(ran);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "broken");
  EXPECT_THAT(Metrics(),
              HasSubstr("farm_rpc_requests_total{code=\"INTERNAL\",method=\"GetStatus\"} 1\n"));
}

// The package-qualified name of a service the access table names: the farm's own, or one of
// REAPI's (coordinator/reapi/), whose descriptors the coordinator links.
std::string FullServiceName(const std::string& service) {
  for (const char* package : {"farm.v1", "build.bazel.remote.execution.v2", "google.bytestream"}) {
    const std::string name = absl::StrCat(package, ".", service);
    if (google::protobuf::DescriptorPool::generated_pool()->FindServiceByName(name) != nullptr) {
      return name;
    }
  }
  ADD_FAILURE() << "no service " << service << " in the coordinator's protos";
  return service;
}

// Every RPC the coordinator serves (MethodAccessTest: every RPC of every proto has a row of
// the access table) goes through the gate: called without a token, each is refused as
// unauthenticated by the TokenVerifier and counted under its own name. A handler that skips
// RpcGate::Serve, or names another method in it, fails here.
TEST(EveryRpcTest, EachIsRefusedWithoutATokenAndCountedUnderItsName) {
  const fs::path dir = fs::temp_directory_path() / ("rpc_gate_test_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  CoordinatorOptions options;
  options.listen = "127.0.0.1:0";
  options.http_listen = "127.0.0.1:0";
  options.data_dir = (dir / "data").string();
  auto coordinator = Coordinator::Start(options);
  ASSERT_TRUE(coordinator.ok()) << coordinator.status();

  grpc::GenericStub stub(
      grpc::CreateChannel((*coordinator)->grpc_address(), grpc::InsecureChannelCredentials()));
  grpc::CompletionQueue cq;
  std::map<std::string, int> refused_per_label;
  for (const MethodAccess& row : MethodAccessTable()) {
    if (row.method.rfind("HTTP.", 0) == 0) continue;
    const size_t dot = row.method.find('.');
    const std::string path = absl::StrCat("/", FullServiceName(row.method.substr(0, dot)), "/",
                                          row.method.substr(dot + 1));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    // One empty message, a valid request of every method; the wire is the same for streams.
    grpc::Slice empty{std::string()};
    grpc::ByteBuffer request(&empty, 1);
    grpc::ByteBuffer response;
    grpc::Status status;
    auto call = stub.PrepareUnaryCall(&context, path, request, &cq);
    call->StartCall();
    call->Finish(&response, &status, nullptr);
    void* tag = nullptr;
    bool ok = false;
    ASSERT_TRUE(cq.Next(&tag, &ok));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED)
        << row.method << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("no farm token in the request")) << row.method;
    ++refused_per_label[row.method.substr(dot + 1)];
  }
  cq.Shutdown();
  void* tag = nullptr;
  bool ok = false;
  while (cq.Next(&tag, &ok)) {
  }
  ASSERT_GT(refused_per_label.size(), 25u);

  httplib::Client http("http://" + (*coordinator)->http_address());
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics);
  std::string counted;  // the counter's lines, for the failure message
  for (absl::string_view line : absl::StrSplit(metrics->body, '\n')) {
    if (absl::StartsWith(line, "farm_rpc_requests_total")) absl::StrAppend(&counted, line, "\n");
  }
  for (const auto& [label, n] : refused_per_label) {
    EXPECT_THAT(counted,
                HasSubstr(absl::StrCat("farm_rpc_requests_total{code=\"UNAUTHENTICATED\",method=\"",
                                       label, "\"} ", n, "\n")));
  }
  coordinator->reset();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace farm::coordinator
