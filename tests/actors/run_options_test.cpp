// A run's options on the command line: what run_options makes of them,
// what it refuses and how, and --dump-config, which --config-file reads back.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "actors/config/cluster_config.hpp"
#include "actors/config/run_options.hpp"
#include "messages/errors.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

// A program's config with a run's options bound, as mnist has.
struct run_cli : cluster_config {
  run_options run{*this};
  run_cli() : cluster_config("mnist", "a test") {}
};

// The run `args` describe, or why not.
caf::expected<run_config> parsed(const std::vector<std::string>& args) {
  run_cli cli;
  if (auto err = cli.parse_options(args))
    return err;
  return cli.run.to_run_config();
}

// Why the run `args` describe is refused, as mnist checks it: parsed, then
// checked against the data.
std::string why_not(const std::vector<std::string>& args) {
  auto result = parsed(args);
  if (!result)
    return describe(result.error());
  auto checked = check_run_config(*result, &test_slice());
  REQUIRE_FALSE(checked);
  return describe(checked.error());
}

} // namespace

TEST_CASE("the command line becomes a typed run configuration", "[options]") {
  auto c = parsed({"--mode=ssp", "--staleness=3", "--staleness-lr=inverse", "--replicas=4",
                   "--devices=cpu,cuda:1", "--nodes=10.0.0.1:4001,[::1]:4002",
                   "--replicas-per-node=2", "--store-node=10.0.0.2:4003",
                   "--on-replica-loss=continue", "--slow-replica=2:1.5", "--lr=0.01",
                   "--epochs=3"});
  REQUIRE(c);
  CHECK(c->policy.name == "ssp");
  CHECK(c->policy.settings.staleness == 3);
  CHECK(c->policy.settings.staleness_lr == staleness_lr_rule::inverse);
  CHECK(c->replicas == 4);
  CHECK_FALSE(c->devices.automatic);
  CHECK(c->devices.pool == std::vector<std::string>{"cpu", "cuda:1"});
  REQUIRE(c->nodes.size() == 2);
  CHECK(c->nodes[0] == host_port{"10.0.0.1", 4001});
  CHECK(c->nodes[1] == host_port{"::1", 4002});
  CHECK(c->nodes[1].text() == "[::1]:4002");
  CHECK(c->replicas_per_node == 2);
  CHECK(c->store_nodes == std::vector<host_port>{host_port{"10.0.0.2", 4003}});
  CHECK(c->on_replica_loss == replica_loss_action::continue_run);
  CHECK(c->slow.index == 2);
  CHECK(c->slow.factor == 1.5f);
  CHECK(c->optimizer.learning_rate == 0.01f);
  CHECK(c->epochs == 3);
  auto defaults = parsed({});
  REQUIRE(defaults);
  CHECK(defaults->replicas == 0); // one per core: check_run_config settles it
  CHECK(defaults->devices.pool == std::vector<std::string>{"cpu"});
  // A run respawns a lost replica by default; sync with backups cannot, and aborts.
  CHECK(defaults->on_replica_loss == replica_loss_action::respawn);
  CHECK_FALSE(defaults->respawn_anywhere);
  CHECK(parsed({"--mode=async"})->on_replica_loss == replica_loss_action::respawn);
  CHECK(parsed({"--mode=sync", "--backup-replicas=1"})->on_replica_loss
        == replica_loss_action::abort);
  CHECK(parsed({"--on-replica-loss=respawn", "--respawn=anywhere"})->respawn_anywhere);
  CHECK(defaults->slow.factor == 1.0f);
  CHECK(parsed({"--devices=auto"})->devices.automatic);
}

TEST_CASE("options whose text makes no sense are refused naming the option and the text",
          "[options]") {
  CHECK(why_not({"--on-replica-loss=ignore"})
        == "--on-replica-loss: 'ignore' (expected respawn, abort or continue)");
  CHECK(why_not({"--respawn=elsewhere"}) == "--respawn: 'elsewhere' (expected nodes or anywhere)");
  CHECK(why_not({"--staleness-lr=sqrt"}) == "--staleness-lr: 'sqrt' (expected none or inverse)");
  CHECK(why_not({"--devices=cpu,tpu:0"})
        == "--devices: 'tpu:0' is not a device (expected cpu, cuda:N or auto)");
  CHECK(why_not({"--nodes=10.0.0.1"}) == "--nodes: '10.0.0.1' is not HOST:PORT");
  CHECK(why_not({"--store-nodes=h:0"}) == "--store-nodes: 'h:0': port must be 1..65535");
  CHECK(why_not({"--store-node=h:1", "--store-nodes=h:2"}).find("use --store-nodes alone")
        != std::string::npos);
  for (const std::string bad : {"3", "x:2", "1:0.5", "1:abc"})
    CHECK(why_not({"--slow-replica=" + bad}).rfind("--slow-replica: '" + bad + "'", 0) == 0);
  CHECK(why_not({"--epochs=0"}) == "--epochs=0: --epochs takes a whole number, 1 or more");
  CHECK(why_not({"--epochs=abc"}) == "--epochs=abc: --epochs takes a whole number, 1 or more "
                                     "(see --help)");
  CHECK(why_not({"--bogus=1"}) == "--bogus=1: unknown option (see --help)");
  CHECK(why_not({"--config-file=/nonexistent/troupe.ini"})
        == "--config-file=/nonexistent/troupe.ini: cannot open the file (is the path right?)");
}

TEST_CASE("the dumped config (--dump-config) has every option as a file --config-file reads back to the same "
          "run",
          "[options]") {
  const auto path = (std::filesystem::temp_directory_path()
                     / ("troupe_dump_" + std::to_string(::getpid()) + ".ini"))
                      .string();
  const std::vector<std::string> args{"--mode=delayed", "--staleness=2", "--lr=0.0125",
                                      "--devices=cpu,cpu", "--data-dir=/data/my \"mnist\"",
                                      "--nodes=10.0.0.1:4001", "--nesterov"};
  run_cli first;
  REQUIRE_FALSE(first.parse_options(args));
  const auto dump = first.dump_config();
  CHECK(dump.rfind("[global]\n", 0) == 0);
  CHECK(dump.find("\nmode=\"delayed\"\n") != std::string::npos);
  CHECK(dump.find("\nlr=0.0125\n") != std::string::npos);
  CHECK(dump.find("\nepochs=5\n") != std::string::npos); // defaults too
  std::ofstream(path) << dump;
  run_cli second;
  REQUIRE_FALSE(second.parse_options({"--config-file=" + path}));
  CHECK(second.dump_config() == dump);
  auto c = second.run.to_run_config();
  REQUIRE(c);
  CHECK(c->policy.name == "delayed");
  CHECK(c->data_dir == "/data/my \"mnist\"");
  CHECK(c->optimizer.nesterov);
  // The command line wins over the file.
  run_cli third;
  REQUIRE_FALSE(third.parse_options({"--config-file=" + path, "--staleness=4"}));
  CHECK(third.run.to_run_config()->policy.settings.staleness == 4);
  // A misspelled key, in [global] or in one of CAF's sections, is refused.
  std::ofstream(path) << "[global]\nepochz=3\n";
  run_cli typo;
  CHECK(describe(typo.parse_options({"--config-file=" + path}))
        == "unknown option 'epochz' in the config file (see --help)");
  std::ofstream(path) << "[middleman]\nheartbeat-intervall=1s\n";
  run_cli caf_typo;
  CHECK(describe(caf_typo.parse_options({"--config-file=" + path}))
        == "unknown option 'heartbeat-intervall' in section [middleman] of the config file "
           "(see --long-help)");
  std::filesystem::remove(path);
}

TEST_CASE("the optimizer's options: adamw's weight decay by default, rmsprop's settings and a "
          "schedule's text, through --dump-config and back",
          "[options][optimizer]") {
  CHECK(parsed({"--optimizer=adamw"})->optimizer.weight_decay == 0.004f); // Keras's default
  CHECK(parsed({"--optimizer=sgd"})->optimizer.weight_decay == 0.0f);
  CHECK(parsed({"--optimizer=adamw", "--weight-decay=0"})->optimizer.weight_decay == 0.0f);
  const std::vector<std::string> args{
    "--optimizer=rmsprop", "--rho=0.8", "--centered", "--momentum=0.5", "--weight-decay=0.01",
    "--lr-schedule=exponential:decay_steps=10,decay_rate=0.5,staircase"};
  run_cli first;
  REQUIRE_FALSE(first.parse_options(args));
  const auto dump = first.dump_config();
  CHECK(dump.find("\nlr-schedule=\"exponential:decay_steps=10,decay_rate=0.5,staircase\"\n")
        != std::string::npos);
  CHECK(dump.find("\nweight-decay=\"0.01\"\n") != std::string::npos);
  const auto path = (std::filesystem::temp_directory_path()
                     / ("troupe_optimizer_" + std::to_string(::getpid()) + ".ini"))
                      .string();
  std::ofstream(path) << dump;
  run_cli second;
  REQUIRE_FALSE(second.parse_options({"--config-file=" + path}));
  std::filesystem::remove(path);
  auto c = second.run.to_run_config();
  REQUIRE(c);
  CHECK(c->optimizer.name == "rmsprop");
  CHECK(c->optimizer.rho == 0.8f);
  CHECK(c->optimizer.centered);
  CHECK(c->optimizer.momentum == 0.5f);
  CHECK(c->optimizer.weight_decay == 0.01f);
  CHECK(to_setting_text(c->optimizer.schedule)
        == "exponential:decay_steps=10,decay_rate=0.5,staircase=true");
  CHECK(why_not({"--lr-schedule=cosine:alpha=0.5"})
        == "--lr-schedule=cosine:decay_steps=0,alpha=0.5,warmup_steps=0,warmup_target=0: "
           "decay_steps must be at least 1");
  CHECK(why_not({"--weight-decay=-1"}) == "--weight-decay must be 0 or more, got -1");
}

TEST_CASE("help lists each option under its section with its default and unit", "[options]") {
  run_cli cli;
  const auto help = cli.help_text(false);
  for (const std::string section : {"Training:", "Consistency", "Replicas and nodes",
                                    "The variable store:", "Failures:", "Checkpoints:",
                                    "Output", "Mutual TLS", "Numerics", "This program:"})
    CHECK(help.find("\n" + section) != std::string::npos);
  CHECK(help.find("--epochs=N") != std::string::npos);
  CHECK(help.find("(default: 5)") != std::string::npos);
  CHECK(help.find("--step-timeout=MS") != std::string::npos);
  CHECK(help.find("(in ms; default: 60000)") != std::string::npos);
  for (const std::string mode : {"sync:", "async:", "ssp:", "delayed:"})
    CHECK(help.find(mode) != std::string::npos);
  CHECK(help.find("STDERR") == std::string::npos);
  CHECK(help.find("middleman.") == std::string::npos);
  CHECK(cli.help_text(true).find("--middleman.heartbeat-interval") != std::string::npos);
}

TEST_CASE("a run on nodes puts a store shard on each replica node unless told otherwise, and "
          "then keeps snapshots to heal from",
          "[options][heal]") {
  const std::vector<std::string> nodes{"--nodes=10.0.0.1:4001,10.0.0.2:4001", "--epochs=1"};
  auto settled = [&](std::vector<std::string> extra) {
    extra.insert(extra.begin(), nodes.begin(), nodes.end());
    auto c = parsed(extra);
    REQUIRE(c);
    auto checked = check_run_config(*c, &test_slice());
    REQUIRE(checked);
    return *checked;
  };
  const auto on_nodes = settled({});
  REQUIRE(on_nodes.store_nodes.size() == 2);
  CHECK(on_nodes.store_nodes[1].text() == "10.0.0.2:4001");
  CHECK(on_nodes.store_shards == 2);
  CHECK(heals_store(on_nodes));
  CHECK(on_nodes.snapshot_every == default_snapshot_every);
  CHECK(settled({"--snapshot-every=7"}).snapshot_every == 7);
  const auto here = settled({"--store-nodes=here"});
  CHECK(here.store_nodes.empty());
  CHECK_FALSE(heals_store(here));
  // An int8 run on nodes keeps snapshots wherever its store is: a lost
  // replica rolls it back to one.
  const auto int8_here = settled({"--store-nodes=here", "--wire=int8"});
  CHECK(heals_store(int8_here));
  CHECK(int8_here.snapshot_every == default_snapshot_every);
  // Without nodes no replica is lost to a node's death: no snapshots.
  auto local = parsed({"--wire=int8", "--epochs=1"});
  REQUIRE(local);
  auto local_checked = check_run_config(*local, &test_slice());
  REQUIRE(local_checked);
  CHECK_FALSE(heals_store(*local_checked));
  CHECK(settled({"--on-replica-loss=continue"}).store_nodes.empty());
  CHECK(settled({"--store-device=cuda:0"}).store_nodes.empty());
  CHECK_FALSE(heals_store(settled({"--on-replica-loss=abort"})));
  CHECK(why_not({"--snapshot-every=5"})
        == "--snapshot-every keeps the snapshots a healing store rolls back to: it needs the "
           "store on nodes (--nodes or --store-nodes) or --wire=int8 on nodes, and "
           "--on-replica-loss=respawn");
  CHECK(why_not({"--store-nodes=here", "--nodes=10.0.0.1:4001", "--snapshot-every=5"})
          .rfind("--snapshot-every", 0)
        == 0);
}
