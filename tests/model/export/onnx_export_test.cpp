// Tests for the ONNX export: the exported graph, checked by onnx.checker and
// evaluated independently with numpy (tests/scripts/check_onnx.py), gives
// the logits Troupe computes.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "model/backend/cpu/eigen_backend.hpp"
#include "model/export/onnx_export.hpp"
#include "model/parameter_layout.hpp"
#include "model/predict.hpp"
#include "model/train/local_trainer.hpp"
#include "tests/model/export/npy_file.hpp"
#include "tests/model/export/test_files.hpp"
#include "tests/test_slice.hpp"

using namespace troupe;

namespace {

// Exports `params` for `spec`, writes the test set and Troupe's logits for
// it as .npy files, and requires check_onnx.py to pass on them.
void require_onnx_matches_troupe(const model_spec& spec, const std::vector<float>& params) {
  const dataset& test = test_slice().test;
  temp_dir dir;
  const std::string model_path = dir.file("model.onnx");
  auto exported = export_onnx(model_path, spec, params.data());
  INFO((exported ? std::string() : exported.error().message));
  REQUIRE(exported);
  const auto rows = static_cast<size_t>(test.count);
  const auto classes = static_cast<size_t>(spec.classes());
  std::vector<float> logits(rows * classes);
  predict_logits(spec, params.data(), test.inputs.data(), rows, logits.data());
  REQUIRE(write_npy(dir.file("x.npy"), test.inputs.data(), rows, test.features));
  REQUIRE(write_npy(dir.file("logits.npy"), logits.data(), rows, classes));

  const std::string output = dir.file("check_onnx.txt");
  const std::string command = std::string("'") + TROUPE_PYTHON3 + "' '" + TROUPE_CHECK_ONNX_SCRIPT
                              + "' '" + model_path + "' '" + dir.file("x.npy") + "' '"
                              + dir.file("logits.npy") + "' > '" + output + "' 2>&1";
  const int raw = std::system(command.c_str());
  const int code = raw != -1 && WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  INFO("command: " << command << "\nit printed:\n" << read_bytes(output));
  REQUIRE(code == 0);
}

} // namespace

TEST_CASE("a trained 784-128relu-10 exported to ONNX computes Troupe's logits",
          "[export][onnx]") {
  auto spec = parse_model_spec("784-128relu-10");
  REQUIRE(spec);
  auto compute = make_eigen_backend();
  auto trainer = local_trainer::make(*spec, *compute, optimizer_config{}, 11, 64);
  REQUIRE(trainer);
  trainer->run_epoch(test_slice().train, 0);
  require_onnx_matches_troupe(*spec, trainer->parameters());
}

TEST_CASE("a three-layer 784-64relu-32relu-10 exports to ONNX with Troupe's logits",
          "[export][onnx]") {
  auto spec = parse_model_spec("784-64relu-32relu-10");
  REQUIRE(spec);
  require_onnx_matches_troupe(*spec, glorot_uniform_parameters(parameter_layout(*spec), 5));
}

TEST_CASE("export_onnx refuses an empty spec and reports an unwritable path",
          "[export][onnx]") {
  temp_dir dir;
  const std::vector<float> none;
  auto empty = export_onnx(dir.file("empty.onnx"), model_spec{}, none.data());
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == errc::invalid_argument);
  auto spec = parse_model_spec("4-3");
  REQUIRE(spec);
  const std::vector<float> params(15, 0.5f);
  const std::string nowhere = dir.file("no/such/dir/model.onnx");
  auto unwritable = export_onnx(nowhere, *spec, params.data());
  REQUIRE_FALSE(unwritable);
  CHECK(unwritable.error().code == errc::io);
  CHECK(unwritable.error().message.find(nowhere) != std::string::npos);
  CHECK(std::filesystem::is_empty(dir.path));
}
