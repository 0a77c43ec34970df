// Data sources through the public API: a user's own source trains to the
// bits of the same samples in memory, registered kinds open by name, and
// what a source gives wrong stops the run with the sample named.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"

namespace {

using api_fixture::quiet_run;
using api_fixture::small_mlp;

const troupe::dataset& train_slice() { return api_fixture::slice().train; }
const troupe::dataset& test_slice() { return api_fixture::slice().test; }

// Serves the first `rows` samples of a dataset through its own gather,
// counting the rows asked for; `bad_row` (if below rows) gets label 12.
class user_source final : public troupe::data_source {
public:
  user_source(const troupe::dataset& data, size_t rows, size_t bad_row = SIZE_MAX)
    : data_(data), rows_(rows), bad_row_(bad_row) {}

  size_t size() const override { return rows_; }
  int features() const override { return data_.features; }
  int classes() const override { return data_.classes; }
  void gather(const uint32_t* indices, size_t count, float* features_out, int32_t* labels_out,
              float*) const override {
    for (size_t i = 0; i < count; ++i) {
      std::memcpy(features_out + i * data_.features, data_.input(indices[i]),
                  sizeof(float) * data_.features);
      if (labels_out != nullptr)
        labels_out[i] = indices[i] == bad_row_ ? 12 : data_.labels[indices[i]];
    }
    gathered += count;
  }

  mutable std::atomic<size_t> gathered{0};

private:
  const troupe::dataset& data_;
  size_t rows_;
  size_t bad_row_;
};

// The first `rows` samples of `data` labelled 0, 1 or 2, filled in by hand
// with `classes` left as it starts.
troupe::dataset first_three_classes(const troupe::dataset& data, int rows) {
  troupe::dataset mine;
  mine.features = data.features;
  for (int i = 0; i < data.count && mine.count < rows; ++i) {
    if (data.labels[i] > 2)
      continue;
    mine.inputs.insert(mine.inputs.end(), data.input(i), data.input(i) + data.features);
    mine.labels.push_back(data.labels[i]);
    ++mine.count;
  }
  return mine;
}

} // namespace

TEST_CASE("a source of the user's trains to the bits of the same samples in memory",
          "[api][data][source]") {
  const auto& train = train_slice();
  auto own = std::make_shared<user_source>(train, static_cast<size_t>(train.count));
  auto model = small_mlp();
  auto through_source = model.fit(own, troupe::in_memory(test_slice()), quiet_run());
  REQUIRE(through_source);
  CHECK(own->gathered == 2 * static_cast<size_t>(train.count)); // every sample, each epoch
  auto in_memory = small_mlp().fit(train, test_slice(), quiet_run());
  REQUIRE(in_memory);
  CHECK(through_source->params_fnv1a64 == in_memory->params_fnv1a64);
  CHECK(through_source->val_accuracy == in_memory->val_accuracy);

  // Evaluation and prediction read a source in chunks, to the same figures.
  auto test_source = std::make_shared<user_source>(train, 1500);
  auto scored = model.evaluate(*test_source);
  auto first_rows = test_source->rows(0, 1500);
  auto scored_rows = model.evaluate(first_rows);
  REQUIRE(scored);
  REQUIRE(scored_rows);
  CHECK(scored->samples == 1500);
  CHECK(scored->accuracy == scored_rows->accuracy);
  CHECK(scored->loss == scored_rows->loss);
  CHECK(*model.predict(*test_source) == *model.predict(first_rows));
}

TEST_CASE("a label out of range from a source stops the run, naming the sample",
          "[api][data][source]") {
  const auto& train = train_slice();
  auto bad = std::make_shared<user_source>(train, static_cast<size_t>(train.count), 77);
  auto refused = small_mlp().fit(bad, troupe::in_memory(test_slice()), quiet_run().epochs(1));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == troupe::errc::bad_data);
  CHECK_THAT(refused.error().message, Catch::Contains("sample 77 has label 12"));
  auto bad_test = std::make_shared<user_source>(test_slice(), 500, 3);
  auto model = small_mlp();
  auto scored = model.fit(troupe::in_memory(train), bad_test, quiet_run().epochs(1));
  REQUIRE_FALSE(scored);
  CHECK_THAT(scored.error().message, Catch::Contains("the test set"));
  CHECK_THAT(scored.error().message, Catch::Contains("sample 3 has label 12"));
  auto null_source = small_mlp().fit(nullptr, bad_test, quiet_run());
  REQUIRE_FALSE(null_source);
  CHECK(null_source.error().code == troupe::errc::invalid_argument);
}

TEST_CASE("a registered kind of source opens by name with its settings",
          "[api][data][source]") {
  REQUIRE(troupe::register_data_source(
    "api-first-rows",
    [](const std::string& settings, troupe::data_split split)
      -> troupe::expected<std::shared_ptr<const troupe::data_source>> {
      if (settings.rfind("rows=", 0) != 0)
        return troupe::fail(troupe::errc::invalid_argument, "settings are rows=N");
      const auto& data = split == troupe::data_split::train ? train_slice() : test_slice();
      return std::shared_ptr<const troupe::data_source>(
        std::make_shared<user_source>(data, std::stoul(settings.substr(5))));
    }));
  auto opened = troupe::open_data("api-first-rows:rows=100");
  REQUIRE(opened);
  CHECK((*opened)->size() == 100);
  const auto rows = (*opened)->rows(10, 2);
  CHECK(rows.labels[1] == train_slice().labels[11]);
  CHECK(std::memcmp(rows.input(1), train_slice().input(11), 784 * sizeof(float)) == 0);
  auto test_half = troupe::open_data("api-first-rows:rows=5", troupe::data_split::test);
  REQUIRE(test_half);
  CHECK((*test_half)->rows(0, 1).labels[0] == test_slice().labels[0]);

  auto bad_settings = troupe::open_data("api-first-rows:count=3");
  REQUIRE_FALSE(bad_settings);
  CHECK_THAT(bad_settings.error().message,
             Catch::Contains("data source 'api-first-rows:count=3': settings are rows=N"));
  auto unknown = troupe::open_data("no-such-kind:rows=3");
  REQUIRE_FALSE(unknown);
  CHECK_THAT(unknown.error().message,
             Catch::Contains("no data source is registered as 'no-such-kind'"));
  auto badly_named = troupe::register_data_source("first rows", nullptr);
  REQUIRE_FALSE(badly_named);
  CHECK_THAT(badly_named.error().message, Catch::Contains("is not a kind name"));

  // Built-in sources open through the same call, held in memory.
  auto idx = troupe::open_data(TROUPE_TEST_DATA_DIR, troupe::data_split::test);
  REQUIRE(idx);
  CHECK((*idx)->size() == static_cast<size_t>(test_slice().count));
  CHECK((*idx)->name() == TROUPE_TEST_DATA_DIR);
}

TEST_CASE("a program's command line opens --train and --test as sources or loads them into "
          "memory, built-in or registered alike",
          "[api][data][source]") {
  REQUIRE(troupe::register_data_source(
    "api-cli-rows",
    [](const std::string&, troupe::data_split split)
      -> troupe::expected<std::shared_ptr<const troupe::data_source>> {
      return std::shared_ptr<const troupe::data_source>(std::make_shared<user_source>(
        split == troupe::data_split::train ? train_slice() : test_slice(), 40));
    }));
  auto parsed = [](std::vector<std::string> args) {
    auto cli = std::make_unique<troupe::command_line>("api_test", "A test program.");
    args.insert(args.begin(), "api_test");
    std::vector<char*> argv;
    for (auto& arg : args)
      argv.push_back(arg.data());
    REQUIRE_FALSE(cli->parse(static_cast<int>(argv.size()), argv.data()));
    return cli;
  };
  const std::string dir = TROUPE_TEST_DATA_DIR;
  auto idx = parsed({"--train=" + dir, "--test=" + dir});
  auto loaded = idx->load_data();
  REQUIRE(loaded);
  CHECK(loaded->train.inputs == train_slice().inputs);
  CHECK(loaded->test.labels == test_slice().labels);
  CHECK(loaded->train.source == dir);
  auto opened = idx->open_data();
  REQUIRE(opened);
  CHECK(opened->train->size() == static_cast<size_t>(train_slice().count));
  auto registered = parsed({"--train=api-cli-rows", "--test=api-cli-rows"});
  auto copied = registered->load_data();
  REQUIRE(copied);
  CHECK(copied->train.count == 40);
  CHECK(copied->test.labels[39] == test_slice().labels[39]);
  auto lonely = parsed({"--train=" + dir})->open_data();
  REQUIRE_FALSE(lonely);
  CHECK_THAT(lonely.error().message, Catch::Contains("--train needs its twin"));
}

TEST_CASE("a dataset filled by hand with classes left 0 trains with its largest label + 1 "
          "classes",
          "[api][data][classes]") {
  const auto train = first_three_classes(train_slice(), 240);
  const auto test = first_three_classes(test_slice(), 60);
  REQUIRE(train.count == 240);
  REQUIRE(train.classes == 0);
  const auto source = troupe::in_memory(train);
  CHECK(source->classes() == 3);
  CHECK(source->rows(0, 4).classes == 3);
  CHECK(troupe::in_memory(troupe::dataset())->classes() == 0);

  const auto optimizer = troupe::optimizers::adam();
  const auto options = quiet_run().epochs(1);
  // Ten outputs take labels 0..2, as Keras's would.
  auto fitted = troupe::fit("784-16relu-10", optimizer, train, test, options);
  REQUIRE(fitted);
  CHECK(fitted->epochs.size() == 1);
  // The run counts three classes: a weight for class 3 has no class to weigh.
  auto weighed =
    troupe::fit("784-16relu-10", optimizer, train, test,
                troupe::fit_options(options).class_weights({{3, 2.0f}}));
  REQUIRE_FALSE(weighed);
  CHECK_THAT(weighed.error().message, Catch::Contains("the data has classes 0..2"));
  // Two outputs leave label 2 without one, before the run starts.
  auto narrow = troupe::fit("784-2", optimizer, train, test, options);
  REQUIRE_FALSE(narrow);
  CHECK(narrow.error().code == troupe::errc::invalid_argument);
  CHECK_THAT(narrow.error().message, Catch::Contains("labels must lie in 0..1"));
}
