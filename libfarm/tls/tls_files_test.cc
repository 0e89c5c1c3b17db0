#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "libfarm/files/file_contents.h"
#include "libfarm/status/exit_code.h"
#include "libfarm/tls/client_tls.h"
#include "libfarm/tls/local_ca.h"
#include "libfarm/tls/pem_files.h"
#include "libfarm/tls/server_tls.h"

namespace farm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TlsFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("wheelfarm-tls-unit-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    auto ca = EnsureLocalCa({.dir = (dir_ / "ca").string(),
                             .server_names = {"10.1.2.3", "farm.example"},
                             .client_names = {"w1", "farmctl"}});
    ASSERT_TRUE(ca.ok()) << ca.status();
    ca_ = *ca;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text, fs::perms mode) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    fs::permissions(path, mode);
    return path;
  }

  fs::path dir_;
  LocalCa ca_;
};

mode_t ModeOf(const std::string& path) {
  struct stat st {};
  ::stat(path.c_str(), &st);
  return st.st_mode & 0777;
}

// Verifies `cert_file` against `ca_file` the way a TLS peer would, including the host name.
bool ChainsToCaAndNames(const std::string& cert_file, const std::string& ca_file,
                        const std::string& ip_or_dns) {
  auto cert_pem = *ReadFileContents(cert_file);
  auto ca_pem = *ReadFileContents(ca_file);
  BIO* cb = BIO_new_mem_buf(cert_pem.data(), cert_pem.size());
  BIO* ab = BIO_new_mem_buf(ca_pem.data(), ca_pem.size());
  X509* cert = PEM_read_bio_X509(cb, nullptr, nullptr, nullptr);
  X509* ca = PEM_read_bio_X509(ab, nullptr, nullptr, nullptr);
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, cert, nullptr);
  bool ok = X509_verify_cert(ctx) == 1;
  ok = ok && (X509_check_ip_asc(cert, ip_or_dns.c_str(), 0) == 1 ||
              X509_check_host(cert, ip_or_dns.c_str(), 0, 0, nullptr) == 1);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  X509_free(cert);
  X509_free(ca);
  BIO_free(cb);
  BIO_free(ab);
  return ok;
}

TEST_F(TlsFilesTest, LocalCaIssuesCertificatesThatChainAndNameLoopback) {
  EXPECT_TRUE(ChainsToCaAndNames(ca_.server.cert_file, ca_.ca_file, "127.0.0.1"));
  EXPECT_TRUE(ChainsToCaAndNames(ca_.server.cert_file, ca_.ca_file, "localhost"));
  EXPECT_TRUE(ChainsToCaAndNames(ca_.server.cert_file, ca_.ca_file, "10.1.2.3"));
  EXPECT_TRUE(ChainsToCaAndNames(ca_.server.cert_file, ca_.ca_file, "farm.example"));
  EXPECT_FALSE(ChainsToCaAndNames(ca_.server.cert_file, ca_.ca_file, "10.9.9.9"));
  ASSERT_EQ(ca_.clients.count("w1"), 1u);
  EXPECT_TRUE(ChainsToCaAndNames(ca_.clients["w1"].cert_file, ca_.ca_file, "w1"));
  EXPECT_EQ(ModeOf(ca_.server.key_file), 0600u);
  EXPECT_EQ(ModeOf(ca_.clients["farmctl"].key_file), 0600u);
  EXPECT_EQ(ModeOf((dir_ / "ca" / "ca.key").string()), 0600u);
  EXPECT_EQ(ModeOf((dir_ / "ca").string()), 0700u);
}

TEST_F(TlsFilesTest, LocalCaKeepsItsCaAcrossCalls) {
  const std::string before = *ReadFileContents(ca_.ca_file);
  auto again = EnsureLocalCa({.dir = (dir_ / "ca").string(), .client_names = {"w1"}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*ReadFileContents(again->ca_file), before);
  // The fresh server certificate still chains to the kept CA.
  EXPECT_TRUE(ChainsToCaAndNames(again->server.cert_file, again->ca_file, "127.0.0.1"));
}

TEST_F(TlsFilesTest, ServerAndClientFilesLoad) {
  auto server = LoadServerTls({.cert_file = ca_.server.cert_file,
                               .key_file = ca_.server.key_file,
                               .client_ca_file = ca_.ca_file});
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE(server->has_value());
  EXPECT_THAT((*server)->subject, HasSubstr("CN=localhost"));
  EXPECT_FALSE((*server)->client_ca_pem.empty());

  auto client =
      LoadChannelOptions({ca_.ca_file, ca_.clients["w1"].cert_file, ca_.clients["w1"].key_file});
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(client->tls.has_value());
  EXPECT_THAT(client->tls->cert_pem, HasSubstr("BEGIN CERTIFICATE"));

  auto plain = LoadChannelOptions({});
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(plain->tls.has_value());
  auto none = LoadServerTls({});
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
}

TEST_F(TlsFilesTest, KeyReadableByOthersIsRefusedWithChmodFix) {
  const std::string key = Write("open.key", *ReadFileContents(ca_.server.key_file),
                                fs::perms::owner_read | fs::perms::owner_write |
                                    fs::perms::group_read | fs::perms::others_read);
  auto server = LoadServerTls({.cert_file = ca_.server.cert_file, .key_file = key});
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(ExitCodeForStatus(server.status()), kExitConfig);
  EXPECT_THAT(server.status().message(), HasSubstr(key));
  EXPECT_THAT(server.status().message(), HasSubstr("chmod 600 " + key));
  EXPECT_THAT(server.status().message(), HasSubstr("0644"));
}

TEST_F(TlsFilesTest, MissingAndGarbageFilesNameTheFile) {
  const std::string missing = (dir_ / "nope.pem").string();
  auto a = LoadServerTls({.cert_file = missing, .key_file = ca_.server.key_file});
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(ExitCodeForStatus(a.status()), kExitConfig);
  EXPECT_THAT(a.status().message(), HasSubstr(missing));

  const std::string garbage = Write("garbage.pem", "not a certificate\n", fs::perms::owner_read);
  auto b = LoadChannelOptions({.ca_file = garbage});
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(ExitCodeForStatus(b.status()), kExitConfig);
  EXPECT_THAT(b.status().message(), HasSubstr(garbage));
  EXPECT_THAT(b.status().message(), HasSubstr("--tls-ca"));

  const std::string bad_key =
      Write("bad.key", "-----BEGIN PRIVATE KEY-----\nAAAA\n", fs::perms::owner_read);
  auto c = LoadServerTls({.cert_file = ca_.server.cert_file, .key_file = bad_key});
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(ExitCodeForStatus(c.status()), kExitConfig);
  EXPECT_THAT(c.status().message(), HasSubstr(bad_key));
}

TEST_F(TlsFilesTest, KeyOfAnotherCertificateIsRefused) {
  auto s =
      LoadServerTls({.cert_file = ca_.server.cert_file, .key_file = ca_.clients["w1"].key_file});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(ExitCodeForStatus(s.status()), kExitConfig);
  EXPECT_THAT(s.status().message(), HasSubstr("does not belong"));
}

TEST_F(TlsFilesTest, ExpiredOrNotYetValidCertificateIsRefused) {
  auto later = ReadCurrentCertificateFile(ca_.server.cert_file, "--tls-cert",
                                          absl::Now() + absl::Hours(24 * 400));
  ASSERT_FALSE(later.ok());
  EXPECT_EQ(ExitCodeForStatus(later.status()), kExitConfig);
  EXPECT_THAT(later.status().message(), HasSubstr("expired on"));
  auto earlier =
      ReadCurrentCertificateFile(ca_.server.cert_file, "--tls-cert", absl::Now() - absl::Hours(2));
  ASSERT_FALSE(earlier.ok());
  EXPECT_THAT(earlier.status().message(), HasSubstr("not valid before"));
}

TEST_F(TlsFilesTest, HalfConfigurationsAreRefused) {
  EXPECT_FALSE(LoadServerTls({.cert_file = ca_.server.cert_file}).ok());
  EXPECT_FALSE(LoadServerTls({.client_ca_file = ca_.ca_file}).ok());
  EXPECT_FALSE(
      LoadChannelOptions({.ca_file = ca_.ca_file, .cert_file = ca_.server.cert_file}).ok());
  EXPECT_FALSE(LoadChannelOptions({.cert_file = ca_.clients["w1"].cert_file,
                                   .key_file = ca_.clients["w1"].key_file})
                   .ok());
}

}  // namespace
}  // namespace farm
