// The Keras MNIST example (MLP 784 -> Dense(128, relu) -> Dense(10, softmax),
// Adam, sparse categorical cross-entropy, 5 epochs) on Troupe's public API:
// in sync or async mode, over N replicas here or on nodes.
//
//   build/examples/mnist --mode=sync --replicas=2 --epochs=5 --batch-size=32
//   build/examples/mnist --train=X.npy,y.npy --test=Xt.npy,yt.npy --save=model.troupe
//   build/examples/mnist --help
#include <cstdio>

#include <troupe/troupe.hpp>

namespace {

int train(const troupe::command_line& cli) {
  auto data = cli.open_data(); // --train/--test, else --data-dir's IDX files
  if (!data)
    return cli.fail(data.error());

  troupe::sequential model(784, {troupe::layers::dense(128, "relu"),
                                 troupe::layers::dense(10, "softmax")});
  model.compile(troupe::optimizers::adam(1e-3f), "sparse_categorical_crossentropy",
                {"accuracy"});

  auto history = model.fit(data->train, data->test, cli.options());
  if (!history)
    return cli.fail(history.error());

  auto score = model.evaluate(*data->test);
  if (!score)
    return cli.fail(score.error());
  if (data->test->regression()) // --loss=mse on float targets
    std::printf("Test loss: %.4f\n", score->loss);
  else
    std::printf("Test accuracy: %.4f\n", score->accuracy);
  return 0; // fit wrote --save and --export-onnx, if given
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // a killed run keeps its last lines
  troupe::command_line cli("mnist", "Trains the Keras MNIST example's model on "
                                    "(Fashion-)MNIST with Troupe: replicas and a variable "
                                    "store as CAF actors.");
  if (auto exit_code = cli.parse(argc, argv))
    return *exit_code;
  return train(cli);
}
