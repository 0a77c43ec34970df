// A process's lanes: the links it holds and how they open.
#include "actors/cluster/host_lanes.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>

#include <caf/all.hpp>

#include "actors/cluster/lane_link.hpp"
#include "actors/cluster/shared_ring.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

constexpr size_t max_links = 64; // that a process holds at most

std::mutex lanes_lock;
std::map<const caf::actor_system*, host_lanes*>& all_lanes() {
  static std::map<const caf::actor_system*, host_lanes*> lanes;
  return lanes;
}

uint64_t inode_of(const char* path) {
  struct stat info {};
  return stat(path, &info) == 0 ? static_cast<uint64_t>(info.st_ino) : 0;
}

} // namespace

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
