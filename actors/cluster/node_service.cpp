// The node service actor and connecting to nodes.
#include "actors/cluster/node_service.hpp"

#include <algorithm>
#include <cstdio>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/openssl/manager.hpp>

#include "actors/replica/data_cache.hpp"
#include "actors/cluster/frame_guard.hpp"
#include "actors/cluster/handshake.hpp"
#include "actors/cluster/send_bound.hpp"
#include "actors/cluster/watched_request.hpp"
#include "actors/runtime/known_peers.hpp"
#include "actors/runtime/trace_clock.hpp"
#include "messages/errors.hpp"
#include "model/model_description.hpp"

namespace troupe::detail {

namespace {

// Every job sends the whole parameter block in one frame (each epoch's
// order, fp32 masters whatever the --wire): a node whose frame bound is
// below it would close the coordinator's connection mid-run, so it refuses
// the job at the handshake. It bounds every other float frame too: a codec's
// slice is smaller (16-bit values half of it; int8 a byte a value, a float a
// block of 256 and the first parameter's index).
caf::error check_frame_room(const model_description& model, uint64_t max_frame_size) {
  const uint64_t block = model.parameter_count() * sizeof(float) + frame_header_room;
  if (max_frame_size == 0 || block <= max_frame_size)
    return caf::none;
  return make_troupe_error(troupe_errc::bad_config,
                           "the model " + model.text() + " sends its parameters in frames of "
                             + std::to_string(block) + " bytes, over this node's --max-frame-size="
                             + std::to_string(max_frame_size));
}

// Connects this node to the node at host:port and delivers true, or an
// error naming it. A busy peer can miss the middleman's handshake deadline
// (connection_timeout): that is worth another try, up to `attempts`.
void connect_to_peer(node_actor::pointer self, caf::io::middleman_actor manager,
                     const std::string& host, uint16_t port,
                     caf::typed_response_promise<bool> promise, int attempts) {
  self->request(manager, std::chrono::seconds(10), caf::connect_atom::value, host, port)
    .then(
      [self, promise](const caf::node_id& node, const caf::strong_actor_ptr&,
                      const std::set<std::string>&) mutable {
        greet_node(node);
        bound_unacknowledged_sends(self->system());
        promise.deliver(true);
      },
      [self, manager, host, port, promise, attempts](caf::error& err) mutable {
        if (err == caf::sec::connection_timeout && attempts > 1) {
          connect_to_peer(self, manager, host, port, promise, attempts - 1);
          return;
        }
        promise.deliver(make_troupe_error(troupe_errc::bad_config,
                                          "cannot connect to " + host + ":"
                                            + std::to_string(port) + ": " + describe(err)));
      });
}

node_actor::behavior_type node_service(node_actor::pointer self, node_options options) {
  return {
    [self, options](hello_atom, const handshake& theirs) -> caf::result<handshake> {
      const auto model = options.model.empty() ? theirs.model : options.model;
      auto mine = make_handshake(self->system(), model, "", "node",
                                 options.protocol_version);
      mine.max_frame_size = options.max_frame_size;
      auto refuse = [&](caf::error err) -> caf::result<handshake> {
        std::fprintf(stderr, "troupe node: refused %s: %s\n", theirs.peer.c_str(),
                     describe(err).c_str());
        return err;
      };
      // A model this node has not registered is named before its fingerprint.
      auto described = model_description::resolve(theirs.model);
      if (!described)
        return refuse(to_caf_error(described.error()));
      if (auto err = check_handshake(mine, theirs))
        return refuse(std::move(err));
      if (auto err = check_frame_room(*described, options.max_frame_size))
        return refuse(std::move(err));
      auto train = cached_train_set(theirs.data_dir);
      if (!train)
        return refuse(make_troupe_error(troupe_errc::bad_data,
                                        "the node cannot read the data: "
                                          + describe(train.error())));
      if (auto fits = check_model_fits(*described, **train); !fits)
        return refuse(make_troupe_error(troupe_errc::bad_config,
                                        "on the node, in " + theirs.data_dir + ": "
                                          + fits.error().message));
      std::fprintf(stderr, "troupe node: accepted %s (model %s, data %s)\n",
                   theirs.peer.c_str(), theirs.model.c_str(), theirs.data_dir.c_str());
      if (const auto& sender = self->current_sender())
        greet_node(sender->node());
      mine.answered_ns = steady_nanoseconds();
      return mine;
    },
    [](link_atom, const caf::node_id& linked) {
      greet_node(linked);
      return true;
    },
    [](clock_atom) { return steady_nanoseconds(); },
    [self, options](link_atom, const std::string& host, uint16_t port) -> caf::result<bool> {
      caf::io::middleman_actor manager = options.tls
                                           ? self->system().openssl_manager().actor_handle()
                                           : guarded_middleman(self->system());
      auto promise = self->make_response_promise<bool>();
      connect_to_peer(self, manager, host, port, promise, 3);
      return promise;
    },
  };
}

} // namespace

node_actor spawn_node_service(caf::actor_system& system, node_options options) {
  return system.spawn(node_service, std::move(options));
}

caf::error link_nodes(caf::actor_system& system, const node_actor& node,
                      const host_port& address, std::chrono::milliseconds timeout) {
  auto linked = ask_watching<bool>(system, node, node, timeout, "linking to " + address.text(),
                                   link_atom::value, address.host, address.port);
  return linked ? caf::none : linked.error();
}

caf::error greet_linked_node(caf::actor_system& system, const node_actor& node,
                             const caf::node_id& linked, std::chrono::milliseconds timeout) {
  auto greeted = ask_watching<bool>(system, node, node, timeout, "vouching for a linked node",
                                    link_atom::value, linked);
  return greeted ? caf::none : greeted.error();
}

namespace {

// The node's clock offset and its bound, from a handshake the coordinator
// sent at `sent` and had answered at `received`, as NTP does: the node
// stamped the hello's arrival and its answer's departure; the time between
// is its own, and the rest of the round trip is the two ways on the wire,
// taken as equal.
std::pair<int64_t, int64_t> clock_offset(int64_t sent, int64_t received,
                                         const handshake& theirs) {
  const int64_t arrived = theirs.clock_ns;
  const int64_t departed = theirs.answered_ns != 0 ? theirs.answered_ns : arrived;
  const int64_t on_wire = std::max<int64_t>(0, (received - sent) - (departed - arrived));
  return {((sent - arrived) + (received - departed)) / 2, on_wire / 2};
}

// How many clock round trips follow the handshake.
constexpr int clock_pings = 5;

// Asks `node` for its clock a few times and keeps the estimate of the
// quickest round trip where it beats `offset` ± `error` (the handshake's,
// whose first messages on a new connection are slow).
void refine_clock_offset(caf::actor_system& system, const node_actor& node,
                         std::chrono::milliseconds timeout, int64_t& offset, int64_t& error) {
  for (int ping = 0; ping < clock_pings; ++ping) {
    const int64_t sent = steady_nanoseconds();
    auto theirs = ask_watching<int64_t>(system, node, node, timeout, "a clock reading",
                                        clock_atom::value);
    const int64_t received = steady_nanoseconds();
    if (!theirs)
      return; // the handshake's estimate stands
    if ((received - sent) / 2 < error) {
      error = (received - sent) / 2;
      offset = sent + error - *theirs;
    }
  }
}

} // namespace

caf::expected<connected_node> connect_to_node(caf::actor_system& system,
                                              const host_port& address, bool tls,
                                              const handshake& hello,
                                              std::chrono::milliseconds timeout) {
  const std::string where = address.text();
  // Through the middleman actor, not remote_actor(), whose wait has no bound.
  caf::io::middleman_actor manager = tls ? system.openssl_manager().actor_handle()
                                         : guarded_middleman(system);
  caf::expected<node_actor> node = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  // A busy peer can miss the middleman's 1 s handshake deadline
  // (connection_timeout); that is worth another try, a refused port is not.
  for (int attempt = 0; attempt < 3; ++attempt) {
    self->request(manager, timeout, caf::connect_atom::value, address.host, address.port)
      .receive(
        [&](const caf::node_id&, caf::strong_actor_ptr& ptr,
            const std::set<std::string>& ifs) {
          if (!ptr)
            node = make_troupe_error(troupe_errc::bad_config,
                                     "nothing is published at " + where);
          else if (ifs != system.message_types<node_actor>())
            node = make_troupe_error(troupe_errc::bad_config,
                                     where + " is not a Troupe node of this version");
          else
            node = caf::actor_cast<node_actor>(std::move(ptr));
        },
        [&](caf::error& err) { node = std::move(err); });
    if (node || node.error() != caf::sec::connection_timeout)
      break;
  }
  if (node)
    bound_unacknowledged_sends(system);
  if (!node)
    return make_troupe_error(troupe_errc::bad_config,
                             "cannot reach node " + where + ": " + describe(node.error())
                               + " (is `node --port=" + std::to_string(address.port)
                               + "` running there, with the same TLS settings?)");
  const int64_t sent = steady_nanoseconds();
  auto theirs = ask_watching<handshake>(system, *node, *node, timeout,
                                        "the handshake with node " + where, hello_atom::value,
                                        hello);
  if (!theirs) {
    // The node's own refusal (another model, protocol or data) reads best as it is.
    if (theirs.error().category() == caf::atom("troupe")
        && theirs.error() != troupe_errc::link_lost && theirs.error() != troupe_errc::timeout)
      return make_troupe_error(troupe_errc::bad_config, "handshake with node " + where
                                                          + " failed: "
                                                          + describe(theirs.error()));
    return theirs.error();
  }
  const int64_t received = steady_nanoseconds();
  auto mine = hello;
  if (auto err = check_handshake(mine, *theirs))
    return err;
  auto [offset, error] = clock_offset(sent, received, *theirs);
  refine_clock_offset(system, *node, timeout, offset, error);
  return connected_node{*node, offset, error, theirs->max_frame_size};
}

} // namespace troupe::detail
