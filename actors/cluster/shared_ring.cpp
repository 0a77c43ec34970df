// The shared-memory ring: frames of [length][bytes], 8-byte aligned, in a
// circle of `capacity` bytes after the header; a frame that would cross the
// end starts at 0 instead, after a wrap mark. `written` and `read` count
// bytes since the start and only grow; the reader sleeps on `sleeping`
// (1 while it waits), which the writer clears as it wakes it.
#include "actors/cluster/shared_ring.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <random>
#include <thread>

#include <fcntl.h>
#include <signal.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

constexpr uint64_t ring_magic = 0x31474e4952505254; // "TRPRING1"
constexpr uint32_t wrap_mark = UINT32_MAX;
constexpr size_t frame_head = 8; // the length, then 4 bytes of padding
constexpr size_t min_capacity = 4096;

size_t aligned(size_t bytes) { return (bytes + 7) & ~size_t{7}; }

long futex(std::atomic<uint32_t>* word, int op, uint32_t value, const timespec* timeout) {
  return syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), op, value, timeout, nullptr, 0);
}

caf::error ring_error(const std::string& what) {
  return make_troupe_error(troupe_errc::link_lost,
                           "shared-memory ring: " + what + ": " + std::strerror(errno));
}

} // namespace

struct ring_header {
  uint64_t magic;
  uint64_t capacity; // bytes of frames after the header
  alignas(64) std::atomic<uint64_t> written;
  alignas(64) std::atomic<uint64_t> read;
  alignas(64) std::atomic<uint32_t> sleeping; // 1 while the reader waits
  std::atomic<uint32_t> closed;
  std::atomic<int32_t> writer_pid; // 0 until the writer opened the ring
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<uint32_t>::is_always_lock_free);

shared_ring::shared_ring(std::string name, void* map, size_t map_size, bool reader)
  : name_(std::move(name)),
    header_(static_cast<ring_header*>(map)),
    data_(static_cast<char*>(map) + sizeof(ring_header)),
    map_size_(map_size),
    capacity_(map_size - sizeof(ring_header)),
    reader_(reader) {}

shared_ring::~shared_ring() {
  unlink();
  munmap(header_, map_size_);
}

caf::expected<std::unique_ptr<shared_ring>> shared_ring::create(size_t capacity) {
  capacity = aligned(capacity);
  if (capacity < min_capacity)
    return make_troupe_error(troupe_errc::bad_config,
                             "a ring of " + std::to_string(capacity) + " bytes, under "
                               + std::to_string(min_capacity));
  std::random_device random;
  const std::string name = "/troupe-ring-" + std::to_string(getpid()) + "-"
                           + std::to_string((uint64_t{random()} << 32) | random());
  const int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    return ring_error("cannot create " + name);
  const size_t map_size = sizeof(ring_header) + capacity;
  // Every page taken now: a write to a page /dev/shm has no room for would
  // be a SIGBUS later (a container's /dev/shm is often 64 MiB).
  void* map = MAP_FAILED;
  const int taken = posix_fallocate(fd, 0, static_cast<off_t>(map_size));
  if (taken == 0)
    map = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  else
    errno = taken;
  const auto failed =
    map == MAP_FAILED ? ring_error("cannot take " + std::to_string(map_size) + " bytes for "
                                   + name + " in /dev/shm")
                      : caf::error{};
  ::close(fd);
  if (failed) {
    shm_unlink(name.c_str());
    return failed;
  }
  new (map) ring_header{ring_magic, capacity, {0}, {0}, {0}, {0}, {0}};
  return std::unique_ptr<shared_ring>(new shared_ring(name, map, map_size, true));
}

caf::expected<std::unique_ptr<shared_ring>> shared_ring::open(const std::string& name,
                                                              size_t capacity) {
  if (aligned(capacity) < min_capacity || capacity > SIZE_MAX / 2)
    return make_troupe_error(troupe_errc::bad_config,
                             "a ring of " + std::to_string(capacity) + " bytes");
  if (name.rfind("/troupe-ring-", 0) != 0 || name.find('/', 1) != std::string::npos)
    return make_troupe_error(troupe_errc::bad_config, "not a ring's name: " + name);
  const int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0)
    return ring_error("cannot open " + name);
  const size_t map_size = sizeof(ring_header) + aligned(capacity);
  struct stat info {};
  if (fstat(fd, &info) != 0 || static_cast<size_t>(info.st_size) != map_size
      || info.st_uid != geteuid()) {
    ::close(fd);
    return make_troupe_error(troupe_errc::bad_config,
                             name + " is not a ring of " + std::to_string(capacity)
                               + " bytes of this user");
  }
  void* map = mmap(nullptr, map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED)
    return ring_error("cannot map " + name);
  const auto* header = static_cast<const ring_header*>(map);
  if (header->magic != ring_magic || header->capacity != map_size - sizeof(ring_header)) {
    munmap(map, map_size);
    return make_troupe_error(troupe_errc::bad_config, name + " is not a ring of this build");
  }
  shm_unlink(name.c_str()); // both sides have it now
  static_cast<ring_header*>(map)->writer_pid.store(getpid(), std::memory_order_release);
  return std::unique_ptr<shared_ring>(new shared_ring("", map, map_size, false));
}

void shared_ring::unlink() {
  if (!name_.empty())
    shm_unlink(name_.c_str());
  name_.clear();
}

size_t shared_ring::max_frame() const {
  return capacity_ / 2 - frame_head;
}

bool shared_ring::write(const void* data, size_t bytes, std::chrono::milliseconds patience) {
  char* to = reserve(bytes, patience);
  if (to == nullptr)
    return false;
  std::memcpy(to, data, bytes);
  commit(bytes);
  return !closed();
}

char* shared_ring::reserve(size_t bytes, std::chrono::milliseconds patience) {
  if (reader_ || bytes > max_frame())
    return nullptr;
  write_lock_.lock();
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (!fits(bytes)) {
    if (closed() || std::chrono::steady_clock::now() >= deadline) {
      write_lock_.unlock();
      return nullptr;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50)); // the reader drains it
  }
  return place(bytes);
}

char* shared_ring::try_reserve(size_t bytes) {
  if (reader_ || bytes > max_frame() || closed() || !write_lock_.try_lock())
    return nullptr;
  if (!fits(bytes)) {
    write_lock_.unlock();
    return nullptr;
  }
  return place(bytes);
}

// With the writer's lock: says whether a frame of `bytes` bytes fits now,
// and notes whether it must skip the ring's end to start at 0.
bool shared_ring::fits(size_t bytes) {
  const uint64_t at = written_;
  const uint64_t tail = capacity_ - at % capacity_; // bytes to the end, a multiple of 8
  skipped_ = tail < frame_head + aligned(bytes) ? tail : 0;
  const uint64_t need = skipped_ + frame_head + aligned(bytes);
  return at + need - header_->read.load(std::memory_order_acquire) <= capacity_;
}

// With the writer's lock, after fits(): reserves the frame and returns where
// its bytes go.
char* shared_ring::place(size_t bytes) {
  const uint64_t offset = written_ % capacity_;
  if (skipped_ > 0)
    std::memcpy(data_ + offset, &wrap_mark, sizeof wrap_mark);
  reserved_at_ = written_;
  reserved_ = bytes;
  return data_ + (skipped_ > 0 ? 0 : offset) + frame_head;
}

void shared_ring::commit(size_t bytes) {
  bytes = std::min(bytes, reserved_);
  const uint64_t start = (reserved_at_ + skipped_) % capacity_;
  const auto length = static_cast<uint32_t>(bytes);
  std::memcpy(data_ + start, &length, sizeof length);
  written_ = reserved_at_ + skipped_ + frame_head + aligned(bytes);
  header_->written.store(written_, std::memory_order_seq_cst);
  write_lock_.unlock();
  wake_reader();
}

void shared_ring::abandon() {
  write_lock_.unlock();
}

// Clears the reader's sleeping word before the wake-up: a reader about to
// wait then finds it cleared and does not sleep, where a wake-up that came
// before its wait alone would be lost.
void shared_ring::wake_reader() {
  if (header_->sleeping.exchange(0, std::memory_order_seq_cst) != 0)
    futex(&header_->sleeping, FUTEX_WAKE, 1, nullptr);
}

// Waits up to `patience` for `written` to move past `at`; returns it. A
// wake-up may come early (a writer's wake-up for a frame already read, a
// signal), so it sleeps again until the deadline.
uint64_t shared_ring::wait_for_frame(uint64_t at, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    uint64_t written = header_->written.load(std::memory_order_acquire);
    if (written != at || closed())
      return written;
    const auto left = deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero())
      return written;
    header_->sleeping.store(1, std::memory_order_seq_cst);
    written = header_->written.load(std::memory_order_seq_cst);
    if (written == at && !closed()) {
      const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(left).count();
      timespec timeout{static_cast<time_t>(nanos / 1000000000),
                       static_cast<long>(nanos % 1000000000)};
      futex(&header_->sleeping, FUTEX_WAIT, 1, &timeout);
    }
    header_->sleeping.store(0, std::memory_order_relaxed);
  }
}

// Every count and length read from the shared header is the writer's word:
// checked against this side's own read position and capacity before use.
shared_ring::frame shared_ring::next(std::chrono::milliseconds patience) {
  uint64_t at = read_pos_;
  const uint64_t written = wait_for_frame(at, patience);
  if (written == at || closed())
    return {};
  const auto malformed = [this]() {
    close();
    return frame{};
  };
  if (written - at > capacity_ || written % 8 != 0)
    return malformed();
  uint64_t offset = at % capacity_;
  uint32_t length = 0;
  std::memcpy(&length, data_ + offset, sizeof length);
  if (length == wrap_mark) { // the frame starts at 0
    at += capacity_ - offset;
    offset = 0;
    if (at >= written)
      return malformed();
    std::memcpy(&length, data_, sizeof length);
  }
  const uint64_t end = at + frame_head + aligned(length);
  if (length > max_frame() || end > written || offset + frame_head + length > capacity_)
    return malformed();
  frame_end_ = end;
  return {data_ + offset + frame_head, length};
}

void shared_ring::consume() {
  if (frame_end_ == 0)
    return;
  read_pos_ = frame_end_;
  header_->read.store(frame_end_, std::memory_order_release);
  frame_end_ = 0;
}

bool shared_ring::has_frame() const {
  return header_->written.load(std::memory_order_acquire) != read_pos_ && !closed();
}

void shared_ring::close() {
  header_->closed.store(1, std::memory_order_seq_cst);
  wake_reader();
}

bool shared_ring::writer_alive() const {
  const int32_t pid = header_->writer_pid.load(std::memory_order_acquire);
  return pid <= 0 || ::kill(pid, 0) == 0 || errno != ESRCH;
}

bool shared_ring::closed() const {
  return header_->closed.load(std::memory_order_seq_cst) != 0;
}

} // namespace troupe::detail
