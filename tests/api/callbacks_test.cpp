// Callbacks that steer a fit: they run on the caller's thread, stop a run or
// end it with their exception, and the built-in ones do what Keras's do;
// quiet() prints nothing, and --save/--export-onnx are carried out.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <troupe/troupe.hpp>

#include "api_fixture.hpp"
#include "captured_output.hpp"

namespace {

using api_fixture::quiet_run;
using api_fixture::slice;
using api_fixture::small_mlp;

// Keeps each epoch's figures and model, and the thread each call ran on.
class recorder final : public troupe::callback {
public:
  troupe::fit_action on_epoch_end(const troupe::epoch_result& epoch,
                                  const troupe::trained_model& model) override {
    epochs.push_back(epoch);
    models.push_back(model);
    threads.push_back(std::this_thread::get_id());
    return troupe::fit_action::go_on;
  }
  void on_train_end(troupe::history&) override { ended = true; }

  std::vector<troupe::epoch_result> epochs;
  std::vector<troupe::trained_model> models;
  std::vector<std::thread::id> threads;
  bool ended = false;
};

uint64_t checksum_of(const troupe::fit_options& options) {
  auto model = small_mlp();
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  return history->params_fnv1a64;
}


} // namespace

TEST_CASE("an epoch callback that throws ends the fit at once with the exception's message",
          "[api][callbacks]") {
  auto model = small_mlp();
  auto options = quiet_run().epochs(50);
  options.on_epoch = [](const troupe::epoch_result& e) {
    if (e.epoch == 1)
      throw std::runtime_error("the validation metric went missing");
  };
  const auto start = std::chrono::steady_clock::now();
  auto history = model.fit(slice().train, slice().test, options);
  const double seconds =
    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE_FALSE(history);
  CHECK(history.error().code == troupe::errc::run_failed);
  CHECK_THAT(history.error().message,
             Catch::Contains("after epoch 1 threw: the validation metric went missing"));
  CHECK(seconds < 5.0);
}

TEST_CASE("callbacks run on the thread that called fit, after each epoch, in order",
          "[api][callbacks]") {
  auto model = small_mlp();
  auto options = quiet_run().epochs(3);
  auto seen = std::make_shared<recorder>();
  std::vector<std::thread::id> on_epoch_threads;
  options.on_epoch = [&](const troupe::epoch_result&) {
    on_epoch_threads.push_back(std::this_thread::get_id());
  };
  options.callbacks.push_back(seen);
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  const auto here = std::this_thread::get_id();
  CHECK(on_epoch_threads == std::vector<std::thread::id>(3, here));
  CHECK(seen->threads == std::vector<std::thread::id>(3, here));
  CHECK(seen->ended);
  REQUIRE(seen->epochs.size() == 3);
  for (size_t i = 0; i < 3; ++i)
    CHECK(seen->epochs[i].val_loss == history->epochs[i].val_loss);
  // The last epoch's model is the one the fit returns.
  CHECK(seen->models.back().parameters() == history->model.parameters());
}

TEST_CASE("an epoch callback returning stop ends the run after that epoch, with its "
          "parameters",
          "[api][callbacks]") {
  auto model = small_mlp();
  auto options = quiet_run().epochs(6);
  options.on_epoch = [](const troupe::epoch_result& e) {
    return e.epoch == 2 ? troupe::fit_action::stop : troupe::fit_action::go_on;
  };
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  CHECK(history->epochs.size() == 2);
  CHECK(history->params_fnv1a64 == checksum_of(quiet_run().epochs(2)));
}

TEST_CASE("early_stopping stops once the monitor has not improved for patience epochs, and "
          "restore_best returns the best epoch's model",
          "[api][callbacks]") {
  // No epoch improves val_loss by 100 on the first one's: epochs 2 and 3
  // use up a patience of 2, and the run stops after epoch 3.
  auto model = small_mlp();
  auto options = quiet_run().epochs(10);
  options.callbacks.push_back(troupe::callbacks::early_stopping("val_loss", 2, 100.0, true));
  auto seen = std::make_shared<recorder>();
  options.callbacks.push_back(seen);
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  CHECK(history->epochs.size() == 3);
  // Restored: the first epoch's model, figures and checksum.
  CHECK(history->model.parameters() == seen->models.front().parameters());
  CHECK(history->val_loss == seen->epochs.front().val_loss);
  CHECK(history->params_fnv1a64 == checksum_of(quiet_run().epochs(1)));

  auto keep_last = quiet_run().epochs(10);
  keep_last.callbacks.push_back(troupe::callbacks::early_stopping("val_loss", 2, 100.0));
  auto last = small_mlp().fit(slice().train, slice().test, keep_last);
  REQUIRE(last);
  CHECK(last->epochs.size() == 3);
  CHECK(last->params_fnv1a64 == checksum_of(quiet_run().epochs(3)));
}

TEST_CASE("save_best keeps the model of the best epoch, and csv_logger a line per epoch",
          "[api][callbacks]") {
  const std::string best_path = "callbacks_test_best.troupe";
  const std::string csv_path = "callbacks_test_log.csv";
  auto model = small_mlp();
  auto options = quiet_run().epochs(4);
  options.callbacks.push_back(troupe::callbacks::save_best(best_path, "val_loss"));
  options.callbacks.push_back(troupe::callbacks::csv_logger(csv_path));
  auto seen = std::make_shared<recorder>();
  options.callbacks.push_back(seen);
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE(history);
  size_t best = 0;
  for (size_t i = 1; i < seen->epochs.size(); ++i)
    if (seen->epochs[i].val_loss < seen->epochs[best].val_loss)
      best = i;
  auto saved = troupe::load_model(best_path);
  REQUIRE(saved);
  CHECK(saved->parameters() == seen->models[best].parameters());
  std::ifstream csv{csv_path};
  std::string line;
  std::getline(csv, line);
  CHECK(line.rfind("epoch,loss,accuracy,val_loss,val_accuracy", 0) == 0);
  for (const auto& epoch : history->epochs) {
    REQUIRE(std::getline(csv, line));
    std::istringstream fields{line};
    std::string field;
    std::vector<double> values;
    while (std::getline(fields, field, ','))
      values.push_back(std::stod(field));
    REQUIRE(values.size() >= 5);
    CHECK(values[0] == epoch.epoch);
    CHECK(values[1] == Approx(epoch.loss).epsilon(1e-8));
    CHECK(values[4] == Approx(epoch.val_accuracy).epsilon(1e-8));
  }
  CHECK_FALSE(std::getline(csv, line));
  std::remove(best_path.c_str());
  std::remove(csv_path.c_str());
}

TEST_CASE("a callback that monitors a figure the fit does not report is refused before "
          "training",
          "[api][callbacks]") {
  auto model = small_mlp();
  auto options = quiet_run();
  options.callbacks.push_back(troupe::callbacks::early_stopping("val_top5"));
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE_FALSE(history);
  CHECK(history.error().code == troupe::errc::invalid_argument);
  CHECK_THAT(history.error().message, Catch::Contains("'val_top5'"));
}

TEST_CASE("quiet() prints nothing, and --save and --export-onnx are written by fit",
          "[api][callbacks]") {
  const std::string saved_path = "callbacks_test_saved.troupe";
  const std::string onnx_path = "callbacks_test_saved.onnx";
  troupe::expected<troupe::history> history = troupe::fail(troupe::errc::run_failed, "");
  const auto printed = api_fixture::captured_output("callbacks_test_output.txt", true, [&] {
    auto model = small_mlp();
    auto options = quiet_run();
    options.set("save", saved_path).set("export-onnx", onnx_path);
    history = model.fit(slice().train, slice().test, options);
  });
  REQUIRE(history);
  CHECK(printed.empty());
  auto saved = troupe::load_model(saved_path);
  REQUIRE(saved);
  CHECK(saved->parameters() == history->model.parameters());
  std::ifstream onnx{onnx_path, std::ios::binary};
  CHECK(onnx.good());
  std::remove(saved_path.c_str());
  std::remove(onnx_path.c_str());
}

TEST_CASE("a label out of the model's outputs names the set, its file, the sample and the "
          "label",
          "[api][data]") {
  // 8 features, classes 0..3, and one label 4 in the test file's sample 5.
  auto write_csv = [](const std::string& path, int bad_sample) {
    std::ofstream out{path};
    out << "a,b,c,d,e,f,g,h,label\n";
    for (int i = 0; i < 40; ++i) {
      for (int f = 0; f < 8; ++f)
        out << (i * 8 + f) % 7 << ",";
      out << (i == bad_sample ? 4 : i % 4) << "\n";
    }
  };
  write_csv("label_train.csv", -1);
  write_csv("label_test.csv", 5);
  auto train = troupe::open_data("label_train.csv");
  auto test = troupe::open_data("label_test.csv");
  REQUIRE(train);
  REQUIRE(test);
  troupe::sequential model(8, {troupe::layers::dense(4, "relu"),
                               troupe::layers::dense(4, "softmax")});
  model.compile(troupe::optimizers::adam(), "sparse_categorical_crossentropy", {"accuracy"});
  auto refused = model.fit(*train, *test, quiet_run().batch_size(8));
  std::remove("label_train.csv");
  std::remove("label_test.csv");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == troupe::errc::invalid_argument);
  CHECK_THAT(refused.error().message,
             Catch::Contains("the test data (label_test.csv) has label 4 at sample 5"));
  CHECK_THAT(refused.error().message,
             Catch::Contains("model 8-4relu-4 has 4 outputs: labels must lie in 0..3"));
}

TEST_CASE("request_stop ends a fit gracefully: a stopped error that says where, and its "
          "checkpoint",
          "[api][callbacks][stop]") {
  const std::string checkpoint = "callbacks_test_stopped.troupe";
  auto model = small_mlp();
  auto options = quiet_run().epochs(5);
  options.set("checkpoint", checkpoint);
  options.on_epoch = [](const troupe::epoch_result& e) {
    if (e.epoch == 2)
      troupe::request_stop();
  };
  auto history = model.fit(slice().train, slice().test, options);
  REQUIRE_FALSE(history);
  CHECK(history.error().code == troupe::errc::stopped);
  CHECK_THAT(history.error().message, Catch::Contains("stopped after epoch 2 of 5"));
  CHECK_THAT(history.error().message, Catch::Contains("resume with --resume=" + checkpoint));
  std::ifstream written{checkpoint, std::ios::binary};
  CHECK(written.good());
  std::remove(checkpoint.c_str());
  // A later fit is not stopped by the request an earlier one took.
  auto later = small_mlp().fit(slice().train, slice().test, quiet_run());
  CHECK(later);
}

TEST_CASE("a fit started from a trained model's weights fine-tunes it with a fresh optimizer, "
          "and refuses another model's",
          "[api][fine_tuning]") {
  auto first = small_mlp();
  auto trained = first.fit(slice().train, slice().test, quiet_run().epochs(3));
  REQUIRE(trained);
  // At a learning rate of 1e-12 the run keeps the weights it started from:
  // Adam moves each by at most about that much a step.
  auto still = small_mlp();
  still.compile(troupe::optimizers::adam(1e-12f), "sparse_categorical_crossentropy");
  auto kept = still.fit(slice().train, slice().test,
                        quiet_run().epochs(1).start_from(trained->model));
  REQUIRE(kept);
  const auto& before = trained->model.parameters();
  const auto& after = kept->model.parameters();
  REQUIRE(after.size() == before.size());
  double moved = 0;
  for (size_t i = 0; i < before.size(); ++i)
    moved = std::max(moved, std::abs(double(after[i]) - double(before[i])));
  CHECK(moved < 1e-9);
  // At the usual rate it goes on from there: its first epoch beats a fresh start's.
  auto tuned = small_mlp().fit(slice().train, slice().test,
                               quiet_run().epochs(1).start_from(trained->model));
  auto fresh = small_mlp().fit(slice().train, slice().test, quiet_run().epochs(1));
  REQUIRE(tuned);
  REQUIRE(fresh);
  CHECK(tuned->epochs.front().loss < fresh->epochs.front().loss);
  CHECK(tuned->epochs.front().loss < trained->epochs.front().loss);
  troupe::sequential other(784, {troupe::layers::dense(16, "relu"),
                                 troupe::layers::dense(10, "softmax")});
  other.compile(troupe::optimizers::adam(), "sparse_categorical_crossentropy");
  auto refused = other.fit(slice().train, slice().test,
                           quiet_run().epochs(1).start_from(trained->model));
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == troupe::errc::invalid_argument);
  CHECK_THAT(refused.error().message, Catch::Contains("the saved model is 784-32relu-10"));
}
