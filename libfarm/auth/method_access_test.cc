#include "libfarm/auth/method_access.h"

#include <filesystem>
#include <set>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "build/bazel/remote/execution/v2/remote_execution.pb.h"
#include "farm/v1/actions.pb.h"
#include "farm/v1/admin_service.pb.h"
#include "farm/v1/builds.pb.h"
#include "farm/v1/cas.pb.h"
#include "farm/v1/farm_service.pb.h"
#include "farm/v1/package_index.pb.h"
#include "farm/v1/recipes.pb.h"
#include "farm/v1/state.pb.h"
#include "farm/v1/tokens.pb.h"
#include "farm/v1/types.pb.h"
#include "farm/v1/worker_service.pb.h"
#include "google/bytestream/bytestream.pb.h"

namespace farm {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kProtoDir = FARM_SOURCE_DIR "/proto/farm/v1";

// One message of each proto file, so its descriptor is linked into the generated pool.
void LinkEveryProto() {
  farm::v1::ExecuteRequest::descriptor();
  farm::v1::BackupRequest::descriptor();
  farm::v1::SubmitBuildRequest::descriptor();
  farm::v1::FindMissingRequest::descriptor();
  farm::v1::GetStatusRequest::descriptor();
  farm::v1::PackageFile::descriptor();
  farm::v1::ActionRecord::descriptor();
  farm::v1::CudaToolkit::descriptor();
  farm::v1::ListRecipesRequest::descriptor();
  farm::v1::CreateTokenRequest::descriptor();
  farm::v1::RegisterRequest::descriptor();
  build::bazel::remote::execution::v2::Digest::descriptor();
  google::bytestream::ReadRequest::descriptor();
}

// The REAPI services the coordinator serves (coordinator/reapi/); REAPI's others (Execution)
// stay closed to every token until they are served and given rows.
const char* const kServedReapiServices[] = {
    "build.bazel.remote.execution.v2.ActionCache",
    "build.bazel.remote.execution.v2.Capabilities",
    "build.bazel.remote.execution.v2.ContentAddressableStorage",
    "google.bytestream.ByteStream",
};

TEST(MethodAccessTest, EveryRpcOfEveryProtoHasARowAndEveryRowAnRpc) {
  LinkEveryProto();
  std::set<std::string> rpcs;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const auto& entry : std::filesystem::directory_iterator(kProtoDir)) {
    const std::string name = "farm/v1/" + entry.path().filename().string();
    const google::protobuf::FileDescriptor* file = pool->FindFileByName(name);
    ASSERT_NE(file, nullptr) << name << ": reference one of its messages in LinkEveryProto";
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        rpcs.insert(file->service(s)->name() + "." + file->service(s)->method(m)->name());
      }
    }
  }
  for (const char* name : kServedReapiServices) {
    const google::protobuf::ServiceDescriptor* service = pool->FindServiceByName(name);
    ASSERT_NE(service, nullptr) << name;
    for (int m = 0; m < service->method_count(); ++m) {
      rpcs.insert(service->name() + "." + service->method(m)->name());
    }
  }
  ASSERT_GT(rpcs.size(), 25u);
  std::set<std::string> rows;
  for (const MethodAccess& row : MethodAccessTable()) {
    EXPECT_TRUE(rows.insert(row.method).second) << "two rows for " << row.method;
    EXPECT_FALSE(row.roles.empty()) << row.method;
    if (row.method.rfind("HTTP.", 0) != 0) {
      EXPECT_EQ(rpcs.count(row.method), 1u) << row.method;
    }
  }
  for (const std::string& rpc : rpcs) EXPECT_EQ(rows.count(rpc), 1u) << rpc << " has no row";
}

// REAPI's action cache: every CAS reader reads it; admins write it, and other roles only
// when the operator grants them, which only a grantable row takes.
TEST(MethodAccessTest, TheOperatorGrantsActionCacheWritesAndNothingElse) {
  EXPECT_TRUE(CheckMayCall(Role::kRead, "ActionCache.GetActionResult").ok());
  EXPECT_TRUE(CheckMayCall(Role::kAdmin, "ActionCache.UpdateActionResult").ok());
  for (Role role : {Role::kSubmit, Role::kWorker, Role::kBuild, Role::kRead}) {
    EXPECT_FALSE(CheckMayCall(role, "ActionCache.UpdateActionResult").ok()) << RoleName(role);
  }
  const MethodGrants grants = {{"ActionCache.UpdateActionResult", {Role::kSubmit}}};
  EXPECT_TRUE(CheckGrants(grants).ok());
  EXPECT_TRUE(CheckMayCall(Role::kSubmit, "ActionCache.UpdateActionResult", grants).ok());
  absl::Status read = CheckMayCall(Role::kRead, "ActionCache.UpdateActionResult", grants);
  EXPECT_EQ(read.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(std::string(read.message()), ::testing::HasSubstr("roles that may: admin, submit"));
  // A grant on a fixed row changes nothing and is refused when configured.
  const MethodGrants fixed = {{"TokenService.CreateToken", {Role::kSubmit}}};
  EXPECT_FALSE(CheckMayCall(Role::kSubmit, "TokenService.CreateToken", fixed).ok());
  EXPECT_EQ(CheckGrants(fixed).code(), absl::StatusCode::kInvalidArgument);
}

TEST(MethodAccessTest, AdminMayCallEverything) {
  for (const MethodAccess& row : MethodAccessTable()) {
    EXPECT_TRUE(CheckMayCall(Role::kAdmin, row.method).ok()) << row.method;
  }
}

TEST(MethodAccessTest, EachRoleIsHeldToItsJob) {
  // Readers read.
  EXPECT_TRUE(CheckMayCall(Role::kRead, "BuildService.GetBuildLogs").ok());
  EXPECT_EQ(CheckMayCall(Role::kRead, "BuildService.SubmitBuild").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(CheckMayCall(Role::kRead, "CasService.Upload").ok());
  // REAPI's CAS as the farm's: readers read blobs, and write none.
  EXPECT_TRUE(CheckMayCall(Role::kRead, "ByteStream.Read").ok());
  EXPECT_TRUE(CheckMayCall(Role::kRead, "ContentAddressableStorage.BatchReadBlobs").ok());
  EXPECT_FALSE(CheckMayCall(Role::kRead, "ByteStream.Write").ok());
  EXPECT_FALSE(CheckMayCall(Role::kRead, "ContentAddressableStorage.BatchUpdateBlobs").ok());
  EXPECT_FALSE(CheckMayCall(Role::kRead, "HTTP.Upload").ok());
  // Submitters submit, but neither act as workers nor write the compile cache.
  EXPECT_TRUE(CheckMayCall(Role::kSubmit, "BuildService.SubmitBuild").ok());
  EXPECT_FALSE(CheckMayCall(Role::kSubmit, "WorkerService.Register").ok());
  EXPECT_FALSE(CheckMayCall(Role::kSubmit, "ActionService.PutCompileResult").ok());
  EXPECT_FALSE(CheckMayCall(Role::kSubmit, "TokenService.CreateToken").ok());
  // Workers work, and neither submit, run actions nor read the fleet.
  EXPECT_TRUE(CheckMayCall(Role::kWorker, "WorkerService.LeaseActions").ok());
  EXPECT_FALSE(CheckMayCall(Role::kWorker, "BuildService.SubmitBuild").ok());
  EXPECT_FALSE(CheckMayCall(Role::kWorker, "ActionService.Execute").ok());
  EXPECT_FALSE(CheckMayCall(Role::kWorker, "ActionService.PutCompileResult").ok());
  EXPECT_FALSE(CheckMayCall(Role::kWorker, "AdminService.Backup").ok());
  // A wheel build's log goes with its build token: a worker token writes no build's log.
  EXPECT_FALSE(CheckMayCall(Role::kWorker, "BuildService.AppendBuildLog").ok());
  // A build's token does what its farm-nvcc does, nothing else.
  EXPECT_TRUE(CheckMayCall(Role::kBuild, "ActionService.Execute").ok());
  EXPECT_TRUE(CheckMayCall(Role::kBuild, "ActionService.PutCompileResult").ok());
  EXPECT_FALSE(CheckMayCall(Role::kBuild, "WorkerService.Register").ok());
  EXPECT_FALSE(CheckMayCall(Role::kBuild, "BuildService.GetBuildLogs").ok());
  EXPECT_FALSE(CheckMayCall(Role::kBuild, "HTTP.Upload").ok());
}

TEST(MethodAccessTest, RefusalsNameTheRolesThatMayAndTheFix) {
  absl::Status s = CheckMayCall(Role::kRead, "BuildService.SubmitBuild");
  EXPECT_THAT(s.message(), HasSubstr("'read' token may not call BuildService.SubmitBuild"));
  EXPECT_THAT(s.message(), HasSubstr("admin, submit"));
  EXPECT_THAT(s.message(), HasSubstr("farmctl token create"));
  absl::Status unknown = CheckMayCall(Role::kAdmin, "NewService.Method");
  EXPECT_EQ(unknown.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(unknown.message(), HasSubstr("no access rule"));
}

TEST(RoleTest, OperatorsMayCreateEveryRoleButBuild) {
  EXPECT_EQ(*ParseCreatableRole("submit"), Role::kSubmit);
  EXPECT_EQ(*ParseCreatableRole("read"), Role::kRead);
  absl::StatusOr<Role> build = ParseCreatableRole("build");
  EXPECT_FALSE(build.ok());
  EXPECT_THAT(build.status().message(), HasSubstr("admin, submit, worker, read"));
  EXPECT_FALSE(ParseCreatableRole("root").ok());
}

}  // namespace
}  // namespace farm
