// Registration of every message type (the list must stay complete: see
// tests/actors/message_roundtrip_test.cpp).
#include "messages/register.hpp"

#include <caf/all.hpp>

#include "messages/errors.hpp"
#include "messages/interfaces.hpp"

namespace troupe::detail {

void register_messages(caf::actor_system_config& config) {
  config.add_message_type<shared_floats>("troupe::shared_floats");
  config.add_message_type<trace_span>("troupe::trace_span");
  config.add_message_type<push_msg>("troupe::push_msg");
  config.add_message_type<replica_loss>("troupe::replica_loss");
  config.add_message_type<norm_msg>("troupe::norm_msg");
  config.add_message_type<params_msg>("troupe::params_msg");
  config.add_message_type<epoch_order>("troupe::epoch_order");
  config.add_message_type<replica_report>("troupe::replica_report");
  config.add_message_type<store_stats>("troupe::store_stats");
  config.add_message_type<replica_config>("troupe::replica_config");
  config.add_message_type<handshake>("troupe::handshake");
  config.add_message_type<store_config>("troupe::store_config");
  config.add_message_type<checkpoint_part>("troupe::checkpoint_part");
  config.add_message_type<std::vector<checkpoint_part>>("std::vector<troupe::checkpoint_part>");
  config.add_message_type<checkpoint_stats>("troupe::checkpoint_stats");
  config.add_message_type<fit_summary>("troupe::fit_summary");
  config.add_message_type<replica_actor>("troupe::replica_actor");
  config.add_message_type<store_actor>("troupe::store_actor");
  config.add_message_type<std::vector<store_actor>>("std::vector<troupe::store_actor>");
  config.add_message_type<checkpoint_writer_actor>("troupe::checkpoint_writer_actor");
  config.add_message_type<node_actor>("troupe::node_actor");
  config.add_message_type<coordinator_actor>("troupe::coordinator_actor");
  config.add_message_type<join_door_actor>("troupe::join_door_actor");
  config.add_error_category(caf::atom("troupe"),
                            [](uint8_t code, caf::atom_value, const caf::message& context) {
                              return render_troupe_error(code, context);
                            });
}

} // namespace troupe::detail
