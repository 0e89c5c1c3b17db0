// TLS end to end with real processes: certificates from the openssl command line, a
// coordinator serving gRPC (TLS and mutual TLS) and HTTPS, workers, farmctl and pip as
// clients; and everything that must be refused: plain text at a TLS port, a foreign CA,
// expired certificates, a worker without a client certificate, a key others can read.
#include <sys/stat.h>

#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libfarm/actions/action_client.h"
#include "libfarm/auth/token.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/net/address.h"
#include "libfarm/tls/client_tls.h"
#include "tests/support/fake_wheel.h"
#include "tests/support/test_certificates.h"
#include "tests/support/test_farm.h"
#include "worker/coordinator_relay.h"

namespace farm::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPython[] = FARM_TOOLS_PYTHON;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pki = MakeTestPki(dir_ / "pki");
    ASSERT_TRUE(pki.ok()) << pki.status();
    pki_ = *pki;
  }

  std::vector<std::string> ServerTlsArgs(bool mutual) const {
    std::vector<std::string> args = {"--tls-cert", pki_.server.cert, "--tls-key", pki_.server.key};
    if (mutual) args.insert(args.end(), {"--tls-client-ca", pki_.ca});
    return args;
  }
  // The farm's own farmctl calls (waiting for workers, listing them) use the client
  // certificate: with `mutual`, the coordinator takes no call without one.
  void StartCoordinator(bool mutual) {
    auto farm = TestFarm::Start(
        dir_.path(), {.coordinator_args = ServerTlsArgs(mutual), .farmctl_args = ClientTls()});
    ASSERT_TRUE(farm.ok()) << farm.status();
    farm_ = *std::move(farm);
  }
  // farmctl against the coordinator with the given TLS flags (none: plain text).
  CommandResult Farmctl(const std::vector<std::string>& tls_args,
                        const std::vector<std::string>& command) {
    std::vector<std::string> argv = {"--coordinator", farm_->address(), "--token-file",
                                     farm_->admin_token_file()};
    argv.insert(argv.end(), tls_args.begin(), tls_args.end());
    argv.insert(argv.end(), command.begin(), command.end());
    // No FARM_TLS_* from the environment running the tests, and no local farm.
    return RunFarmctl(
        argv,
        {"FARM_TLS_CA=", "FARM_TLS_CERT=", "FARM_TLS_KEY=", "XDG_STATE_HOME=" + (dir_ / "state")});
  }
  std::vector<std::string> ClientTls() const {
    return {"--tls-ca", pki_.ca, "--tls-cert", pki_.client.cert, "--tls-key", pki_.client.key};
  }
  absl::StatusOr<WorkerProcess*> StartWorker(const std::string& name,
                                             const std::vector<std::string>& tls_args) {
    std::vector<std::string> args = {"--cuda-path", "none"};
    args.insert(args.end(), tls_args.begin(), tls_args.end());
    return farm_->StartWorker({.name = name, .args = args});
  }
  // An in-process client with certificate PEMs as given, past the start-up checks farmctl
  // and workers make, so that only the coordinator's handshake decides.
  absl::Status CallWithClientCertificate(const CertAndKey& client) {
    ChannelTls tls{.ca_pem = *ReadFileContents(pki_.ca),
                   .cert_pem = *ReadFileContents(client.cert),
                   .key_pem = *ReadFileContents(client.key)};
    auto actions =
        ActionClient::Connect(farm_->address(), farm_->AdminToken(), ChannelOptions{.tls = tls});
    return actions->Get("no-such-action").status();
  }
  // farm-coordinator run to its exit with `args`; its exit code and log.
  CommandResult RunCoordinator(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {FarmBinary("farm-coordinator"),
                                     "--data-dir",
                                     dir_ / "bad",
                                     "--listen",
                                     "127.0.0.1:0",
                                     "--http-listen",
                                     "127.0.0.1:0"};
    argv.insert(argv.end(), args.begin(), args.end());
    auto r = RunCommand(argv, absl::Seconds(30));
    if (!r.ok()) return CommandResult{-1, "", std::string(r.status().message())};
    return *r;
  }

  TempDir dir_{"tls"};
  TestPki pki_;
  std::unique_ptr<TestFarm> farm_;
};

TEST_F(TlsTest, WorkerRegistersAndRunsAnActionOverMutualTls) {
  StartCoordinator(/*mutual=*/true);
  auto w = StartWorker("w1", ClientTls());
  ASSERT_TRUE(w.ok()) << w.status();
  absl::Status online = farm_->WaitUntilOnline({"w1"});
  ASSERT_TRUE(online.ok()) << online;
  // The coordinator saw who the worker is from its certificate.
  EXPECT_THAT(ReadFile(farm_->coordinator().log_path()), HasSubstr("certificate CN=w1"));
  EXPECT_THAT(ReadFile(farm_->coordinator().log_path()), HasSubstr("serving gRPC (TLS)"));

  auto channel = LoadChannelOptions({pki_.ca, pki_.client.cert, pki_.client.key});
  ASSERT_TRUE(channel.ok()) << channel.status();
  auto actions = ActionClient::Connect(farm_->address(), farm_->AdminToken(), *channel);
  farm::v1::Action a;
  for (const char* arg : {"/bin/sh", "-c", "echo over tls"}) a.add_argv(arg);
  (*a.mutable_env())["PATH"] = "/usr/bin:/bin";
  a.set_build_id("tls");
  auto submitted = actions->Execute({a});
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  auto done = actions->WaitAll({submitted->front().action_id()}, absl::Seconds(60));
  ASSERT_TRUE(done.ok()) << done.status();
  EXPECT_EQ(done->front().state(), farm::v1::ACTION_STATE_COMPLETED) << done->front().DebugString();
  EXPECT_EQ(done->front().result().stdout_tail(), "over tls\n");

  CommandResult status = Farmctl(ClientTls(), {"--json", "status"});
  ASSERT_EQ(status.exit_code, 0) << Output(status);
  auto j = nlohmann::json::parse(status.stdout_text);
  EXPECT_EQ(j.value("tls", false), true);
  CommandResult text = Farmctl(ClientTls(), {"status"});
  ASSERT_EQ(text.exit_code, 0) << Output(text);
  EXPECT_THAT(text.stdout_text, HasSubstr("https://" + farm_->coordinator().http_address()));
}

// A build without network (a PyPI sdist's) dials the coordinator through the worker's relayed
// Unix socket: TLS still runs end to end, the certificate checked against FARM_TLS_SERVER_NAME.
TEST_F(TlsTest, ARelayedSocketReachesTheCoordinatorWithTheCertificateCheckedByName) {
  StartCoordinator(/*mutual=*/true);
  auto relay = worker::CoordinatorRelay::Start(dir_ / "relay.sock", farm_->address());
  ASSERT_TRUE(relay.ok()) << relay.status();
  auto call = [&](const std::string& server_name) {
    auto channel = LoadChannelOptions(
        {pki_.ca, pki_.client.cert, pki_.client.key, /*server_name=*/server_name});
    EXPECT_TRUE(channel.ok()) << channel.status();
    auto actions = ActionClient::Connect((*relay)->address(), farm_->AdminToken(), *channel);
    return actions->Get("no-such-action").status();
  };
  // The coordinator answered (no such action): the handshake passed, through the relay.
  EXPECT_EQ(call("127.0.0.1").code(), absl::StatusCode::kNotFound) << call("127.0.0.1");
  // A name the certificate does not carry is refused: the name given is the one checked.
  EXPECT_EQ(call("wrong.example").code(), absl::StatusCode::kUnavailable);
  EXPECT_GE((*relay)->connections(), 2);
}

TEST_F(TlsTest, PlainTextAndAForeignCaAreRefused) {
  StartCoordinator(/*mutual=*/false);
  // Server-only TLS: a verified client needs no certificate of its own.
  CommandResult ok = Farmctl({"--tls-ca", pki_.ca}, {"status"});
  ASSERT_EQ(ok.exit_code, 0) << Output(ok);

  CommandResult plain = Farmctl({}, {"status"});
  EXPECT_EQ(plain.exit_code, 1) << Output(plain);
  EXPECT_THAT(plain.stderr_text, HasSubstr("--tls-ca"));

  CommandResult foreign = Farmctl({"--tls-ca", pki_.other_ca}, {"status"});
  EXPECT_EQ(foreign.exit_code, 1) << Output(foreign);
  EXPECT_THAT(foreign.stderr_text, HasSubstr("certificate"));

  // HTTP: plain text gets nothing; a foreign CA fails verification.
  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok());
  httplib::Client http(hp->host, hp->port);
  http.set_connection_timeout(5);
  http.set_read_timeout(5);
  auto res = http.Get("/healthz");
  EXPECT_TRUE(!res || res->status != 200);
  httplib::SSLClient wrong(hp->host, hp->port);
  wrong.set_ca_cert_path(pki_.other_ca.c_str());
  wrong.enable_server_certificate_verification(true);
  auto wrong_res = wrong.Get("/healthz");
  ASSERT_FALSE(wrong_res);
  EXPECT_EQ(wrong_res.error(), httplib::Error::SSLServerVerification);
}

TEST_F(TlsTest, MutualTlsRefusesWorkersWithoutAGoodClientCertificate) {
  StartCoordinator(/*mutual=*/true);
  // No client certificate: the handshake fails, the worker never registers.
  auto bare = StartWorker("bare", {"--tls-ca", pki_.ca});
  ASSERT_TRUE(bare.ok());
  // A worker whose handshake succeeds registers within a second or two (see above).
  absl::SleepFor(absl::Seconds(4));
  EXPECT_EQ(farm_->WorkerState("bare"), "");
  EXPECT_FALSE((*bare)->process().Wait(absl::ZeroDuration()).has_value())
      << "a refused handshake is retried, not fatal: " << ReadFile((*bare)->log_path());

  // Only the coordinator's verification stands between these and a call.
  EXPECT_FALSE(CallWithClientCertificate(pki_.client).code() == absl::StatusCode::kUnavailable)
      << "control: a good client certificate gets through";
  EXPECT_EQ(CallWithClientCertificate(pki_.expired_client).code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(CallWithClientCertificate(pki_.foreign_client).code(), absl::StatusCode::kUnavailable);

  // A client refuses its own expired certificate before dialling, naming the fix.
  CommandResult expired = Farmctl({"--tls-ca", pki_.ca, "--tls-cert", pki_.expired_client.cert,
                                   "--tls-key", pki_.expired_client.key},
                                  {"status"});
  EXPECT_EQ(expired.exit_code, 2) << Output(expired);
  EXPECT_THAT(expired.stderr_text, HasSubstr("expired on 2020-02-01"));
  auto w = StartWorker("late", {"--tls-ca", pki_.ca, "--tls-cert", pki_.expired_client.cert,
                                "--tls-key", pki_.expired_client.key});
  ASSERT_TRUE(w.ok());
  EXPECT_EQ((*w)->process().Wait(absl::Seconds(20)), 2) << ReadFile((*w)->log_path());
  EXPECT_THAT(ReadFile((*w)->log_path()), HasSubstr(pki_.expired_client.cert));
}

TEST_F(TlsTest, CoordinatorRefusesBadTlsFilesWithExit2) {
  // A key others can read.
  const std::string open_key = dir_ / "open.key";
  fs::copy_file(pki_.server.key, open_key);
  fs::permissions(open_key, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                                fs::perms::others_read);
  CommandResult r = RunCoordinator({"--tls-cert", pki_.server.cert, "--tls-key", open_key});
  EXPECT_EQ(r.exit_code, 2) << Output(r);
  EXPECT_THAT(r.stdout_text + r.stderr_text, HasSubstr("chmod 600 " + open_key));

  // Missing and unparseable certificates name the file.
  const std::string missing = dir_ / "missing.pem";
  r = RunCoordinator({"--tls-cert", missing, "--tls-key", pki_.server.key});
  EXPECT_EQ(r.exit_code, 2) << Output(r);
  EXPECT_THAT(r.stdout_text + r.stderr_text, HasSubstr(missing));
  const std::string garbage = dir_ / "garbage.pem";
  WriteText(garbage, "this is no certificate\n");
  r = RunCoordinator({"--tls-cert", garbage, "--tls-key", pki_.server.key});
  EXPECT_EQ(r.exit_code, 2) << Output(r);
  EXPECT_THAT(r.stdout_text + r.stderr_text, HasSubstr(garbage));
  r = RunCoordinator(
      {"--tls-cert", pki_.server.cert, "--tls-key", pki_.server.key, "--tls-client-ca", garbage});
  EXPECT_EQ(r.exit_code, 2) << Output(r);
  EXPECT_THAT(r.stdout_text + r.stderr_text, HasSubstr("--tls-client-ca"));

  // An expired certificate, and a key that is not the certificate's.
  r = RunCoordinator(
      {"--tls-cert", pki_.expired_server.cert, "--tls-key", pki_.expired_server.key});
  EXPECT_EQ(r.exit_code, 2) << Output(r);
  EXPECT_THAT(r.stdout_text + r.stderr_text, HasSubstr("expired on 2020-02-01"));
  r = RunCoordinator({"--tls-cert", pki_.server.cert, "--tls-key", pki_.client.key});
  EXPECT_EQ(r.exit_code, 2) << Output(r);
  EXPECT_THAT(r.stdout_text + r.stderr_text, HasSubstr("does not belong"));
}

TEST_F(TlsTest, NonLoopbackWithoutTlsWarnsAndWithTlsDoesNot) {
  auto plain =
      TestFarm::Start(dir_.path(), {.listen = "0.0.0.0:0", .http_listen = "", .data_dir = "plain"});
  ASSERT_TRUE(plain.ok()) << plain.status();
  (*plain)->StopCoordinator();
  EXPECT_THAT(ReadFile((*plain)->coordinator().log_path()), HasSubstr("without TLS"));
  auto tls = TestFarm::Start(dir_.path(), {.coordinator_args = ServerTlsArgs(false),
                                           .listen = "0.0.0.0:0",
                                           .http_listen = "",
                                           .data_dir = "tls"});
  ASSERT_TRUE(tls.ok()) << tls.status();
  (*tls)->StopCoordinator();
  EXPECT_THAT(ReadFile((*tls)->coordinator().log_path()), Not(HasSubstr("without TLS")));
}

TEST_F(TlsTest, HttpsHealthzAndThePackageIndexThroughPip) {
  ASSERT_TRUE(fs::exists(kPython)) << kPython << " missing: run scripts/install-deps.sh";
  StartCoordinator(/*mutual=*/true);
  auto hp = ParseHostPort(farm_->coordinator().http_address());
  ASSERT_TRUE(hp.ok());
  httplib::SSLClient https(hp->host, hp->port);
  https.set_ca_cert_path(pki_.ca.c_str());
  https.enable_server_certificate_verification(true);
  auto healthz = https.Get("/healthz");
  ASSERT_TRUE(healthz) << httplib::to_string(healthz.error());
  EXPECT_EQ(healthz->status, 200);
  EXPECT_EQ(healthz->body, "ok\n");

  // The HTTP limits hold under TLS too: a Host name a loopback listener does not answer to
  // is refused (DNS rebinding), after the handshake, before any route runs.
  auto rebound = https.Get("/simple/", {{"Host", "rebind.example"}});
  ASSERT_TRUE(rebound) << httplib::to_string(rebound.error());
  EXPECT_EQ(rebound->status, 421);

  // farmctl publishes to the built-in index over HTTPS, verifying with the same CA.
  ASSERT_TRUE(WriteFakeLibraryWheel(dir_ / "wheels").ok());
  const std::string wheel = dir_ / "wheels/wheelfarm_prereq_fake-1.2.3-py3-none-any.whl";
  CommandResult published = Farmctl(ClientTls(), {"publish", wheel, "--to", "builtin"});
  ASSERT_EQ(published.exit_code, 0) << Output(published);
  EXPECT_THAT(published.stdout_text + published.stderr_text, HasSubstr("https://"));

  const std::string index =
      absl::StrCat("https://", farm_->coordinator().http_address(), "/simple/");
  auto pip_download = [&](const std::string& ca) {
    auto r = RunCommand({kPython, "-m", "pip", "download", "--no-deps", "--no-cache-dir",
                         "--disable-pip-version-check", "--retries", "0", "-d", dir_ / "dl",
                         "--index-url", index, "--cert", ca, "wheelfarm-prereq-fake==1.2.3"},
                        absl::Seconds(120),
                        // requests lets these override pip's --cert; a machine that sets them
                        // (to the system bundle) would hide what --cert does.
                        {"REQUESTS_CA_BUNDLE=", "CURL_CA_BUNDLE=", "PIP_CERT="});
    return r.ok() ? *r : CommandResult{-1, "", std::string(r.status().message())};
  };
  CommandResult trusted = pip_download(pki_.ca);
  ASSERT_EQ(trusted.exit_code, 0) << Output(trusted);
  EXPECT_TRUE(fs::exists(dir_ / "dl/wheelfarm_prereq_fake-1.2.3-py3-none-any.whl"));
  fs::remove_all(dir_ / "dl");
  CommandResult untrusted = pip_download(pki_.other_ca);
  EXPECT_NE(untrusted.exit_code, 0) << Output(untrusted);
  EXPECT_THAT(untrusted.stdout_text + untrusted.stderr_text,
              AnyOf(HasSubstr("CERTIFICATE_VERIFY_FAILED"), HasSubstr("certificate verify")));
}

TEST(LocalTlsFarmTest, UpWithTlsMakesACaAndBareFarmctlUsesIt) {
  TempDir dir("tls-up");
  const std::vector<std::string> env = {"XDG_STATE_HOME=" + (dir / "state"),
                                        "FARM_COORDINATOR=",
                                        "FARM_TOKEN_FILE=",
                                        "FARM_TLS_CA=",
                                        "FARM_TLS_CERT=",
                                        "FARM_TLS_KEY="};
  CommandResult up = RunFarmctl({"up", "--tls", "--workers", "1", "--data-dir", dir / "farm",
                                 "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"},
                                env);
  ASSERT_EQ(up.exit_code, 0) << Output(up);
  EXPECT_THAT(up.stdout_text, HasSubstr("mutual TLS"));
  EXPECT_THAT(up.stdout_text, HasSubstr("--cert " + (dir / "farm/tls/ca.pem")));
  auto record = nlohmann::json::parse(ReadFile(dir / "farm/farm.json"));
  EXPECT_EQ(record["tls"].value("ca", ""), dir / "farm/tls/ca.pem");
  struct stat st {};
  ASSERT_EQ(::stat((dir / "farm/tls/server.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // Bare farmctl: address, token and TLS all from the local farm's record.
  CommandResult workers = RunFarmctl({"--json", "workers"}, env);
  ASSERT_EQ(workers.exit_code, 0) << Output(workers);
  EXPECT_EQ(StateOf(nlohmann::json::parse(workers.stdout_text), "local-1"), "online");
  CommandResult status = RunFarmctl({"--json", "status"}, env);
  ASSERT_EQ(status.exit_code, 0) << Output(status);
  EXPECT_EQ(nlohmann::json::parse(status.stdout_text).value("tls", false), true);

  // The farm really requires TLS: the same address in plain text is refused.
  const std::string grpc = record.value("grpc", "");
  const std::string token = record.value("token_file", "");
  CommandResult plain =
      RunFarmctl({"--coordinator", grpc, "--token-file", token, "--tls-ca", "", "status"},
                 {"XDG_STATE_HOME=" + (dir / "elsewhere")});
  EXPECT_NE(plain.exit_code, 0) << Output(plain);

  // HTTPS with the farm's CA.
  auto hp = ParseHostPort(record.value("http", ""));
  ASSERT_TRUE(hp.ok());
  httplib::SSLClient https(hp->host, hp->port);
  https.set_ca_cert_path((dir / "farm/tls/ca.pem").c_str());
  https.enable_server_certificate_verification(true);
  auto healthz = https.Get("/healthz");
  ASSERT_TRUE(healthz) << httplib::to_string(healthz.error());
  EXPECT_EQ(healthz->status, 200);

  // A second up keeps the CA clients may have copied.
  const std::string ca_before = ReadFile(dir / "farm/tls/ca.pem");
  ASSERT_EQ(RunFarmctl({"down"}, env).exit_code, 0);
  CommandResult again = RunFarmctl({"up", "--tls", "--workers", "1", "--data-dir", dir / "farm",
                                    "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"},
                                   env);
  ASSERT_EQ(again.exit_code, 0) << Output(again);
  EXPECT_EQ(ReadFile(dir / "farm/tls/ca.pem"), ca_before);
  EXPECT_EQ(RunFarmctl({"--json", "workers"}, env).exit_code, 0);
  EXPECT_EQ(RunFarmctl({"down"}, env).exit_code, 0);
}

}  // namespace
}  // namespace farm::testing
