// The guarded middleman actor: CAF 0.17's own, except that the connections it
// opens and accepts are guarded_scribes (CAF's BASP broker sizes buffers from
// headers nobody has authenticated, and crashes on some).
#include "actors/cluster/frame_guard.hpp"

#include <algorithm>
#include <mutex>

#include <caf/all.hpp>
#include <caf/io/all.hpp>
#include <caf/io/basp_broker.hpp>
#include <caf/io/middleman_actor_impl.hpp>
#include <caf/io/network/default_multiplexer.hpp>

#include "actors/cluster/guarded_scribe.hpp"
#include "messages/errors.hpp"

namespace troupe::detail {

namespace {

using caf::io::network::default_multiplexer;


// The registry name of a system's guarded middleman (an atom: at most 10 characters).
constexpr caf::atom_value registry_name = caf::atom("TroupeGrd");

class guarded_manager final : public caf::io::middleman_actor_impl {
public:
  guarded_manager(caf::actor_config& cfg, caf::actor broker,
                  std::shared_ptr<connection_guard> guard)
    : middleman_actor_impl(cfg, broker), broker_(std::move(broker)), guard_(std::move(guard)) {
  }

  const char* name() const override {
    return "troupe.guarded_middleman";
  }

  behavior_type make_behavior() override {
    // The system's destructor waits for detached actors to be destroyed
    // once its middleman has stopped: end with the BASP broker, and let go
    // of the registry's reference.
    monitor(broker_);
    set_down_handler([this](caf::down_msg&) {
      system().registry().erase(registry_name);
      quit();
    });
    return middleman_actor_impl::make_behavior();
  }

protected:
  caf::expected<caf::io::scribe_ptr> connect(const std::string& host, uint16_t port) override {
    auto fd = caf::io::network::new_tcp_connection(host, port);
    if (!fd)
      return std::move(fd.error());
    return caf::io::scribe_ptr{
      caf::make_counted<guarded_scribe>(multiplexer(), *fd, guard_, connection_end::connected,
                                        false)};
  }

  caf::expected<caf::io::doorman_ptr> open(uint16_t port, const char* addr,
                                           bool reuse) override {
    auto fd = caf::io::network::new_tcp_acceptor_impl(port, addr, reuse);
    if (!fd)
      return std::move(fd.error());
    return caf::io::doorman_ptr{caf::make_counted<guarded_doorman>(multiplexer(), *fd, guard_)};
  }

private:
  default_multiplexer& multiplexer() {
    return static_cast<default_multiplexer&>(system().middleman().backend());
  }

  caf::actor broker_;
  std::shared_ptr<connection_guard> guard_;
};

guard_settings settings_for(const caf::actor_system& system, uint64_t max_frame_size) {
  guard_settings settings;
  settings.frames.after_handshake = max_frame_size;
  settings.frames.before_handshake = std::min(max_frame_size, min_max_frame_size);
  // Three heartbeat timeouts (and at least 3 s): a peer that is merely slow
  // has long been dropped by CAF's own connection timeout by then.
  const auto timeout = caf::get_or(system.config(), "middleman.connection-timeout",
                                   caf::defaults::middleman::connection_timeout);
  settings.stall_bound = std::max<std::chrono::milliseconds>(
    std::chrono::seconds(3), std::chrono::duration_cast<std::chrono::milliseconds>(3 * timeout));
  return settings;
}

} // namespace

caf::error check_max_frame_size(uint64_t bytes) {
  if (bytes < min_max_frame_size || bytes > max_max_frame_size)
    return make_troupe_error(troupe_errc::bad_config,
                             "--max-frame-size=" + std::to_string(bytes) + " is out of range: "
                               + std::to_string(min_max_frame_size) + " (64 KiB) to "
                               + std::to_string(max_max_frame_size) + " (4 GiB - 1) bytes");
  return caf::none;
}

caf::io::middleman_actor guarded_middleman(caf::actor_system& system, uint64_t max_frame_size) {
  static std::mutex spawning;
  std::lock_guard<std::mutex> lock{spawning};
  const auto name = registry_name;
  if (auto existing = system.registry().get(name))
    return caf::actor_cast<caf::io::middleman_actor>(std::move(existing));
  auto broker = system.middleman().named_broker<caf::io::basp_broker>(caf::atom("BASP"));
  auto guard = std::make_shared<connection_guard>(settings_for(system, max_frame_size));
  auto manager =
    system.spawn<guarded_manager, caf::detached + caf::hidden>(std::move(broker), guard);
  system.registry().put(name, caf::actor_cast<caf::strong_actor_ptr>(manager));
  return manager;
}

caf::expected<uint16_t> publish_guarded(caf::actor_system& system,
                                        const caf::strong_actor_ptr& whom,
                                        std::set<std::string> sigs, uint16_t port,
                                        const std::string& addr, bool reuse_addr,
                                        uint64_t max_frame_size) {
  if (auto err = check_max_frame_size(max_frame_size))
    return err;
  if (!whom)
    return caf::make_error(caf::sec::cannot_publish_invalid_actor);
  auto manager = guarded_middleman(system, max_frame_size);
  caf::expected<uint16_t> result = caf::sec::request_timeout;
  caf::scoped_actor self{system};
  self->request(manager, std::chrono::seconds(10), caf::publish_atom::value, port, whom,
                std::move(sigs), addr, reuse_addr)
    .receive([&](uint16_t actual) { result = actual; },
             [&](caf::error& err) { result = std::move(err); });
  return result;
}

} // namespace troupe::detail
