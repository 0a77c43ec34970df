// Validation of a process's TLS files with OpenSSL's C API, the CAF config
// that turns certificate-verified TLS on, and the loopback test for bind
// addresses.
#include "actors/cluster/tls.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <vector>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <caf/actor_system_config.hpp>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

struct bio_free {
  void operator()(BIO* p) const { BIO_free_all(p); }
};
struct x509_free {
  void operator()(X509* p) const { X509_free(p); }
};
struct pkey_free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct store_free {
  void operator()(X509_STORE* p) const { X509_STORE_free(p); }
};
struct store_ctx_free {
  void operator()(X509_STORE_CTX* p) const { X509_STORE_CTX_free(p); }
};
struct stack_free {
  void operator()(STACK_OF(X509) * p) const { sk_X509_pop_free(p, X509_free); }
};

using bio_ptr = std::unique_ptr<BIO, bio_free>;
using x509_ptr = std::unique_ptr<X509, x509_free>;
using pkey_ptr = std::unique_ptr<EVP_PKEY, pkey_free>;

// PEM files of certificates and keys are a few KiB; anything far larger is
// the wrong file.
constexpr std::streamoff max_pem_size = 1 << 20;

caf::error config_error(std::string why) {
  return make_troupe_error(troupe_errc::bad_config, std::move(why));
}

// Names a file in messages the way the person gave it: "--tls-cert 'a.pem'".
std::string quote(const char* flag, const std::string& path) {
  return std::string{flag} + " '" + path + "'";
}

// Drains this thread's OpenSSL error queue into "reason, reason".
std::string openssl_reasons() {
  std::string out;
  while (auto code = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(code);
    std::string text = reason ? reason : "error " + std::to_string(code);
    if (out.find(text) != std::string::npos)
      continue;
    if (!out.empty())
      out += ", ";
    out += text;
  }
  return out.empty() ? "no details from OpenSSL" : out;
}

// Refuses to prompt on the terminal for a passphrase (OpenSSL's default).
int no_passphrase(char*, int, int, void* asked) {
  if (asked != nullptr)
    *static_cast<bool*>(asked) = true;
  return -1;
}

// Reads a whole (small, regular) file or says why it cannot.
caf::error read_small_file(const char* flag, const std::string& path,
                           std::string& text) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0)
    return config_error(quote(flag, path)
                        + " cannot be read: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    return config_error(quote(flag, path) + " is not a regular file");
  if (info.st_size > max_pem_size)
    return config_error(quote(flag, path) + " is "
                        + std::to_string(info.st_size)
                        + " bytes, too large to be a PEM file");
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return config_error(quote(flag, path)
                        + " cannot be read: " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  if (text.empty())
    return config_error(quote(flag, path) + " is empty");
  return caf::none;
}

bio_ptr memory_bio(const std::string& text) {
  return bio_ptr{BIO_new_mem_buf(text.data(), static_cast<int>(text.size()))};
}

// Tells a swapped pair of files from a broken one.
bool holds_private_key(const std::string& text) {
  auto bio = memory_bio(text);
  pkey_ptr key{PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase,
                                       nullptr)};
  ERR_clear_error();
  return key != nullptr;
}

bool holds_certificate(const std::string& text) {
  auto bio = memory_bio(text);
  x509_ptr cert{PEM_read_bio_X509(bio.get(), nullptr, no_passphrase, nullptr)};
  ERR_clear_error();
  return cert != nullptr;
}

// Parses every PEM certificate in text, in order; none found is an error.
caf::error parse_certificates(const char* flag, const std::string& path,
                              const std::string& text,
                              std::vector<x509_ptr>& out) {
  ERR_clear_error();
  auto bio = memory_bio(text);
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, no_passphrase,
                                         nullptr))
    out.emplace_back(cert);
  auto last = ERR_peek_last_error();
  bool at_end = ERR_GET_LIB(last) == ERR_LIB_PEM
                && ERR_GET_REASON(last) == PEM_R_NO_START_LINE;
  if (!out.empty() && (last == 0 || at_end)) {
    ERR_clear_error();
    return caf::none;
  }
  auto reasons = openssl_reasons();
  if (out.empty() && holds_private_key(text))
    return config_error(quote(flag, path)
                        + " holds a private key, not a PEM X.509 certificate"
                          " (are --tls-cert and --tls-key swapped?)");
  if (out.empty())
    return config_error(quote(flag, path)
                        + " is not a PEM X.509 certificate (" + reasons + ")");
  return config_error(quote(flag, path) + " has a broken certificate after "
                      + std::to_string(out.size()) + " good one(s) (" + reasons
                      + ")");
}

caf::error parse_key(const std::string& path, const std::string& text,
                     pkey_ptr& out) {
  if (text.find("ENCRYPTED PRIVATE KEY-----") != std::string::npos
      || text.find("Proc-Type: 4,ENCRYPTED") != std::string::npos)
    return config_error(quote("--tls-key", path)
                        + " is encrypted, and Troupe takes no passphrase:"
                          " write a plain copy (mode 600) with `openssl pkey"
                          " -in KEY -out PLAIN`");
  ERR_clear_error();
  bool asked = false;
  auto bio = memory_bio(text);
  out.reset(PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, &asked));
  if (out)
    return caf::none;
  auto reasons = openssl_reasons();
  if (asked)
    return config_error(quote("--tls-key", path)
                        + " is encrypted, and Troupe takes no passphrase");
  if (holds_certificate(text))
    return config_error(quote("--tls-key", path)
                        + " holds a certificate, not a PEM private key"
                          " (are --tls-cert and --tls-key swapped?)");
  return config_error(quote("--tls-key", path) + " is not a PEM private key ("
                      + reasons + ")");
}

std::string time_text(const ASN1_TIME* when) {
  bio_ptr bio{BIO_new(BIO_s_mem())};
  if (!bio || ASN1_TIME_print(bio.get(), when) != 1)
    return "an unreadable date";
  char* data = nullptr;
  auto size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<size_t>(size));
}

std::string subject_text(X509* cert) {
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  return buf;
}

std::string issuer_text(X509* cert) {
  char buf[256];
  X509_NAME_oneline(X509_get_issuer_name(cert), buf, sizeof(buf));
  return buf;
}

caf::error check_dates(const std::string& path, X509* cert) {
  if (X509_cmp_current_time(X509_get0_notBefore(cert)) > 0)
    return config_error(quote("--tls-cert", path) + " is not valid yet: from "
                        + time_text(X509_get0_notBefore(cert)));
  if (X509_cmp_current_time(X509_get0_notAfter(cert)) < 0)
    return config_error(quote("--tls-cert", path) + " expired on "
                        + time_text(X509_get0_notAfter(cert)));
  return caf::none;
}

// Verifies the leaf against the CA store the way an OpenSSL peer does, once
// for each role a Troupe process plays (it publishes and it connects).
caf::error verify_chain(const tls_files& files, X509_STORE* store, X509* leaf,
                        STACK_OF(X509) * untrusted) {
  struct role {
    int purpose;
    const char* name;
  };
  for (auto [purpose, name] : {role{X509_PURPOSE_SSL_SERVER, "server"},
                               role{X509_PURPOSE_SSL_CLIENT, "client"}}) {
    std::unique_ptr<X509_STORE_CTX, store_ctx_free> ctx{X509_STORE_CTX_new()};
    if (!ctx || X509_STORE_CTX_init(ctx.get(), store, leaf, untrusted) != 1
        || X509_STORE_CTX_set_purpose(ctx.get(), purpose) != 1)
      return config_error("cannot set up certificate verification ("
                          + openssl_reasons() + ")");
    if (X509_verify_cert(ctx.get()) == 1)
      continue;
    auto code = X509_STORE_CTX_get_error(ctx.get());
    std::string why = quote("--tls-cert", files.certificate)
                      + " does not verify against "
                      + quote("--tls-ca", files.ca) + " as a TLS " + name
                      + ": " + X509_verify_cert_error_string(code);
    auto depth = X509_STORE_CTX_get_error_depth(ctx.get());
    if (auto current = X509_STORE_CTX_get_current_cert(ctx.get());
        current != nullptr && depth > 0)
      why += " (at " + subject_text(current) + ")";
    switch (code) {
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY:
      case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT:
      case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT:
      case X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN:
        why += "; it was issued by " + issuer_text(leaf)
               + ", which that CA file does not hold";
        break;
      case X509_V_ERR_INVALID_PURPOSE:
        why += "; make it with extendedKeyUsage serverAuth,clientAuth"
               " (scripts/make_certs.sh does)";
        break;
      default:
        break;
    }
    ERR_clear_error();
    return config_error(std::move(why));
  }
  return caf::none;
}

} // namespace

bool tls_files::enabled() const {
  return !certificate.empty() || !key.empty() || !ca.empty();
}

tls_files tls_files_from(const caf::actor_system_config& cfg) {
  return tls_files{cfg.openssl_certificate, cfg.openssl_key,
                   cfg.openssl_cafile};
}

namespace {

// All three files or none: the error names those missing.
caf::error check_all_given(const tls_files& files) {
  std::vector<std::string> missing;
  if (files.certificate.empty())
    missing.emplace_back("--tls-cert");
  if (files.key.empty())
    missing.emplace_back("--tls-key");
  if (files.ca.empty())
    missing.emplace_back("--tls-ca");
  if (missing.empty())
    return caf::none;
  std::string list = missing[0];
  if (missing.size() == 2)
    list += " and " + missing[1];
  return config_error("--tls-cert, --tls-key and --tls-ca go together: missing " + list);
}

// A store that trusts each certificate of --tls-ca.
caf::error trust_authorities(const tls_files& files, const std::vector<x509_ptr>& authorities,
                             X509_STORE* store) {
  for (const auto& ca : authorities)
    if (X509_STORE_add_cert(store, ca.get()) != 1) {
      auto reasons = openssl_reasons();
      // The same CA twice in one file is harmless.
      if (reasons.find("already in hash table") == std::string::npos)
        return config_error(quote("--tls-ca", files.ca)
                            + " has a certificate OpenSSL cannot use (" + reasons + ")");
    }
  return caf::none;
}

} // namespace

caf::error check_tls_files(const tls_files& files) {
  if (!files.enabled())
    return caf::none;
  if (auto err = check_all_given(files))
    return err;
  std::string cert_text, key_text, ca_text;
  if (auto err = read_small_file("--tls-cert", files.certificate, cert_text))
    return err;
  if (auto err = read_small_file("--tls-key", files.key, key_text))
    return err;
  if (auto err = read_small_file("--tls-ca", files.ca, ca_text))
    return err;
  // The certificate file may carry intermediates after the leaf, as
  // SSL_CTX_use_certificate_chain_file (what CAF calls) allows.
  std::vector<x509_ptr> chain;
  if (auto err = parse_certificates("--tls-cert", files.certificate, cert_text, chain))
    return err;
  pkey_ptr key;
  if (auto err = parse_key(files.key, key_text, key))
    return err;
  X509* leaf = chain.front().get();
  ERR_clear_error();
  if (X509_check_private_key(leaf, key.get()) != 1) {
    ERR_clear_error();
    return config_error(quote("--tls-key", files.key) + " does not belong to "
                        + quote("--tls-cert", files.certificate) + " (" + subject_text(leaf)
                        + ")");
  }
  std::vector<x509_ptr> authorities;
  if (auto err = parse_certificates("--tls-ca", files.ca, ca_text, authorities))
    return err;
  if (auto err = check_dates(files.certificate, leaf))
    return err;
  std::unique_ptr<X509_STORE, store_free> store{X509_STORE_new()};
  std::unique_ptr<STACK_OF(X509), stack_free> untrusted{sk_X509_new_null()};
  if (!store || !untrusted)
    return config_error("cannot allocate an X509 store");
  if (auto err = trust_authorities(files, authorities, store.get()))
    return err;
  for (size_t i = 1; i < chain.size(); ++i)
    if (sk_X509_push(untrusted.get(), chain[i].get()) > 0)
      chain[i].release(); // the stack owns it now
  return verify_chain(files, store.get(), leaf, untrusted.get());
}

void apply_tls(caf::actor_system_config& cfg, const tls_files& files) {
  // The openssl manager reads the members; set() keeps cfg.content (what
  // --dump-config and get_or see) in step.
  cfg.set("openssl.certificate", files.certificate);
  cfg.set("openssl.key", files.key);
  cfg.set("openssl.cafile", files.ca);
  cfg.set("openssl.capath", std::string{});
  cfg.set("openssl.passphrase", std::string{});
  cfg.openssl_certificate = files.certificate;
  cfg.openssl_key = files.key;
  cfg.openssl_cafile = files.ca;
  cfg.openssl_capath.clear();
  cfg.openssl_passphrase.clear();
}

bool is_loopback(const std::string& address) {
  std::string host = address;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  std::transform(host.begin(), host.end(), host.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (host == "localhost" || host == "localhost.")
    return true;
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1)
    return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) == 1)
    return IN6_IS_ADDR_LOOPBACK(&v6)
           || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  return false;
}

} // namespace troupe::detail
