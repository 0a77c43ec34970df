// A process's host lanes, with this test as the process at the other end:
// a request read off a lane reaches its actor here, whose answer goes back
// through the other ring with the ids CAF needs; a request for an actor
// that is gone is answered with an error; links are refused to another
// host or beyond the capacity allowed; mutated frames break nothing; and a
// reader that runs an actor whose answer finds no room goes on delivering.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <caf/all.hpp>

#include "actors/cluster/host_lanes.hpp"
#include "actors/cluster/shared_ring.hpp"

using namespace troupe::detail;
using namespace std::chrono_literals;

namespace {

constexpr uint64_t capacity = 1 << 20;
constexpr uint64_t far_sender = 4242; // an actor of the far end, by id

// The far end of one link: it reads `inbox` and writes `outbox`.
struct far_end {
  std::unique_ptr<shared_ring> inbox;
  std::unique_ptr<shared_ring> outbox;
};

caf::node_id far_node() {
  const auto node = caf::make_node_id(7, "0123456789abcdef0123456789abcdef01234567");
  REQUIRE(node);
  return *node;
}

far_end link_to(host_lanes& lanes) {
  far_end end;
  auto inbox = shared_ring::create(capacity);
  REQUIRE(inbox);
  end.inbox = std::move(*inbox);
  auto name =
    lanes.accept_link(host_lanes::host_key(), end.inbox->name(), capacity, far_node());
  REQUIRE(name);
  auto outbox = shared_ring::open(*name, capacity);
  REQUIRE(outbox);
  end.outbox = std::move(*outbox);
  return end;
}

std::vector<char> frame(caf::actor_system& system, uint64_t target, uint64_t mid,
                        caf::message content, uint64_t sender = far_sender) {
  std::vector<char> bytes(sizeof(lane_frame_head));
  const lane_frame_head head{target, sender, mid};
  std::memcpy(bytes.data(), &head, sizeof head);
  caf::binary_serializer sink{system, bytes};
  REQUIRE_FALSE(sink(content));
  return bytes;
}

// Reads the next frame of `end`'s inbox: its head and its message.
std::pair<lane_frame_head, caf::message> read_frame(caf::actor_system& system, far_end& end) {
  auto got = end.inbox->next(5000ms);
  REQUIRE(got.data != nullptr);
  REQUIRE(got.size >= sizeof(lane_frame_head));
  lane_frame_head head{};
  std::memcpy(&head, got.data, sizeof head);
  caf::message content;
  caf::binary_deserializer source{system, got.data + sizeof head, got.size - sizeof head};
  REQUIRE_FALSE(source(content));
  end.inbox->consume();
  return {head, content};
}

caf::actor spawn_doubler(caf::actor_system& system) {
  auto doubler = system.spawn([](caf::event_based_actor* self) -> caf::behavior {
    self->set_default_handler(caf::drop); // what a mutated frame still reads as
    // Wraps around: a mutated frame may carry any number.
    return {[](int32_t x) { return static_cast<int32_t>(2u * static_cast<uint32_t>(x)); }};
  });
  system.registry().put(doubler.id(), caf::actor_cast<caf::strong_actor_ptr>(doubler));
  return doubler;
}

// An actor system with a doubler in its registry, which ends it at the end.
struct with_doubler {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  caf::actor doubler = spawn_doubler(system);
  ~with_doubler() { caf::anon_send_exit(doubler, caf::exit_reason::user_shutdown); }
};

// Sends `x` to `doubler` as a request of id `request` from `sender`, and
// checks the answer; with `skip_others`, after any other frames that come
// first.
void expect_doubled(caf::actor_system& system, far_end& end, const caf::actor& doubler,
                    uint64_t request, int32_t x, bool skip_others = false,
                    uint64_t sender = far_sender) {
  const auto id = caf::make_message_id(request);
  const auto bytes =
    frame(system, doubler.id(), id.integer_value(), caf::make_message(x), sender);
  REQUIRE(end.outbox->write(bytes.data(), bytes.size(), 1000ms));
  auto [head, answer] = read_frame(system, end);
  for (int skipped = 0; skip_others && head.mid != id.response_id().integer_value(); ++skipped) {
    REQUIRE(skipped < 10000);
    std::tie(head, answer) = read_frame(system, end);
  }
  CHECK(head.target == sender);
  CHECK(head.sender == doubler.id());
  CHECK(head.mid == id.response_id().integer_value());
  REQUIRE(answer.match_elements<int32_t>());
  CHECK(answer.get_as<int32_t>(0) == 2 * x);
}

} // namespace

TEST_CASE("a request read off a lane is answered through the other ring, and one for an "
          "actor that is gone with an error",
          "[lanes]") {
  with_doubler actors;
  auto& [cfg, system, doubler] = actors;
  {
    host_lanes lanes{system, capacity};
    REQUIRE(host_lanes::of(system) == &lanes);
    auto end = link_to(lanes);
    CHECK(lanes.links() == 1);
    expect_doubled(system, end, doubler, 17, 21);
    expect_doubled(system, end, doubler, 18, -5);
    const auto id = caf::make_message_id(uint64_t{19});
    const auto bytes = frame(system, 999999, id.integer_value(), caf::make_message(int32_t{1}));
    REQUIRE(end.outbox->write(bytes.data(), bytes.size(), 1000ms));
    auto [head, answer] = read_frame(system, end);
    CHECK(head.target == far_sender);
    CHECK(head.mid == id.response_id().integer_value());
    REQUIRE(answer.match_elements<caf::error>());
    CHECK(answer.get_as<caf::error>(0) == caf::sec::request_receiver_down);
  }
  CHECK(host_lanes::of(system) == nullptr);
}

TEST_CASE("a link answers more senders, one after another, than it stands in for at once",
          "[lanes]") {
  // A node serving job after job meets new actors with every job.
  with_doubler actors;
  host_lanes lanes{actors.system, capacity};
  auto end = link_to(lanes);
  for (uint64_t sender = 1; sender <= 5000; ++sender)
    expect_doubled(actors.system, end, actors.doubler, sender, static_cast<int32_t>(sender),
                   false, sender);
}

TEST_CASE("a link is refused to a process of another host, and for rings over the capacity "
          "allowed or too small to hold a frame",
          "[lanes]") {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  host_lanes lanes{system, capacity};
  auto inbox = shared_ring::create(capacity);
  REQUIRE(inbox);
  const auto peer = far_node();
  auto other_host = lanes.accept_link("another-boot/0/1/2", (*inbox)->name(), capacity, peer);
  REQUIRE_FALSE(other_host);
  CHECK(system.render(other_host.error()).find("not a process of this host")
        != std::string::npos);
  auto too_large =
    lanes.accept_link(host_lanes::host_key(), (*inbox)->name(), 2 * capacity, peer);
  REQUIRE_FALSE(too_large);
  CHECK(system.render(too_large.error()).find("over") != std::string::npos);
  auto too_small = lanes.accept_link(host_lanes::host_key(), (*inbox)->name(), 16, peer);
  REQUIRE_FALSE(too_small);
  CHECK(lanes.links() == 0);
}

TEST_CASE("mutated frames on a lane are dropped, and the lane answers a request afterwards",
          "[lanes][fuzz]") {
  with_doubler actors;
  auto& [cfg, system, doubler] = actors;
  {
    host_lanes lanes{system, capacity};
    auto end = link_to(lanes);
    std::mt19937_64 random{20261205};
    // From no sender: nothing comes back of a mutated frame that still reads.
    const auto valid = frame(system, doubler.id(), caf::make_message_id().integer_value(),
                             caf::make_message(int32_t{3}), 0);
    for (int trial = 0; trial < 2000; ++trial) {
      auto bytes = valid;
      const int flips = 1 + static_cast<int>(random() % 8);
      for (int k = 0; k < flips; ++k) {
        const size_t at = random() % bytes.size();
        bytes[at] = static_cast<char>(random());
      }
      if (random() % 4 == 0)
        bytes.resize(random() % bytes.size());
      REQUIRE(end.outbox->write(bytes.data(), bytes.size(), 1000ms));
    }
    // Frames that still read as requests were answered meanwhile.
    expect_doubled(system, end, doubler, 77, 8, true);
  }
}

// An actor the lanes can deliver to (in the registry), ended with this.
struct registered_actor {
  caf::actor actor;
  template <class Behavior>
  registered_actor(caf::actor_system& system, Behavior behavior)
    : actor(system.spawn([behavior](caf::event_based_actor*) -> caf::behavior {
        return {behavior};
      })) {
    system.registry().put(actor.id(), caf::actor_cast<caf::strong_actor_ptr>(actor));
  }
  ~registered_actor() { caf::anon_send_exit(actor, caf::exit_reason::user_shutdown); }
};

TEST_CASE("a reader whose actor's answer finds the ring back full delivers the frames that "
          "follow while the answer waits, and the answer follows once there is room",
          "[lanes]") {
  caf::actor_system_config cfg;
  caf::actor_system system{cfg};
  std::promise<bool> open_at_receipt; // whether the ring back was open then
  auto received = open_at_receipt.get_future();
  {
    host_lanes lanes{system, capacity};
    auto end = link_to(lanes);
    registered_actor echo{system, [](const std::string& text) { return text; }};
    const shared_ring* back = end.inbox.get();
    registered_actor recorder{system, [back, &open_at_receipt](int32_t) {
                                open_at_receipt.set_value(!back->closed());
                              }};
    // Nobody reads the ring back yet: it holds 8 answers of 100 kB, and a
    // writer waits for room for the 9th (a frame's reservation is a quarter
    // of the ring). The reader runs the echo as it delivers, so it is the
    // reader that waits. The recorder's frame comes after the 9th request.
    const std::string text(100000, 't');
    const int answers = 9;
    for (int k = 1; k <= answers; ++k) {
      const auto bytes = frame(system, echo.actor.id(), caf::make_message_id(k).integer_value(),
                               caf::make_message(text));
      REQUIRE(end.outbox->write(bytes.data(), bytes.size(), 1000ms));
    }
    const auto note = frame(system, recorder.actor.id(), caf::make_message_id().integer_value(),
                            caf::make_message(int32_t{1}));
    REQUIRE(end.outbox->write(note.data(), note.size(), 1000ms));
    REQUIRE(received.wait_for(5s) == std::future_status::ready);
    CHECK(received.get()); // delivered before the waiting writer gave up
    for (int k = 1; k <= answers; ++k) {
      INFO("answer " << k);
      auto [head, answer] = read_frame(system, end);
      CHECK(head.mid == caf::make_message_id(k).response_id().integer_value());
      REQUIRE(answer.match_elements<std::string>());
      CHECK(answer.get_as<std::string>(0) == text);
    }
    CHECK_FALSE(end.inbox->closed());
  }
}
