// Requests to a peer in another process that end when the link to it is lost,
// not only at their timeout: CAF 0.17 leaves a request to an actor on a node
// whose connection closed waiting until its timeout. Include only from .cpp
// files that include <caf/all.hpp> and <caf/io/all.hpp>.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "messages/errors.hpp"

namespace troupe::detail {

/// Names `what` in an error a request got: its timeout, the receiver gone;
/// the peer's own reason (a Troupe error) stays as it is.
inline caf::error name_error(const caf::error& err, const std::string& what,
                             std::chrono::milliseconds timeout) {
  if (err == caf::sec::request_timeout)
    return make_troupe_error(troupe_errc::timeout, what + ": no answer within "
                                                     + std::to_string(timeout.count()) + " ms");
  if (err.category() == caf::atom("troupe"))
    return err;
  const auto code = err == caf::sec::request_receiver_down ? troupe_errc::link_lost
                                                           : troupe_errc::bad_config;
  return make_troupe_error(code, what + ": " + describe(err));
}

/// Sends `xs...` to `whom` and waits for its one-value answer, at most
/// `timeout`, and no longer than the actor `watched` lives (a node's actor:
/// its down message says the link is lost). Every error names `what` (e.g.
/// "the handshake with node 10.0.0.2:4242").
template <class Answer, class Handle, class Watched, class... Ts>
caf::expected<Answer> ask_watching(caf::actor_system& system, const Handle& whom,
                                   const Watched& watched, std::chrono::milliseconds timeout,
                                   const std::string& what, Ts... xs) {
  if (!whom || !watched)
    return make_troupe_error(troupe_errc::link_lost, what + ": the peer no longer exists");
  const auto started = std::chrono::steady_clock::now();
  auto helper = system.spawn([=](caf::event_based_actor* self) -> caf::behavior {
    return {
      [=](caf::get_atom) -> caf::typed_response_promise<Answer> {
        // Shared, so that whichever comes first answers and the other finds
        // the promise delivered.
        auto promise = std::make_shared<caf::typed_response_promise<Answer>>(
          self->make_response_promise<Answer>());
        self->monitor(watched);
        self->set_down_handler([=](caf::down_msg& down) {
          const auto after = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::steady_clock::now() - started);
          promise->deliver(make_troupe_error(
            troupe_errc::link_lost, what + ": the peer was lost after "
                                      + std::to_string(after.count()) + " ms ("
                                      + describe(down.reason) + ")"));
        });
        self->request(whom, timeout, xs...)
          .then([=](Answer& answer) { promise->deliver(std::move(answer)); },
                [=](caf::error& err) { promise->deliver(name_error(err, what, timeout)); });
        return *promise;
      },
    };
  });
  caf::expected<Answer> result = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  self->request(helper, timeout + std::chrono::seconds(1), caf::get_atom::value)
    .receive([&](Answer& answer) { result = std::move(answer); },
             [&](caf::error& err) { result = std::move(err); });
  caf::anon_send_exit(helper, caf::exit_reason::user_shutdown);
  return result;
}

/// Spawns an actor of the registered type `name` on the node of `node_actor`
/// (CAF's remote spawn), as ask_watching asks: an error names `what`, and the
/// wait ends when that node's link is lost. A node that answers with no
/// actor is an error too.
template <class Handle, class NodeHandle>
caf::expected<Handle> remote_spawn_watching(caf::actor_system& system,
                                            const NodeHandle& node_actor, const std::string& name,
                                            caf::message args, std::chrono::milliseconds timeout,
                                            const std::string& what) {
  // CAF's middleman actor only forwards a spawn to the node's spawn server,
  // over whichever connection (TLS or not) reaches it.
  auto manager = system.middleman().actor_handle();
  auto spawned = ask_watching<caf::strong_actor_ptr>(
    system, manager, node_actor, timeout, what, caf::spawn_atom::value, node_actor.node(), name,
    std::move(args), system.message_types<Handle>());
  if (!spawned)
    return spawned.error();
  if (!*spawned)
    return make_troupe_error(troupe_errc::bad_config, what + ": the node answered with no actor");
  return caf::actor_cast<Handle>(std::move(*spawned));
}

} // namespace troupe::detail
