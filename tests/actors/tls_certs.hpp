// Certificates for the TLS tests, made once per test binary by
// scripts/make_certs.sh: "cluster" (a CA, alpha and beta) and "rogue"
// (another CA and mallory). Needs Catch2 and the openssl command.
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <stdlib.h>

#include "actors/cluster/tls.hpp"

namespace troupe::testing {

inline std::filesystem::path script_path() {
#ifdef TROUPE_TEST_DATA_DIR
  return std::filesystem::path{TROUPE_TEST_DATA_DIR} / ".." / ".." / "scripts"
         / "make_certs.sh";
#else
  return std::filesystem::path{__FILE__}.parent_path() / ".." / ".." / "scripts"
         / "make_certs.sh";
#endif
}

inline bool have_openssl_cli() {
  return std::system("command -v openssl >/dev/null 2>&1") == 0;
}

inline bool run_quietly(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// The two clusters' files, removed when the test binary exits.
struct cert_dirs {
  std::filesystem::path root;
  bool ready = false;

  cert_dirs() {
    if (!have_openssl_cli())
      return;
    char name[] = "/tmp/troupe_tls_XXXXXX";
    if (::mkdtemp(name) == nullptr)
      return;
    root = name;
    auto script = script_path().string();
    ready = run_quietly("'" + script + "' '" + (root / "cluster").string()
                        + "' alpha beta")
            && run_quietly("'" + script + "' '" + (root / "rogue").string()
                           + "' mallory");
  }

  ~cert_dirs() {
    std::error_code ignored;
    if (!root.empty())
      std::filesystem::remove_all(root, ignored);
  }

  std::string path(const std::string& cluster, const std::string& file) const {
    return (root / cluster / file).string();
  }

  tls_files node(const std::string& cluster, const std::string& name) const {
    return tls_files{path(cluster, name + ".pem"), path(cluster, name + ".key"),
                     path(cluster, "ca.pem")};
  }
};

inline const cert_dirs* certs() {
  static cert_dirs dirs;
  return dirs.ready ? &dirs : nullptr;
}

// Skips a test, loudly, where the certificates cannot be made.
#define REQUIRE_CERTS(var)                                                     \
  const cert_dirs* var = certs();                                              \
  if (var == nullptr) {                                                        \
    WARN("SKIP: the openssl command is missing or scripts/make_certs.sh "      \
         "failed; TLS tests did not run");                                     \
    return;                                                                    \
  }

inline std::string write_file(const cert_dirs& dirs, const std::string& name,
                       const std::string& text) {
  auto path = dirs.root / name;
  std::ofstream{path} << text;
  return path.string();
}

} // namespace troupe::testing
