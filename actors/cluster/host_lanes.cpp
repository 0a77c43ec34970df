// Links between processes of one host: their rings, the actors that stand
// for the far end, and the reader threads that deliver.
#include "actors/cluster/host_lanes.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <thread>
#include <unordered_map>

#include <caf/all.hpp>

#include "actors/cluster/basp_header_check.hpp"
#include "actors/cluster/shared_ring.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

// How long a writer waits for room in a ring that its reader drains (a
// full ring means a reader that stopped: the link then closes), how long
// a reader sleeps between checks that the writer's process lives, and how
// many links a process holds at most.
constexpr auto write_patience = std::chrono::milliseconds(500);
constexpr auto read_patience = std::chrono::milliseconds(100);
constexpr size_t max_links = 64;
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

std::mutex lanes_lock;
std::map<const caf::actor_system*, host_lanes*>& all_lanes() {
  static std::map<const caf::actor_system*, host_lanes*> lanes;
  return lanes;
}

} // namespace

/// Two rings with one peer process, and the actors that stand for its
/// actors here.
struct lane_link {
  caf::actor_system* system = nullptr;
  caf::node_id peer;
  std::shared_ptr<shared_ring> inbox;  // read here
  std::unique_ptr<shared_ring> outbox; // written here
  size_t largest_message = 0;          // the largest frame a proxy reserves
  std::thread reader;
  std::atomic<bool> stopping{false};
  std::atomic<bool> ended{false}; // the reader returned
  std::mutex proxies_lock;
  // Held by whoever sends through them (a replica's routes, a pending
  // answer's promise), so a node serving job after job keeps none of a job
  // that ended.
  std::unordered_map<caf::actor_id, caf::weak_actor_ptr> proxies;

  /// Returns the actor that stands for the peer's actor `id` here; null
  /// when max_proxies of them are in use.
  caf::strong_actor_ptr proxy_for(const std::shared_ptr<lane_link>& self, caf::actor_id id,
                                  caf::strong_actor_ptr fallback);
};

namespace {

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
    char* to = ring.reserve(link_->largest_message, write_patience);
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

// Delivers one frame read from `link`'s inbox to its receiver here.
void deliver(const std::shared_ptr<lane_link>& link, const shared_ring::frame& frame) {
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
                  nullptr);
}

// Delivers what `link`'s inbox brings until the hub stops it, the ring
// closes, or the writer's process is gone (both rings close then).
void read_lane(std::shared_ptr<lane_link> link) {
  while (!link->stopping) {
    auto frame = link->inbox->next(read_patience);
    if (frame.data == nullptr) {
      if (link->inbox->closed() || !link->inbox->writer_alive())
        break;
      continue;
    }
    try {
      deliver(link, frame);
    } catch (...) { // a frame CAF could not hold (an allocation it announced)
      link->inbox->close();
    }
    link->inbox->consume();
  }
  link->inbox->close();
  link->outbox->close();
  link->ended = true;
}

uint64_t inode_of(const char* path) {
  struct stat info {};
  return stat(path, &info) == 0 ? static_cast<uint64_t>(info.st_ino) : 0;
}

} // namespace

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

host_lanes::host_lanes(caf::actor_system& system, uint64_t max_capacity)
  : system_(system), max_capacity_(max_capacity) {
  std::lock_guard<std::mutex> guard{lanes_lock};
  all_lanes()[&system] = this;
}

host_lanes::~host_lanes() {
  {
    std::lock_guard<std::mutex> guard{lanes_lock};
    all_lanes().erase(&system_);
  }
  std::lock_guard<std::mutex> guard{lock_};
  for (auto& link : links_) {
    link->stopping = true;
    link->inbox->close();
    if (link->reader.joinable())
      link->reader.join();
  }
}

host_lanes* host_lanes::of(const caf::actor_system& system) {
  std::lock_guard<std::mutex> guard{lanes_lock};
  const auto found = all_lanes().find(&system);
  return found == all_lanes().end() ? nullptr : found->second;
}

std::string host_lanes::host_key() {
  std::string boot;
  std::ifstream{"/proc/sys/kernel/random/boot_id"} >> boot;
  return boot + "/" + std::to_string(geteuid()) + "/"
         + std::to_string(inode_of("/proc/self/ns/net")) + "/"
         + std::to_string(inode_of("/proc/self/ns/mnt"));
}

uint64_t host_lanes::capacity_for(size_t largest_message) {
  // Room for a few messages in flight: one per replica of a node, each to
  // the same shard, before the reader takes the first.
  return 4 * uint64_t{largest_message} + (uint64_t{1} << 20);
}

size_t host_lanes::links() const {
  std::lock_guard<std::mutex> guard{lock_};
  return links_.size();
}

// Joins the readers of links whose peer is gone (the caller holds lock_).
void host_lanes::reap_ended() {
  for (auto it = links_.begin(); it != links_.end();) {
    if (!(*it)->ended) {
      ++it;
      continue;
    }
    if ((*it)->reader.joinable())
      (*it)->reader.join();
    it = links_.erase(it); // a route still held keeps it, and falls back
  }
}

void host_lanes::start(const std::shared_ptr<lane_link>& link) {
  link->largest_message = link->outbox->max_frame() / 2;
  link->reader = std::thread{read_lane, link};
  links_.push_back(link);
  std::fprintf(stderr, "troupe: a shared-memory lane to another process of this host is open\n");
}

caf::strong_actor_ptr host_lanes::existing_route(const caf::strong_actor_ptr& target,
                                                 size_t largest_message) {
  std::lock_guard<std::mutex> guard{lock_};
  reap_ended();
  for (const auto& link : links_)
    if (link->peer == target->node() && link->largest_message >= largest_message
        && !link->outbox->closed())
      return link->proxy_for(link, target->id(), target);
  return nullptr;
}

bool host_lanes::may_ask(const caf::strong_actor_ptr& target) const {
  std::lock_guard<std::mutex> guard{lock_};
  return target && target->node() != system_.node()
         && std::find(refused_.begin(), refused_.end(), target->node()) == refused_.end();
}

void host_lanes::refused(const caf::node_id& peer) {
  std::lock_guard<std::mutex> guard{lock_};
  refused_.push_back(peer);
}

caf::expected<lane_offer> host_lanes::offer(size_t largest_message) {
  const uint64_t capacity = capacity_for(largest_message);
  auto inbox = shared_ring::create(capacity);
  if (!inbox)
    return inbox.error();
  lane_offer made;
  made.name = (*inbox)->name();
  made.inbox = std::move(*inbox);
  made.capacity = capacity;
  made.key = host_key();
  return made;
}

caf::expected<caf::strong_actor_ptr>
host_lanes::complete(lane_offer offer, const std::string& their_ring,
                     const caf::strong_actor_ptr& target) {
  offer.inbox->unlink(); // the other side has it mapped
  auto outbox = shared_ring::open(their_ring, offer.capacity);
  if (!outbox)
    return outbox.error();
  auto link = std::make_shared<lane_link>();
  link->system = &system_;
  link->peer = target->node();
  link->inbox = std::move(offer.inbox);
  link->outbox = std::move(*outbox);
  std::lock_guard<std::mutex> guard{lock_};
  reap_ended();
  start(link);
  return link->proxy_for(link, target->id(), target);
}

caf::expected<std::string> host_lanes::accept_link(const std::string& their_key,
                                                   const std::string& their_ring,
                                                   uint64_t capacity, const caf::node_id& peer) {
  const auto refuse = [](const std::string& why) {
    return make_troupe_error(troupe_errc::bad_config, "no lane: " + why);
  };
  if (their_key != host_key())
    return refuse("not a process of this host");
  if (capacity > max_capacity_)
    return refuse("a ring of " + std::to_string(capacity) + " bytes, over "
                  + std::to_string(max_capacity_));
  {
    std::lock_guard<std::mutex> guard{lock_};
    reap_ended();
    if (links_.size() >= max_links)
      return refuse("this process holds " + std::to_string(max_links) + " links");
  }
  auto outbox = shared_ring::open(their_ring, capacity);
  if (!outbox)
    return outbox.error();
  auto inbox = shared_ring::create(capacity);
  if (!inbox)
    return inbox.error();
  auto link = std::make_shared<lane_link>();
  link->system = &system_;
  link->peer = peer;
  link->outbox = std::move(*outbox);
  link->inbox = std::move(*inbox);
  const std::string name = link->inbox->name();
  std::lock_guard<std::mutex> guard{lock_};
  start(link);
  return name;
}

} // namespace troupe::detail
