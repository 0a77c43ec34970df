// mnist --tensorboard=DIR writes Keras's layout: DIR/train and DIR/validation,
// one record of "epoch_*" scalars per epoch, each equal to the epoch's record
// in --metrics.
#include "tests/cluster/cluster_test.hpp"

#include <filesystem>
#include <map>

#include "actors/report/tensorboard_event.pb.h"
#include "tests/actors/tfrecord_reader.hpp"

using namespace troupe::cluster_test;

namespace {

// step -> tag -> value, from the one event file in `dir`.
std::map<int64_t, std::map<std::string, float>> scalars_in(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator{dir})
    files.push_back(entry.path());
  REQUIRE(files.size() == 1);
  CHECK(files.front().filename().string().rfind("events.out.tfevents.", 0) == 0);
  const auto read = troupe::testing::read_tfrecords(troupe::testing::file_bytes(files.front()));
  CHECK(read.damage.empty());
  REQUIRE(!read.records.empty());
  troupe::tensorboard::Event first;
  REQUIRE(first.ParseFromString(read.records.front()));
  CHECK(first.file_version() == "brain.Event:2");
  std::map<int64_t, std::map<std::string, float>> out;
  for (size_t i = 1; i < read.records.size(); ++i) {
    troupe::tensorboard::Event event;
    REQUIRE(event.ParseFromString(read.records[i]));
    for (const auto& value : event.summary().value())
      out[event.step()][value.tag()] = value.simple_value();
  }
  return out;
}

} // namespace

TEST_CASE("mnist --tensorboard writes each epoch's figures as TensorBoard scalars, as Keras "
          "lays them out",
          "[cluster][tensorboard]") {
  temp_dir dir{"troupe-cluster"};
  const auto logs = dir.file("logs");
  auto run = run_mnist(dir, "tensorboard", {"--epochs=3", "--replicas=2",
                                            "--tensorboard=" + logs, "--lr=0.002"},
                       run_timeout);
  INFO(run.description);
  REQUIRE(run.status.exited);
  REQUIRE(run.status.code == 0);
  const auto train = scalars_in(logs + "/train");
  const auto validation = scalars_in(logs + "/validation");
  const auto epochs = records_of(run.metrics, "epoch");
  REQUIRE(epochs.size() == 3);
  REQUIRE(train.size() == 3);
  REQUIRE(validation.size() == 3);
  for (const auto& record : epochs) {
    const int64_t step = record["epoch"].get<int64_t>();
    INFO("epoch " << step);
    CHECK(train.at(step).at("epoch_loss") == Approx(record["loss"].get<double>()));
    CHECK(train.at(step).at("epoch_accuracy") == Approx(record["accuracy"].get<double>()));
    CHECK(train.at(step).at("epoch_learning_rate") == 0.002f);
    CHECK(train.at(step).at("epoch_samples_per_second") > 0);
    CHECK(validation.at(step).at("epoch_loss") == Approx(record["test_loss"].get<double>()));
    CHECK(validation.at(step).at("epoch_accuracy")
          == Approx(record["test_accuracy"].get<double>()));
  }
}
