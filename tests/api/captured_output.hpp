// What a piece of code writes to the process's standard output (and, asked
// for, its standard error), through a file the streams point to meanwhile.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

namespace api_fixture {

/// Runs `body` with stdout (and stderr when `with_stderr`) going to the file
/// `path`, and returns what was written there.
template <class Body>
std::string captured_output(const std::string& path, bool with_stderr, Body body) {
  std::fflush(stdout);
  std::fflush(stderr);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int saved_out = ::dup(STDOUT_FILENO);
  const int saved_err = ::dup(STDERR_FILENO);
  ::dup2(file, STDOUT_FILENO);
  if (with_stderr)
    ::dup2(file, STDERR_FILENO);
  body();
  std::fflush(stdout);
  std::fflush(stderr);
  ::dup2(saved_out, STDOUT_FILENO);
  ::dup2(saved_err, STDERR_FILENO);
  ::close(saved_out);
  ::close(saved_err);
  ::close(file);
  std::ifstream in{path};
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

} // namespace api_fixture
