// The mnist program refuses bad options before it prints or starts anything:
// exit code 2, an error naming the option on stderr, nothing on stdout.
#include "tests/cluster/cluster_test.hpp"

#include <sstream>

using namespace troupe::cluster_test;

TEST_CASE("mnist refuses bad options before printing its banner", "[cluster][options][optimizer]") {
  struct bad_option {
    std::string argument;
    std::string named; // what the error must say
  };
  const std::vector<bad_option> table{
    {"--nodes=127.0.0.1:9", "--replicas=2 does not fit --nodes"},
    {"--batch-size=0", "--batch-size=0: --batch-size takes a whole number, 1 or more"},
    {"--epochs=0", "--epochs=0: --epochs takes a whole number, 1 or more"},
    {"--mode=bogus", "--mode"},
    {"--on-replica-loss=ignore", "--on-replica-loss"},
    {"--optimizer=bogus", "--optimizer"},
    {"--lr=0", "--lr"},
    {"--devices=tpu:0", "--devices"},
    {"--step-timeout=0", "--step-timeout"},
    {"--checkpoint-every=5", "--checkpoint"},
    {"--store-shards=100000", "--store-shards"},
    {"--mode=delayed", "--staleness"},
    {"--backup-replicas=2", "--backup-replicas"},
    {"--slow-replica=9:2", "--slow-replica"},
    {"--staleness-lr=inverse", "--staleness-lr"},
    {"--staleness-lr=sqrt", "--staleness-lr: 'sqrt' (expected none or inverse)"},
    {"--slow-replica=1:0.5", "--slow-replica: '1:0.5'"},
    {"--store-node=127.0.0.1:4000 --store-nodes=127.0.0.1:4001", "use --store-nodes alone"},
    {"--config-file=/nonexistent/troupe.ini", "--config-file=/nonexistent/troupe.ini: cannot open"},
    {"--progress=fancy", "--progress"},
    {"--log-every=10", "--log-every"},
    {"--nodes=localhost", "--nodes"},
    {"--store-nodes=localhost:0", "--store-nodes"},
    {"--store-node=:4000", "--store-node"},
    // CAF's parser refuses these; the error says what the option takes.
    {"--epochs=abc", "--epochs=abc: --epochs takes a whole number"},
    {"--lr=fast", "--lr=fast: --lr takes a number"},
    {"--pin-cores=maybe", "--pin-cores takes true or false"},
    {"--bogus=1", "--bogus=1: unknown option"},
    // The optimizer's and the schedule's.
    {"--weight-decay=-0.1", "--weight-decay must be 0 or more, got -0.1"},
    {"--weight-decay=lots", "--weight-decay=lots: --weight-decay takes a number"},
    {"--lr-schedule=linear", "--lr-schedule: 'linear': no schedule is called 'linear'"},
    {"--lr-schedule=step:every=10,rate=2", "step takes every or factor, not 'rate'"},
    {"--lr-schedule=cosine:decay_steps=0", "--lr-schedule=cosine:decay_steps=0,"},
    {"--lr-schedule=cosine:decay_steps=100,warmup_steps=1000,warmup_target=0.01",
     "warmup_steps=1000 is longer than the whole run, 63 optimizer steps"},
    {"--optimizer=rmsprop --rho=1.5", "--rho must be at least 0 and below 1"},
    {"--optimizer=lion", "--optimizer: 'lion' (expected adam, adamw, sgd or rmsprop)"},
    {"--lr=0 --lr-schedule=step:every=10,factor=0.5", "--lr must be positive, got 0"},
    {"--optimizer=adamw --store-device=cuda:0", "--store-device=cuda:0 steps adam only"},
    {"--weight-decay=0.1 --store-device=cuda:0", "adam without weight decay only"},
    // Class weights.
    {"--class-weights=3:-1", "--class-weights: '3:-1' gives a negative weight"},
    {"--class-weights=3:inf", "--class-weights: '3:inf' gives a weight that is not finite"},
    {"--class-weights=3", "--class-weights: '3' is not CLASS:WEIGHT"},
    {"--class-weights=10:2", "--class-weights: class 10 is out of range: the data has "
                             "classes 0..9"},
    {"--class-weights=0:0,1:0,2:0,3:0,4:0,5:0,6:0,7:0,8:0,9:0",
     "--class-weights: every class weighs 0"},
    {"--class-weights=3:2 --devices=cuda:0", "--class-weights weighs samples on cpu replicas only"},
    {"--global-clipnorm=-1", "--global-clipnorm must be 0 (off) or more, got -1"},
    // Layered models.
    {"--model=28x28x1-conv4k3-flatten-10 --loss=mse", "has layers beyond dense ones"},
    {"--model=28x28x1-conv4k3-10", "put a flatten before it (input 26x26x4)"},
#ifndef TROUPE_HAVE_CUDA
    {"--model=28x28x1-conv4k3-flatten-10 --devices=cuda:0",
     "--devices: device 'cuda:0': this build has no CUDA backend"},
#endif
    {"--global-clipnorm=1 --store-device=cuda:0", "cannot clip by global norm"},
    // The wire codec.
    {"--wire=int4", "--wire: 'int4' (expected fp32, bf16, fp16 or int8)"},
    {"--wire=bf16 --store-device=cuda:0", "--wire=bf16 rounds on the host: use "
                                          "--store-device=cpu"},
  };
  temp_dir dir{"troupe-cluster"};
  int index = 0;
  for (const auto& bad : table) {
    // One epoch on two replicas unless the bad option is one of those: should
    // the check ever come too late, the run ends quickly.
    std::vector<std::string> args;
    for (std::string base : {"--epochs=1", "--replicas=2"})
      if (bad.argument.rfind(base.substr(0, base.find('=') + 1), 0) != 0)
        args.push_back(base);
    std::istringstream words(bad.argument); // one or more arguments
    for (std::string word; words >> word;)
      args.push_back(word);
    process mnist{mnist_command(args), dir.path(), "mnist-" + std::to_string(index++)};
    const auto status = mnist.wait(exit_timeout);
    const auto out = mnist.out();
    const auto err = mnist.err();
    INFO(bad.argument << ": " << mnist.describe() << "\n" << to_string(status));
    CHECK_FALSE(status.timed_out);
    CHECK(status.exited);
    CHECK(status.code == 2);
    CHECK(err.find("error: ") != std::string::npos);
    CHECK(err.find(bad.named) != std::string::npos);
    CHECK(out.find("Troupe mnist:") == std::string::npos);
    CHECK(out.empty());
  }
}

TEST_CASE("mnist takes a boolean option bare, as --help shows it, or as =true and =false",
          "[cluster][options]") {
  temp_dir dir{"troupe-cluster"};
  const std::vector<std::vector<std::string>> runs{
    {"--pin-cores"},
    {"--pin-cores=true"},
    {"--optimizer=sgd", "--momentum=0.9", "--nesterov"},
    {"--optimizer=sgd", "--momentum=0.9", "--nesterov=false"},
  };
  int index = 0;
  std::vector<std::string> checksums;
  for (const auto& flags : runs) {
    std::vector<std::string> args{"--epochs=1", "--replicas=2"};
    args.insert(args.end(), flags.begin(), flags.end());
    auto run = run_mnist(dir, "flags-" + std::to_string(index++), args, run_timeout);
    INFO(run.description);
    CHECK(run.status.exited);
    CHECK(run.status.code == 0);
    const auto final_records = records_of(run.metrics, "final");
    REQUIRE(final_records.size() == 1);
    // The MLP's size: 784 x 128 + 128 + 128 x 10 + 10.
    CHECK(final_records.front().value("parameters", 0) == 101770);
    checksums.push_back(final_records.front().value("params_fnv1a64", ""));
  }
  // Pinning changes no bit; Nesterov's momentum does.
  CHECK(checksums[0] == checksums[1]);
  CHECK(checksums[2] != checksums[3]);
}
