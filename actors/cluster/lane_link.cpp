// A link's far-end stand-ins, its reader thread, and the execution unit on
// which that thread runs the actors its frames ready.
#include "actors/cluster/lane_link.hpp"

#include <algorithm>
#include <cstring>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/cluster/basp_header_check.hpp"
#include "actors/cluster/host_lanes.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

// How long a writer waits for room in a ring that its reader drains (a
// full ring means a reader that stopped: the link then closes), and how
// long a reader sleeps between checks that the writer's process lives.
constexpr auto write_patience = std::chrono::milliseconds(500);
constexpr auto read_patience = std::chrono::milliseconds(100);
// The actors of the far end a link stands for at most: each replica and
// shard that uses it is one.
constexpr size_t max_proxies = 4096;

// The bytes of a frame being written into a ring, as CAF's serializer
// writes into a container: past `room` it only counts, and the frame is
// abandoned.
class frame_bytes {
public:
  using value_type = char;

  frame_bytes(char* data, size_t room) : data_(data), room_(room) {}

  size_t size() const { return size_; }
  char* data() { return data_; }
  char* end() { return data_ + std::min(size_, room_); }
  bool overflowed() const { return size_ > room_; }

  void insert(char*, size_t count, char value) {
    if (size_ + count <= room_)
      std::memset(data_ + size_, value, count);
    size_ += count;
  }

  template <class Iterator>
  void insert(char*, Iterator first, Iterator last) {
    const auto count = static_cast<size_t>(std::distance(first, last));
    if (size_ + count <= room_)
      std::copy(first, last, data_ + size_);
    size_ += count;
  }

private:
  char* data_;
  size_t room_;
  size_t size_ = 0;
};

// The execution unit of a link's reader thread. The actor that a frame
// readies runs on that thread as soon as the frame is taken (run_ready);
// whatever that actor readies in turn goes to the scheduler. Units are
// never freed, only reused: an actor keeps a pointer to the unit that ran
// it last.
class reader_unit final : public caf::execution_unit {
public:
  static reader_unit* acquire(caf::actor_system& system);
  static void release(reader_unit* unit);

  // Called on the reader's thread only (CAF calls it from enqueue with this
  // unit, or from an actor this unit runs).
  void exec_later(caf::resumable* job) override {
    if (!running_ && ready_ == nullptr)
      ready_ = job;
    else
      system().scheduler().enqueue(job);
  }

  void run_ready();

private:
  caf::resumable* ready_ = nullptr;
  bool running_ = false;
};

std::mutex free_units_lock;
std::vector<reader_unit*>& free_units() {
  static auto* units = new std::vector<reader_unit*>; // never freed, as the units
  return *units;
}

reader_unit* reader_unit::acquire(caf::actor_system& system) {
  reader_unit* unit = nullptr;
  {
    std::lock_guard<std::mutex> guard{free_units_lock};
    if (!free_units().empty()) {
      unit = free_units().back();
      free_units().pop_back();
    }
  }
  if (unit == nullptr)
    unit = new reader_unit;
  unit->system_ = &system;
  return unit;
}

void reader_unit::release(reader_unit* unit) {
  std::lock_guard<std::mutex> guard{free_units_lock};
  free_units().push_back(unit);
}

// Runs the actor a delivery readied, as a scheduler worker would.
void reader_unit::run_ready() {
  auto* job = std::exchange(ready_, nullptr);
  if (job == nullptr)
    return;
  running_ = true;
  const auto result = job->resume(this, system().scheduler().max_throughput());
  running_ = false;
  if (result == caf::resumable::resume_later)
    system().scheduler().enqueue(job); // keeps the reference
  else
    intrusive_ptr_release(job);
}

// The link whose reader is this thread, and its unit, if it is one: a
// reader that runs an actor must not block on a full ring, or two readers
// writing to each other would wait on each other. It takes its own frames
// while it waits, unless it holds one (a frame stays in the ring until its
// delivery is done).
struct reading {
  const std::shared_ptr<lane_link>* link = nullptr;
  reader_unit* unit = nullptr;
  bool holding_frame = false;
};
thread_local reading this_reader;

void deliver(const std::shared_ptr<lane_link>& link, const shared_ring::frame& frame,
             caf::execution_unit* unit);

// This reader: takes the next frame of its inbox, waiting up to
// `patience`, and delivers it; false when none came.
bool take_frame(std::chrono::milliseconds patience) {
  const auto& link = *this_reader.link;
  auto frame = link->inbox->next(patience);
  if (frame.data == nullptr)
    return false;
  this_reader.holding_frame = true;
  deliver(link, frame, this_reader.unit);
  this_reader.holding_frame = false;
  link->inbox->consume();
  return true;
}

// Waits up to write_patience for room for a frame in `link`'s outbox; null
// when none came or the ring closed. A reader thread takes its own frames
// meanwhile.
char* reserve_frame(lane_link& link) {
  auto& ring = *link.outbox;
  if (this_reader.link == nullptr)
    return ring.reserve(link.largest_message, write_patience);
  const auto deadline = std::chrono::steady_clock::now() + write_patience;
  for (;;) {
    if (char* to = ring.try_reserve(link.largest_message))
      return to;
    if (ring.closed() || std::chrono::steady_clock::now() >= deadline)
      return nullptr;
    if (!this_reader.holding_frame && (*this_reader.link)->inbox->has_frame())
      take_frame(std::chrono::milliseconds(0));
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// Stands here for an actor of the peer: what it is sent goes into the
// link's outbox; what does not fit, or finds the ring closed, goes to
// `fallback` (the middleman's proxy of the same actor) when there is one,
// and a request otherwise fails at once.
class lane_proxy final : public caf::monitorable_actor {
public:
  lane_proxy(caf::actor_config& cfg, std::shared_ptr<lane_link> link,
             caf::strong_actor_ptr fallback)
    : caf::monitorable_actor(cfg), link_(std::move(link)), fallback_(std::move(fallback)) {}

  void enqueue(caf::mailbox_element_ptr what, caf::execution_unit* host) override {
    if (what->stages.empty() && write(*what))
      return;
    if (fallback_) {
      fallback_->enqueue(std::move(what), host);
      return;
    }
    if (what->mid.is_request() && what->sender)
      what->sender->enqueue(
        caf::make_mailbox_element(nullptr, what->mid.response_id(), {},
                                  caf::make_message(make_troupe_error(
                                    troupe_errc::link_lost,
                                    "the lane to a process of this host is closed"))),
        host);
  }

  const char* name() const override { return "lane_proxy"; }

private:
  // Serializes `what` into the ring in place; false (nothing written) when
  // it does not fit or the ring is closed or full.
  bool write(caf::mailbox_element& what) {
    auto& ring = *link_->outbox;
    char* to = reserve_frame(*link_);
    if (to == nullptr) {
      ring.close(); // its reader stopped reading: every later write fails at once
      return false;
    }
    frame_bytes bytes{to, link_->largest_message};
    lane_frame_head head{id(), what.sender ? what.sender->id() : 0, what.mid.integer_value()};
    bytes.insert(bytes.end(), reinterpret_cast<const char*>(&head),
                 reinterpret_cast<const char*>(&head) + sizeof head);
    caf::serializer_impl<frame_bytes> sink{home_system(), bytes};
    if (caf::message::save(sink, what.content()) || bytes.overflowed()) {
      ring.abandon();
      return false;
    }
    ring.commit(bytes.size());
    return true;
  }

  std::shared_ptr<lane_link> link_;
  caf::strong_actor_ptr fallback_;
};

// Delivers one frame read from `link`'s inbox to its receiver here, with
// `unit` as the execution unit that runs the receiver if it waits.
void deliver_unchecked(const std::shared_ptr<lane_link>& link, const shared_ring::frame& frame,
                       caf::execution_unit* unit) {
  lane_frame_head head{};
  if (frame.size < sizeof head)
    return;
  std::memcpy(&head, frame.data, sizeof head);
  if (is_stream_message(head.mid))
    return;
  caf::message content;
  caf::binary_deserializer source{*link->system, frame.data + sizeof head,
                                  frame.size - sizeof head};
  if (source(content))
    return; // malformed: dropped, as the middleman drops what it cannot read
  auto target = link->system->registry().get(static_cast<caf::actor_id>(head.target));
  caf::strong_actor_ptr sender;
  if (head.sender != 0)
    sender = link->proxy_for(link, static_cast<caf::actor_id>(head.sender), nullptr);
  const caf::message_id mid{head.mid};
  if (!target) {
    if (mid.is_request() && sender)
      sender->enqueue(caf::make_mailbox_element(
                        nullptr, mid.response_id(), {},
                        caf::make_message(caf::make_error(caf::sec::request_receiver_down))),
                      nullptr);
    return;
  }
  target->enqueue(caf::make_mailbox_element(std::move(sender), mid, {}, std::move(content)),
                  unit);
}

void deliver(const std::shared_ptr<lane_link>& link, const shared_ring::frame& frame,
             caf::execution_unit* unit) {
  try {
    deliver_unchecked(link, frame, unit);
  } catch (...) { // a frame CAF could not hold (an allocation it announced)
    link->inbox->close();
  }
}

} // namespace

void read_lane(std::shared_ptr<lane_link> link) {
  auto* unit = reader_unit::acquire(*link->system);
  this_reader = reading{&link, unit};
  while (!link->stopping) {
    if (take_frame(read_patience))
      unit->run_ready();
    else if (link->inbox->closed() || !link->inbox->writer_alive())
      break;
  }
  this_reader = reading{};
  reader_unit::release(unit);
  link->inbox->close();
  link->outbox->close();
  link->ended = true;
}

caf::strong_actor_ptr lane_link::proxy_for(const std::shared_ptr<lane_link>& self,
                                           caf::actor_id id, caf::strong_actor_ptr fallback) {
  std::lock_guard<std::mutex> guard{proxies_lock};
  if (auto found = proxies.find(id); found != proxies.end())
    if (auto proxy = found->second.lock())
      return proxy;
  if (proxies.size() >= max_proxies)
    for (auto it = proxies.begin(); it != proxies.end();)
      it = it->second.lock() ? std::next(it) : proxies.erase(it);
  if (proxies.size() >= max_proxies)
    return nullptr; // a frame's sender: it goes without one
  caf::actor_config config;
  auto proxy = caf::make_actor<lane_proxy, caf::strong_actor_ptr>(id, peer, system, config, self,
                                                                  std::move(fallback));
  proxies[id] = caf::weak_actor_ptr{proxy.get()};
  return proxy;
}

} // namespace troupe::detail
