// A one-way ring of frames in shared memory between two processes of one
// host: one writer (whose threads take turns under a lock of its own), one
// reader, which sleeps on a futex in the ring when it is empty. The reader
// creates the ring; the writer opens it by name, and the name is unlinked
// as soon as both have it mapped, so nothing is left behind when either
// process dies. Everything read from a ring is untrusted: frame lengths are
// checked against the ring, and a malformed one closes it.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include <caf/expected.hpp>

namespace troupe::detail {

struct ring_header; // shared_ring.cpp

/// Maps one ring; the side that created it reads, the side that opened it writes.
class shared_ring {
public:
  /// Creates a ring of `capacity` bytes of frames (4 KiB at least) under a
  /// fresh name (mode 0600), for this process to read.
  static caf::expected<std::unique_ptr<shared_ring>> create(size_t capacity);

  /// Opens the ring of `capacity` bytes created under `name` (one of
  /// another size or owner is refused), for this process to write, and
  /// unlinks the name.
  static caf::expected<std::unique_ptr<shared_ring>> open(const std::string& name,
                                                          size_t capacity);

  ~shared_ring();
  shared_ring(const shared_ring&) = delete;
  shared_ring& operator=(const shared_ring&) = delete;

  /// The name the writer opens; empty once unlinked.
  const std::string& name() const { return name_; }

  /// Unlinks the name (the mapping stays).
  void unlink();

  /// Returns the largest frame write() takes.
  size_t max_frame() const;

  /// Writer: copies `bytes` bytes from `data` in as one frame, waiting up to
  /// `patience` for room; false when the frame is too large, the ring is
  /// closed or full past the wait.
  bool write(const void* data, size_t bytes, std::chrono::milliseconds patience);

  /// Writer: waits up to `patience` for room for a frame of up to `bytes`
  /// bytes and returns where to write it, holding the writer's lock until
  /// commit() or abandon(); null as write() fails.
  char* reserve(size_t bytes, std::chrono::milliseconds patience);

  /// Writer: reserve() without a wait, for a thread that must not block
  /// (it drains another ring in the meantime): null when the frame does not
  /// fit now, another thread of this side is writing, or the ring is closed.
  char* try_reserve(size_t bytes);

  /// Writer: publishes the first `bytes` bytes of the reservation as a frame.
  void commit(size_t bytes);

  /// Writer: lets the reservation go unwritten.
  void abandon();

  /// Reader: waits up to `patience` for the next frame and returns it, in
  /// place, until consume(); {nullptr, 0} when none came. A malformed frame
  /// closes the ring and returns {nullptr, 0}.
  struct frame {
    const char* data = nullptr;
    size_t size = 0;
  };
  frame next(std::chrono::milliseconds patience);

  /// Reader: releases the frame next() returned.
  void consume();

  /// Reader: says whether a frame is waiting, without a wait.
  bool has_frame() const;

  /// Says whether `f` lies inside this side's mapping of the ring's frames.
  bool contains(const frame& f) const {
    return f.data >= data_ && f.size <= capacity_
           && static_cast<size_t>(f.data - data_) <= capacity_ - f.size;
  }

  /// Closes the ring for both sides: writes fail, a sleeping reader wakes.
  void close();

  /// Says whether close() was called on either side, or a frame was malformed.
  bool closed() const;

  /// Reader: says whether the writer's process lives (true before it opened the ring).
  bool writer_alive() const;

private:
  shared_ring(std::string name, void* map, size_t map_size, bool reader);

  std::string name_;
  ring_header* header_ = nullptr;
  char* data_ = nullptr;
  size_t map_size_ = 0;
  uint64_t capacity_ = 0; // of the mapping; never read back from the shared header
  bool reader_ = false;
  uint64_t wait_for_frame(uint64_t at, std::chrono::milliseconds patience);
  bool fits(size_t bytes);
  char* place(size_t bytes);
  void wake_reader();

  uint64_t read_pos_ = 0;  // reader: bytes consumed
  uint64_t frame_end_ = 0; // reader: where the frame next() returned ends
  uint64_t written_ = 0;   // writer: bytes published
  std::mutex write_lock_;
  // writer, between reserve() and commit(): where the frame starts (counted
  // as `written` counts), and the ring's end it skipped to start at 0
  uint64_t reserved_at_ = 0;
  uint64_t skipped_ = 0;
  size_t reserved_ = 0;
};

} // namespace troupe::detail
