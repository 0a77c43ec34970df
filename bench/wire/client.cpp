// Process B of wire_bench: the actor that requests one round trip at a time.
#include <chrono>
#include <memory>

#include "bench/wire/wire_bench.hpp"
#include "messages/protocol.hpp"

namespace wire_bench {

using namespace troupe;

namespace {

using clock_type = std::chrono::steady_clock;

struct client_state {
  caf::actor server;
  kind what = kind::small;
  size_t total = 0;
  size_t warmup = 0;
  size_t done = 0;
  caf::timespan timeout{};
  shared_floats gradient;
  std::vector<float> plain;
  std::shared_ptr<std::vector<double>> micros;
  caf::response_promise promise;
  clock_type::time_point start;
};

using client_pointer = caf::stateful_actor<client_state>*;

void request_next(client_pointer self);

void fail(client_pointer self, caf::error err) {
  self->state.promise.deliver(std::move(err));
  self->quit();
}

// Records the round trip just answered (after the warm-up) and sends the next.
void answered(client_pointer self) {
  auto& st = self->state;
  const auto us =
    std::chrono::duration<double, std::micro>(clock_type::now() - st.start).count();
  if (st.done >= st.warmup)
    st.micros->push_back(us);
  ++st.done;
  request_next(self);
}

void answered_floats(client_pointer self, size_t size) {
  if (size != gradient_floats)
    fail(self, caf::make_error(caf::sec::unexpected_response, "answer of the wrong size"));
  else
    answered(self);
}

void request_bulk(client_pointer self) {
  auto& st = self->state;
  push_msg push;
  push.replica = 1;
  push.round = st.done;
  push.base_version = st.done;
  push.batch_size = 32;
  push.gradient = st.gradient; // shared, as a replica's push
  st.start = clock_type::now();
  self->request(st.server, st.timeout, std::move(push))
    .then([self](const params_msg& params) { answered_floats(self, params.values.size()); },
          [self](caf::error& err) { fail(self, std::move(err)); });
}

void request_plain(client_pointer self) {
  auto& st = self->state;
  plain_floats push{st.plain}; // the copy is not timed
  st.start = clock_type::now();
  self->request(st.server, st.timeout, std::move(push))
    .then([self](const plain_floats& params) { answered_floats(self, params.values.size()); },
          [self](caf::error& err) { fail(self, std::move(err)); });
}

void request_next(client_pointer self) {
  auto& st = self->state;
  if (st.done == st.total) {
    st.promise.deliver(caf::ok_atom::value);
    self->quit();
    return;
  }
  switch (st.what) {
    case kind::small:
      st.start = clock_type::now();
      self->request(st.server, st.timeout, ping_atom::value)
        .then([self](caf::ok_atom) { answered(self); },
              [self](caf::error& err) { fail(self, std::move(err)); });
      break;
    case kind::bulk:
      request_bulk(self);
      break;
    case kind::plain:
      request_plain(self);
      break;
  }
}

caf::behavior wire_client(client_pointer self, caf::actor server, kind what, size_t warmup,
                          size_t rounds, caf::timespan timeout,
                          std::shared_ptr<std::vector<double>> micros) {
  auto& st = self->state;
  st.server = std::move(server);
  st.what = what;
  st.warmup = warmup;
  st.total = warmup + rounds;
  st.timeout = timeout;
  st.micros = std::move(micros);
  st.micros->reserve(rounds);
  if (what == kind::bulk)
    st.gradient = shared_floats{
      std::make_shared<const std::vector<float>>(gradient_floats, 0.5f)};
  if (what == kind::plain)
    st.plain.assign(gradient_floats, 0.5f);
  return {
    [self](go_atom) -> caf::response_promise {
      self->state.promise = self->make_response_promise();
      request_next(self);
      return self->state.promise;
    },
  };
}

} // namespace

caf::actor spawn_client(caf::actor_system& system, const caf::actor& server, kind what,
                        size_t warmup, size_t rounds, caf::timespan timeout,
                        std::shared_ptr<std::vector<double>> micros) {
  return system.spawn(wire_client, server, what, warmup, rounds, timeout, std::move(micros));
}

} // namespace wire_bench
