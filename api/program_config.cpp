// The options of a training program.
#include "api/program_config.hpp"

#include "messages/errors.hpp"

namespace troupe::detail {

program_config::program_config(const std::string& program, const std::string& about)
  : cluster_config(program, about) {
  const auto t = option_group::training;
  bind(t, train, "train",
       "training data: an IDX directory, X.npy,y.npy or file.csv[:label=COLUMN] (default: "
       "--data-dir's IDX files); nodes read it from their own disk",
       option_hint{"SOURCE"});
  bind(t, test, "test", "test data, scored after each epoch: as --train", option_hint{"SOURCE"});
  bind(t, start_from, "start-from",
       "start from the weights of this saved model (as --save writes it; the same model) "
       "with a fresh optimizer: fine-tuning",
       option_hint{"FILE"});
  bind(t, loss, "loss",
       "sparse_categorical_crossentropy (class labels) or mse (float targets, a built-in "
       "model with a linear output)",
       option_hint{}.otherwise("what the program compiled"));
  const auto o = option_group::output;
  bind(o, metrics, "metrics",
       "write JSON lines to this file: one per epoch, then a final record", option_hint{"FILE"});
  bind(o, tensorboard, "tensorboard",
       "write TensorBoard event files of each epoch's figures to DIR/train and "
       "DIR/validation, as Keras's TensorBoard callback lays them out",
       option_hint{"DIR"});
  bind(o, progress, "progress",
       "auto (a live bar on a terminal, else lines), bar, lines (one per epoch) or off");
  bind(o, log_every, "log-every",
       "with --metrics, also a step record (loss, samples, time) every N steps (0: none)",
       option_hint{}.in("optimizer steps"));
  bind(o, save, "save", "write the trained model (Troupe's saved-model format) to this file",
       option_hint{"FILE"});
  bind(o, export_onnx, "export-onnx", "write the trained model as an ONNX model to this file",
       option_hint{"FILE"});
}

caf::error program_config::check_output_options() const {
  if (!loss.empty() && loss != "sparse_categorical_crossentropy" && loss != "mse")
    return make_troupe_error(troupe_errc::bad_config,
                             "--loss: '" + loss
                               + "' (expected sparse_categorical_crossentropy or mse)");
  if (progress != "auto" && progress != "bar" && progress != "lines" && progress != "off")
    return make_troupe_error(troupe_errc::bad_config,
                             "--progress: '" + progress + "' (expected auto, bar, lines or off)");
  if (log_every > 0 && metrics.empty())
    return make_troupe_error(troupe_errc::bad_config, "--log-every needs --metrics=FILE");
  return caf::none;
}

} // namespace troupe::detail
