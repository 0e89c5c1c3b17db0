#include "libfarm/tls/local_ca.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libfarm/files/file_contents.h"
#include "libfarm/tls/openssl_ptr.h"

namespace farm {
namespace {

namespace fs = std::filesystem;

absl::Status OpenSslFailure(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  char buf[256] = "no details";
  if (e != 0) ERR_error_string_n(e, buf, sizeof(buf));
  return absl::InternalError(absl::StrCat("local CA: ", what, " failed: ", buf));
}

template <typename WriteFn>
absl::StatusOr<std::string> ToPem(WriteFn write) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (bio == nullptr || write(bio.get()) != 1) return OpenSslFailure("PEM encoding");
  char* data = nullptr;
  const long n = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(n));
}

absl::Status WriteCertificate(X509* cert, const std::string& path) {
  auto pem = ToPem([cert](BIO* b) { return PEM_write_bio_X509(b, cert); });
  if (!pem.ok()) return pem.status();
  return WriteFileAtomically(path, *pem, 0644);
}

absl::Status WriteKey(EVP_PKEY* key, const std::string& path) {
  auto pem = ToPem([key](BIO* b) {
    return PEM_write_bio_PrivateKey(b, key, nullptr, nullptr, 0, nullptr, nullptr);
  });
  if (!pem.ok()) return pem.status();
  return WriteFileAtomically(path, *pem, 0600);
}

absl::StatusOr<PkeyPtr> NewKey() {
  // P-256: small, fast to make, and accepted by gRPC, curl, pip and browsers alike.
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (key == nullptr) return OpenSslFailure("generating a P-256 key");
  return key;
}

absl::Status AddExtension(X509* cert, X509V3_CTX* ctx, int nid, const std::string& value) {
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, ctx, nid, value.c_str());
  if (ext == nullptr) return OpenSslFailure(absl::StrCat("extension ", OBJ_nid2sn(nid)));
  const int added = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  if (added != 1) return OpenSslFailure(absl::StrCat("adding extension ", OBJ_nid2sn(nid)));
  return absl::OkStatus();
}

struct CertificateSpec {
  std::string common_name;
  absl::Duration validity;
  // (nid, value) in order; subjectKeyIdentifier must come before authorityKeyIdentifier.
  std::vector<std::pair<int, std::string>> extensions;
};

// Signs `key`'s certificate with `issuer_key`; `issuer` null means self-signed.
absl::StatusOr<X509Ptr> Issue(const CertificateSpec& spec, EVP_PKEY* key, X509* issuer,
                              EVP_PKEY* issuer_key) {
  X509Ptr cert(X509_new());
  if (cert == nullptr) return OpenSslFailure("X509_new");
  unsigned char serial[16];
  if (RAND_bytes(serial, sizeof(serial)) != 1) return OpenSslFailure("a random serial");
  serial[0] &= 0x7f;  // serials are positive
  BIGNUM* bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  const bool serial_set =
      bn != nullptr && BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert.get())) != nullptr;
  BN_free(bn);
  if (!serial_set) return OpenSslFailure("setting the serial");
  // An hour of slack before now, for clocks of other hosts running a little behind.
  if (X509_set_version(cert.get(), 2) != 1 ||
      X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600) == nullptr ||
      X509_gmtime_adj(X509_getm_notAfter(cert.get()), absl::ToInt64Seconds(spec.validity)) ==
          nullptr) {
    return OpenSslFailure("setting the validity");
  }
  X509_NAME* name = X509_get_subject_name(cert.get());
  auto add_entry = [name](const char* field, const std::string& value) {
    return X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8,
                                      reinterpret_cast<const unsigned char*>(value.c_str()), -1, -1,
                                      0) == 1;
  };
  if (!add_entry("O", "Wheelfarm local farm") || !add_entry("CN", spec.common_name)) {
    return OpenSslFailure("setting the subject");
  }
  if (X509_set_issuer_name(cert.get(), issuer != nullptr ? X509_get_subject_name(issuer) : name) !=
          1 ||
      X509_set_pubkey(cert.get(), key) != 1) {
    return OpenSslFailure("setting issuer and key");
  }
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer != nullptr ? issuer : cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] : spec.extensions) {
    if (absl::Status s = AddExtension(cert.get(), &ctx, nid, value); !s.ok()) return s;
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) return OpenSslFailure("signing");
  return cert;
}

// ca.pem + ca.key if both are there and the CA is still valid; otherwise none.
std::optional<std::pair<X509Ptr, PkeyPtr>> LoadCa(const std::string& cert_path,
                                                  const std::string& key_path) {
  auto cert_pem = ReadFileContents(cert_path);
  auto key_pem = ReadFileContents(key_path);
  if (!cert_pem.ok() || !key_pem.ok()) return std::nullopt;
  BioPtr cb(BIO_new_mem_buf(cert_pem->data(), cert_pem->size()));
  BioPtr kb(BIO_new_mem_buf(key_pem->data(), key_pem->size()));
  X509Ptr cert(PEM_read_bio_X509(cb.get(), nullptr, nullptr, nullptr));
  PkeyPtr key(PEM_read_bio_PrivateKey(kb.get(), nullptr, nullptr, nullptr));
  ERR_clear_error();
  if (cert == nullptr || key == nullptr || X509_check_private_key(cert.get(), key.get()) != 1 ||
      X509_cmp_current_time(X509_get0_notAfter(cert.get())) <= 0) {
    ERR_clear_error();
    return std::nullopt;
  }
  return std::make_pair(std::move(cert), std::move(key));
}

std::string SubjectAltNames(const std::vector<std::string>& extra) {
  std::vector<std::string> names = {"IP:127.0.0.1", "IP:::1", "DNS:localhost"};
  for (const std::string& n : extra) {
    if (n.empty() || n == "0.0.0.0" || n == "::") continue;  // wildcards name no host
    unsigned char buf[16];
    const bool ip =
        inet_pton(AF_INET, n.c_str(), buf) == 1 || inet_pton(AF_INET6, n.c_str(), buf) == 1;
    const std::string entry = absl::StrCat(ip ? "IP:" : "DNS:", n);
    if (std::find(names.begin(), names.end(), entry) == names.end()) names.push_back(entry);
  }
  return absl::StrJoin(names, ",");
}

absl::StatusOr<IssuedCertificate> IssueLeaf(const std::string& dir, const std::string& stem,
                                            const CertificateSpec& spec, X509* ca,
                                            EVP_PKEY* ca_key) {
  auto key = NewKey();
  if (!key.ok()) return key.status();
  auto cert = Issue(spec, key->get(), ca, ca_key);
  if (!cert.ok()) return cert.status();
  IssuedCertificate files{(fs::path(dir) / (stem + ".pem")).string(),
                          (fs::path(dir) / (stem + ".key")).string()};
  if (absl::Status s = WriteKey(key->get(), files.key_file); !s.ok()) return s;
  if (absl::Status s = WriteCertificate(cert->get(), files.cert_file); !s.ok()) return s;
  return files;
}

}  // namespace

absl::StatusOr<LocalCa> EnsureLocalCa(const LocalCaOptions& options) {
  std::error_code ec;
  fs::create_directories(options.dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create ", options.dir, ": ", ec.message()));
  }
  fs::permissions(options.dir, fs::perms::owner_all, fs::perm_options::replace, ec);
  LocalCa out;
  out.ca_file = (fs::path(options.dir) / "ca.pem").string();
  const std::string ca_key_file = (fs::path(options.dir) / "ca.key").string();

  auto ca = LoadCa(out.ca_file, ca_key_file);
  if (!ca) {
    auto key = NewKey();
    if (!key.ok()) return key.status();
    CertificateSpec spec{.common_name = "Wheelfarm local farm CA",
                         .validity = options.ca_validity,
                         .extensions = {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                        {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                        {NID_subject_key_identifier, "hash"}}};
    auto cert = Issue(spec, key->get(), nullptr, key->get());
    if (!cert.ok()) return cert.status();
    if (absl::Status s = WriteKey(key->get(), ca_key_file); !s.ok()) return s;
    if (absl::Status s = WriteCertificate(cert->get(), out.ca_file); !s.ok()) return s;
    ca.emplace(*std::move(cert), *std::move(key));
  }
  X509* ca_cert = ca->first.get();
  EVP_PKEY* ca_key = ca->second.get();

  CertificateSpec server{
      .common_name = "localhost",
      .validity = options.leaf_validity,
      .extensions = {{NID_basic_constraints, "critical,CA:FALSE"},
                     {NID_key_usage, "critical,digitalSignature"},
                     {NID_ext_key_usage, "serverAuth"},
                     {NID_subject_alt_name, SubjectAltNames(options.server_names)},
                     {NID_subject_key_identifier, "hash"},
                     {NID_authority_key_identifier, "keyid:always"}}};
  auto server_files = IssueLeaf(options.dir, "server", server, ca_cert, ca_key);
  if (!server_files.ok()) return server_files.status();
  out.server = *server_files;

  for (const std::string& name : options.client_names) {
    CertificateSpec client{.common_name = name,
                           .validity = options.leaf_validity,
                           .extensions = {{NID_basic_constraints, "critical,CA:FALSE"},
                                          {NID_key_usage, "critical,digitalSignature"},
                                          {NID_ext_key_usage, "clientAuth"},
                                          {NID_subject_key_identifier, "hash"},
                                          {NID_authority_key_identifier, "keyid:always"}}};
    auto files = IssueLeaf(options.dir, absl::StrCat("client-", name), client, ca_cert, ca_key);
    if (!files.ok()) return files.status();
    out.clients[name] = *files;
  }
  return out;
}

}  // namespace farm
