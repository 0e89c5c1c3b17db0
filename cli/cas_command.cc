// farmctl cas put|get|stat: operators' access to the coordinator's content-addressed store.
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/command_support.h"
#include "libfarm/cas/cas_client.h"
#include "libfarm/client/coordinator_call.h"
#include "libfarm/client/coordinator_target.h"
#include "libfarm/digest/digest.h"
#include "libfarm/units/byte_size.h"

namespace farm::cli {
namespace {

namespace fs = std::filesystem;

struct CasArgs {
  std::string file;
  std::string digest;
  std::string output;
  bool zstd = false;
};

absl::StatusOr<std::unique_ptr<CasClient>> ConnectToCas(const GlobalOptions& global, bool zstd) {
  auto target = ResolveCoordinatorTarget(ChoiceOf(global));
  if (!target.ok()) return target.status();
  return CasClient::Connect(target->address, target->token, {.compress = zstd}, target->channel);
}

// Unreachable coordinators get the same fix as every other farmctl command.
absl::Status WithFix(const absl::Status& s) { return ExplainUnreachable(s, ""); }

std::string FormatProtoTime(const google::protobuf::Timestamp& ts) {
  if (ts.seconds() == 0 && ts.nanos() == 0) return "-";
  return absl::FormatTime("%Y-%m-%d %H:%M:%S %Z", absl::FromUnixSeconds(ts.seconds()),
                          absl::LocalTimeZone());
}

int Put(const CliContext& ctx, const CasArgs& args) {
  std::error_code ec;
  if (!fs::exists(args.file, ec)) {
    return Fail(absl::NotFoundError(absl::StrCat("no such file: ", args.file)));
  }
  if (!fs::is_regular_file(args.file, ec)) {
    return Fail(absl::InvalidArgumentError(
        absl::StrCat(args.file, " is not a regular file: 'cas put' stores one file's bytes")));
  }
  auto client = ConnectToCas(ctx.global, args.zstd);
  if (!client.ok()) return Fail(client.status());
  bool uploaded = false;
  auto digest = (*client)->UploadFile(args.file, &uploaded);
  if (!digest.ok()) return Fail(WithFix(digest.status()));
  if (ctx.global.json) {
    PrintJson({{"digest", DigestToString(*digest)},
               {"hash", digest->hash()},
               {"size_bytes", digest->size_bytes()},
               {"uploaded", uploaded}});
  } else {
    std::cout << DigestToString(*digest) << std::endl;
  }
  return 0;
}

int Get(const CliContext& ctx, const CasArgs& args) {
  auto digest = ParseDigest(args.digest);
  if (!digest.ok()) return Fail(digest.status());
  auto client = ConnectToCas(ctx.global, args.zstd);
  if (!client.ok()) return Fail(client.status());
  if (absl::Status s = (*client)->DownloadToFile(*digest, args.output); !s.ok()) {
    return Fail(WithFix(s));
  }
  const auto size = static_cast<int64_t>(fs::file_size(args.output));
  if (ctx.global.json) {
    PrintJson({{"digest", absl::StrCat(digest->hash(), "/", size)},
               {"path", args.output},
               {"size_bytes", size}});
  } else {
    std::cout << "wrote " << args.output << " (" << FormatByteSize(static_cast<uint64_t>(size))
              << ", verified)" << std::endl;
  }
  return 0;
}

int Stat(const CliContext& ctx, const CasArgs& args) {
  auto digest = ParseDigest(args.digest);
  if (!digest.ok()) return Fail(digest.status());
  auto client = ConnectToCas(ctx.global, false);
  if (!client.ok()) return Fail(client.status());
  auto stat = (*client)->Stat(*digest);
  if (!stat.ok()) return Fail(WithFix(stat.status()));
  if (ctx.global.json) {
    PrintJson({{"digest", stat->present() ? DigestToString(stat->digest()) : args.digest},
               {"present", stat->present()},
               {"size_bytes", stat->digest().size_bytes()},
               {"stored_at", stat->stored_at().seconds()},
               {"last_access", stat->last_access().seconds()},
               {"pins", stat->pins()}});
  }
  if (!stat->present()) {
    return Fail(absl::NotFoundError(absl::StrCat("blob ", args.digest, " is not in the CAS")));
  }
  if (!ctx.global.json) {
    std::cout << "digest       " << DigestToString(stat->digest()) << "\n"
              << "size         "
              << FormatByteSize(static_cast<uint64_t>(stat->digest().size_bytes())) << "\n"
              << "stored       " << FormatProtoTime(stat->stored_at()) << "\n"
              << "last access  " << FormatProtoTime(stat->last_access()) << "\n"
              << "pins         " << stat->pins() << std::endl;
  }
  return 0;
}

}  // namespace

void AddCasCommand(CLI::App& app, CliContext& ctx) {
  auto args = std::make_shared<CasArgs>();
  auto* cas = app.add_subcommand("cas", "store and fetch blobs in the coordinator's CAS");
  cas->require_subcommand(1);
  constexpr char kDigestHelp[] = "HASH/SIZE or HASH (SHA-256, 64 lowercase hex characters)";

  auto* put = cas->add_subcommand("put", "upload FILE (skipped if stored); prints HASH/SIZE");
  put->add_option("FILE", args->file, "file to upload")->required();
  put->add_flag("--zstd", args->zstd, "compress chunks on the wire (slow links)");
  put->callback([&ctx, args] { ctx.exit_code = Put(ctx, *args); });

  auto* get = cas->add_subcommand("get", "download a blob to FILE, verified against its digest");
  get->add_option("DIGEST", args->digest, kDigestHelp)->required();
  get->add_option("-o,--output", args->output, "where to write it (replaced atomically)")
      ->required();
  get->add_flag("--zstd", args->zstd, "accept compressed chunks on the wire (slow links)");
  get->callback([&ctx, args] { ctx.exit_code = Get(ctx, *args); });

  auto* stat = cas->add_subcommand("stat", "show whether a blob is stored, its size and pins");
  stat->add_option("DIGEST", args->digest, kDigestHelp)->required();
  stat->callback([&ctx, args] { ctx.exit_code = Stat(ctx, *args); });
}

}  // namespace farm::cli
