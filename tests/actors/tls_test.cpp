// TLS files and settings: check_tls_files on certificates made by
// scripts/make_certs.sh at test time, and the options CAF's openssl module
// reads.
#include <catch2/catch.hpp>

#include <string>

#include <caf/all.hpp>

#include "actors/cluster/tls.hpp"
#include "messages/errors.hpp"
#include "tests/actors/tls_certs.hpp"

using namespace troupe;
using namespace troupe::testing;

namespace {

// Returns the sentence of a Troupe error, or "" for no error.
std::string refusal(const tls_files& files) {
  auto err = check_tls_files(files);
  if (!err)
    return "";
  CHECK(err == make_error(troupe_errc::bad_config));
  return describe(err);
}

using Catch::Matchers::Contains;

} // namespace

TEST_CASE("check_tls_files accepts a node's files from the cluster CA",
          "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto files = dirs->node("cluster", "alpha");
  CHECK(files.enabled());
  CHECK(refusal(files).empty());
  CHECK(refusal(dirs->node("rogue", "mallory")).empty());
}

TEST_CASE("check_tls_files treats no files at all as TLS off", "[tls][files]") {
  tls_files none;
  CHECK_FALSE(none.enabled());
  CHECK_FALSE(check_tls_files(none));
}

TEST_CASE("check_tls_files wants all three options or none", "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto files = dirs->node("cluster", "alpha");
  files.ca.clear();
  CHECK(files.enabled());
  CHECK_THAT(refusal(files),
             Contains("--tls-cert, --tls-key and --tls-ca go together:"
                      " missing --tls-ca"));
  files = tls_files{};
  files.key = dirs->path("cluster", "alpha.key");
  CHECK_THAT(refusal(files), Contains("missing --tls-cert and --tls-ca"));
}

TEST_CASE("check_tls_files refuses a missing or unreadable file",
          "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto files = dirs->node("cluster", "alpha");
  files.key = dirs->path("cluster", "nobody.key");
  auto why = refusal(files);
  CHECK_THAT(why, Contains("--tls-key '" + files.key + "' cannot be read"));
  CHECK_THAT(why, Contains("No such file"));
  files = dirs->node("cluster", "alpha");
  files.ca = dirs->path("cluster", "");
  CHECK_THAT(refusal(files), Contains("is not a regular file"));
}

TEST_CASE("check_tls_files refuses the key of another certificate",
          "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto files = dirs->node("cluster", "alpha");
  files.key = dirs->path("cluster", "beta.key");
  CHECK_THAT(refusal(files),
             Contains("--tls-key '" + files.key + "' does not belong to"
                      " --tls-cert '" + files.certificate + "'"));
}

TEST_CASE("check_tls_files refuses a certificate from another CA",
          "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto files = dirs->node("rogue", "mallory");
  files.ca = dirs->path("cluster", "ca.pem");
  auto why = refusal(files);
  CHECK_THAT(why, Contains("does not verify against --tls-ca"));
  CHECK_THAT(why, Contains("unable to get local issuer certificate"));
}

TEST_CASE("check_tls_files refuses garbage, swapped and encrypted PEM",
          "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto garbage = write_file(*dirs, "garbage.pem",
                            "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n"
                            "-----END CERTIFICATE-----\n");
  auto files = dirs->node("cluster", "alpha");
  files.certificate = garbage;
  CHECK_THAT(refusal(files), Contains("--tls-cert '" + garbage
                                      + "' is not a PEM X.509 certificate"));
  files = dirs->node("cluster", "alpha");
  files.key = garbage;
  CHECK_THAT(refusal(files), Contains("is not a PEM private key"));
  files = dirs->node("cluster", "alpha");
  files.ca = write_file(*dirs, "empty.pem", "just text\n");
  CHECK_THAT(refusal(files), Contains("is not a PEM X.509 certificate"));

  files = dirs->node("cluster", "alpha");
  std::swap(files.certificate, files.key);
  CHECK_THAT(refusal(files), Contains("swapped"));

  files = dirs->node("cluster", "alpha");
  auto encrypted = (dirs->root / "encrypted.key").string();
  REQUIRE(run_quietly("openssl pkey -in '" + files.key + "' -aes256"
                      " -passout pass:secret -out '" + encrypted + "'"));
  files.key = encrypted;
  CHECK_THAT(refusal(files), Contains("is encrypted"));
}

TEST_CASE("check_tls_files refuses an expired certificate", "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto dir = dirs->root / "cluster";
  auto csr = (dirs->root / "old.csr").string();
  auto old = (dirs->root / "old.pem").string();
  auto key = (dir / "alpha.key").string();
  // OpenSSL 3.0's x509 -req takes -days -1: valid until yesterday.
  REQUIRE(run_quietly("openssl req -new -key '" + key + "' -subj /CN=old -out '"
                      + csr + "'"));
  REQUIRE(run_quietly("openssl x509 -req -in '" + csr + "' -CA '"
                      + (dir / "ca.pem").string() + "' -CAkey '"
                      + (dir / "ca.key").string()
                      + "' -set_serial 7 -days -1 -out '" + old + "'"));
  auto files = dirs->node("cluster", "alpha");
  files.certificate = old;
  CHECK_THAT(refusal(files), Contains("--tls-cert '" + old + "' expired on"));
}

TEST_CASE("check_tls_files refuses a certificate for one TLS role only",
          "[tls][files]") {
  REQUIRE_CERTS(dirs);
  auto dir = dirs->root / "cluster";
  auto csr = (dirs->root / "server_only.csr").string();
  auto ext = write_file(*dirs, "server_only.cnf",
                        "extendedKeyUsage = serverAuth\n");
  auto cert = (dirs->root / "server_only.pem").string();
  auto key = (dir / "alpha.key").string();
  REQUIRE(run_quietly("openssl req -new -key '" + key
                      + "' -subj /CN=server_only -out '" + csr + "'"));
  REQUIRE(run_quietly("openssl x509 -req -in '" + csr + "' -CA '"
                      + (dir / "ca.pem").string() + "' -CAkey '"
                      + (dir / "ca.key").string() + "' -set_serial 8 -days 5"
                      + " -extfile '" + ext + "' -out '" + cert + "'"));
  auto files = dirs->node("cluster", "alpha");
  files.certificate = cert;
  auto why = refusal(files);
  CHECK_THAT(why, Contains("as a TLS client: unsuitable certificate purpose"));
  CHECK_THAT(why, Contains("serverAuth,clientAuth"));
}

TEST_CASE("apply_tls sets the openssl options CAF's manager reads",
          "[tls][config]") {
  caf::actor_system_config cfg;
  cfg.openssl_passphrase = "left over";
  apply_tls(cfg, tls_files{"/c.pem", "/k.pem", "/ca.pem"});
  CHECK(cfg.openssl_certificate == "/c.pem");
  CHECK(cfg.openssl_key == "/k.pem");
  CHECK(cfg.openssl_cafile == "/ca.pem");
  CHECK(cfg.openssl_passphrase.empty());
  CHECK(cfg.openssl_capath.empty());
  CHECK(caf::get_or(cfg, "openssl.certificate", "") == "/c.pem");
  CHECK(caf::get_or(cfg, "openssl.cafile", "") == "/ca.pem");
  auto back = tls_files_from(cfg);
  CHECK(back.certificate == "/c.pem");
  CHECK(back.key == "/k.pem");
  CHECK(back.ca == "/ca.pem");
}

TEST_CASE("tls_files_from reads CAF's openssl options after parse",
          "[tls][config]") {
  caf::actor_system_config cfg;
  std::istringstream no_ini{""};
  auto err = cfg.parse(caf::actor_system_config::string_list{
                         "--openssl.certificate=/c.pem", "--openssl.key=/k.pem",
                         "--openssl.cafile=/ca.pem"},
                       no_ini);
  REQUIRE_FALSE(err);
  auto files = tls_files_from(cfg);
  CHECK(files.certificate == "/c.pem");
  CHECK(files.key == "/k.pem");
  CHECK(files.ca == "/ca.pem");
}

TEST_CASE("is_loopback knows 127/8, ::1 and localhost", "[tls][config]") {
  for (auto address : {"127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost",
                       "LocalHost", "::ffff:127.0.0.1"})
    CHECK(is_loopback(address));
  for (auto address : {"", "0.0.0.0", "::", "10.0.0.1", "192.168.1.7",
                       "128.0.0.1", "fe80::1", "example.org", "localhost.org"})
    CHECK_FALSE(is_loopback(address));
}
