// The shared-memory ring under the host lanes: frames from another process
// arrive whole and in order across the ring's end, its name is gone once
// both sides have it, and whatever a writer scribbles over the shared
// memory makes the reader close the ring, never read outside it; a reader
// woken early (by a signal) waits on for the frame.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <thread>
#include <vector>

#include "actors/cluster/shared_ring.hpp"

using namespace troupe::detail;
using namespace std::chrono_literals;

namespace {

// Frame i: (i % 97 + 1) * 1000 bytes, each byte (i + k) % 251.
std::vector<char> frame_bytes(size_t i) {
  std::vector<char> bytes((i % 97 + 1) * 1000);
  for (size_t k = 0; k < bytes.size(); ++k)
    bytes[k] = static_cast<char>((i + k) % 251);
  return bytes;
}

bool name_exists(const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDONLY, 0);
  if (fd < 0)
    return false;
  close(fd);
  return true;
}

} // namespace

TEST_CASE("frames a child process writes arrive whole and in order across the ring's end, "
          "and the ring's name is gone once it is open",
          "[wire][lanes]") {
  auto reader = shared_ring::create(256 * 1024);
  REQUIRE(reader);
  const std::string name = (*reader)->name();
  REQUIRE(name_exists(name));
  constexpr size_t frames = 400; // about 20 MB through a ring of 256 KiB
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto writer = shared_ring::open(name, 256 * 1024);
    if (!writer)
      _exit(2);
    for (size_t i = 0; i < frames; ++i) {
      const auto bytes = frame_bytes(i);
      if (!(*writer)->write(bytes.data(), bytes.size(), 5000ms))
        _exit(3);
    }
    _exit(0);
  }
  for (size_t i = 0; i < frames; ++i) {
    INFO("frame " << i);
    auto frame = (*reader)->next(5000ms);
    REQUIRE(frame.data != nullptr);
    const auto expected = frame_bytes(i);
    REQUIRE(frame.size == expected.size());
    CHECK(std::memcmp(frame.data, expected.data(), frame.size) == 0);
    (*reader)->consume();
    if (i == 0)
      CHECK_FALSE(name_exists(name)); // the writer unlinked it as it opened it
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK((*reader)->next(10ms).data == nullptr);
}

TEST_CASE("a ring of another size is not opened, a frame larger than half the ring is "
          "refused, a full ring refuses once its wait ends, and a closed ring takes no more",
          "[wire][lanes]") {
  auto reader = shared_ring::create(64 * 1024);
  REQUIRE(reader);
  // A ring of another size than announced is refused, and its name kept.
  CHECK_FALSE(shared_ring::open((*reader)->name(), 1 << 30));
  CHECK(name_exists((*reader)->name()));
  auto writer = shared_ring::open((*reader)->name(), 64 * 1024);
  REQUIRE(writer);
  std::vector<char> big((*writer)->max_frame() + 1);
  CHECK_FALSE((*writer)->write(big.data(), big.size(), 10ms));
  big.resize((*writer)->max_frame());
  CHECK((*writer)->write(big.data(), big.size(), 10ms));
  CHECK((*writer)->write(big.data(), big.size(), 10ms));
  // Full: the reader has taken neither frame, and the writer's wait ends.
  CHECK_FALSE((*writer)->write(big.data(), big.size(), 10ms));
  (*reader)->close();
  CHECK((*writer)->closed());
  const char one = 1;
  CHECK_FALSE((*writer)->write(&one, 1, 10ms));
  CHECK((*reader)->next(10ms).data == nullptr);
}

TEST_CASE("a writer that scribbles over the shared memory makes the reader close the ring "
          "or read frames inside it, never more",
          "[wire][lanes][fuzz]") {
  std::mt19937_64 random{20261205};
  size_t closed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    INFO("trial " << trial);
    auto reader = shared_ring::create(16 * 1024);
    REQUIRE(reader);
    const std::string name = (*reader)->name();
    // The scribbler maps the ring as raw memory, as a hostile process could.
    const int fd = shm_open(name.c_str(), O_RDWR, 0);
    REQUIRE(fd >= 0);
    const size_t size = static_cast<size_t>(lseek(fd, 0, SEEK_END));
    auto* map = static_cast<unsigned char*>(
      mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    close(fd);
    REQUIRE(map != MAP_FAILED);
    auto writer = shared_ring::open(name, 16 * 1024);
    REQUIRE(writer);
    const char hello[] = "a frame before the scribbles";
    REQUIRE((*writer)->write(hello, sizeof hello, 10ms));
    const int scribbles = 1 + static_cast<int>(random() % 64);
    for (int k = 0; k < scribbles; ++k) {
      const size_t at = random() % size;
      const size_t width = 1 + random() % 8;
      for (size_t b = 0; b < width && at + b < size; ++b)
        map[at + b] = static_cast<unsigned char>(random());
    }
    for (int reads = 0; reads < 8; ++reads) {
      auto frame = (*reader)->next(1ms);
      if (frame.data == nullptr)
        break;
      CHECK((*reader)->contains(frame));
      (*reader)->consume();
    }
    closed += (*reader)->closed() ? 1 : 0;
    munmap(map, size);
  }
  CHECK(closed > 0); // some scribbles are caught as malformed frames
}

TEST_CASE("a ring /dev/shm has no room for is refused as it is made, not a SIGBUS later",
          "[wire][lanes]") {
  // A container's /dev/shm is often 64 MiB: here a child process mounts a
  // 1 MiB one of its own (root only) and makes rings in it.
  if (geteuid() != 0) {
    WARN("skipped: mounting a small /dev/shm needs root");
    return;
  }
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    if (unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0
        || mount("tmpfs", "/dev/shm", "tmpfs", 0, "size=1m") != 0)
      _exit(10);
    if (shared_ring::create(4 << 20))
      _exit(3); // taken without room: its pages would fault later
    auto reader = shared_ring::create(512 << 10);
    if (!reader)
      _exit(4);
    auto writer = shared_ring::open((*reader)->name(), 512 << 10);
    if (!writer)
      _exit(5);
    std::vector<char> bytes((*writer)->max_frame(), 7);
    for (int round = 0; round < 8; ++round) { // every page of the ring, twice over
      if (!(*writer)->write(bytes.data(), bytes.size(), 1000ms))
        _exit(6);
      if ((*reader)->next(1000ms).data == nullptr)
        _exit(7);
      (*reader)->consume();
    }
    _exit(0);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status)); // not killed by SIGBUS
  if (WEXITSTATUS(status) == 10) {
    WARN("skipped: this machine does not let a process mount its own /dev/shm");
    return;
  }
  INFO("child exit code " << WEXITSTATUS(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("a reader woken early by a signal waits on for the frame that comes within its "
          "patience",
          "[wire][lanes]") {
  auto reader = shared_ring::create(64 * 1024);
  REQUIRE(reader);
  auto writer = shared_ring::open((*reader)->name(), 64 * 1024);
  REQUIRE(writer);
  struct sigaction wake_only {};
  wake_only.sa_handler = [](int) {};
  struct sigaction before {};
  REQUIRE(sigaction(SIGUSR1, &wake_only, &before) == 0);
  std::promise<pthread_t> started;
  auto got = std::async(std::launch::async, [&]() {
    started.set_value(pthread_self());
    const auto frame = (*reader)->next(10000ms);
    return std::string(frame.data == nullptr ? "" : std::string(frame.data, frame.size));
  });
  const pthread_t waiting = started.get_future().get();
  for (int k = 0; k < 5; ++k) { // interrupts the futex sleep, whichever moment it began
    std::this_thread::sleep_for(20ms);
    REQUIRE(pthread_kill(waiting, SIGUSR1) == 0);
  }
  const std::string text = "after the signals";
  REQUIRE((*writer)->write(text.data(), text.size(), 1000ms));
  CHECK(got.get() == text);
  sigaction(SIGUSR1, &before, nullptr);
}
