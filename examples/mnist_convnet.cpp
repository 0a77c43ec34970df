// The Keras mnist_convnet example (Conv2D 32 3x3 relu -> MaxPooling 2x2 ->
// Conv2D 64 3x3 relu -> MaxPooling 2x2 -> Flatten -> Dropout 0.5 ->
// Dense(10, softmax); 34,826 parameters, Adam, sparse categorical
// cross-entropy, batch 128) on Troupe's public API, over N replicas here or
// on nodes, on the CPU.
//
//   build/examples/mnist_convnet --replicas=2 --epochs=3
//   build/examples/mnist_convnet --nodes=H:P,H:P --store-shards=2 --checkpoint=cnn.ck
#include <cstdio>

#include <troupe/troupe.hpp>

namespace {

int train(const troupe::command_line& cli) {
  auto data = cli.open_data(); // --train/--test, else --data-dir's IDX files
  if (!data)
    return cli.fail(data.error());

  namespace layers = troupe::layers;
  troupe::sequential model({28, 28, 1}, {layers::conv2d(32, 3, "relu"), layers::max_pool2d(2),
                                         layers::conv2d(64, 3, "relu"), layers::max_pool2d(2),
                                         layers::flatten(), layers::dropout(0.5f),
                                         layers::dense(10, "softmax")});
  model.compile(troupe::optimizers::adam(), "sparse_categorical_crossentropy", {"accuracy"});

  auto options = cli.options();
  if (!options.has("batch-size"))
    options.batch_size(128);
  auto history = model.fit(data->train, data->test, options);
  if (!history)
    return cli.fail(history.error());

  auto score = model.evaluate(*data->test);
  if (!score)
    return cli.fail(score.error());
  std::printf("Test accuracy: %.4f\n", score->accuracy);
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // a killed run keeps its last lines
  troupe::command_line cli("mnist_convnet",
                           "Trains the Keras mnist_convnet example's model on "
                           "(Fashion-)MNIST with Troupe, on the CPU.");
  if (auto exit_code = cli.parse(argc, argv))
    return *exit_code;
  return train(cli);
}
