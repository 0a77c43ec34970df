"""PyTorch on the Keras mnist_convnet: the peer bench/convnet_bench.sh measures
examples/mnist_convnet against. Conv2d 32 3x3 relu -> max pool 2 -> conv2d 64
3x3 relu -> max pool 2 -> flatten -> dropout 0.5 -> dense 10 (softmax in the
loss), NCHW, PyTorch's default initialization; Adam lr 1e-3 with Keras's
epsilon 1e-7, sparse categorical cross-entropy, batch 128 with the last
partial batch, a fresh seeded shuffle each epoch. Prints the training loop's
samples/s (every epoch's loop, nothing else timed) and the test accuracy.

  python3 torch_convnet.py [--data DIR] [--threads N] [--epochs E] [--batch-size B]

Needs torch (Debian's python3-torch is 1.13); Troupe itself never does."""
import argparse
import gzip
import os
import time

import torch


def read_idx(data_dir, name):
    """Returns an IDX file's values as a uint8 tensor of its shape."""
    path = os.path.join(data_dir, name)
    opener, path = (gzip.open, path + ".gz") if os.path.exists(path + ".gz") else (open, path)
    with opener(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return torch.frombuffer(bytearray(data[4 + 4 * dims:]), dtype=torch.uint8).reshape(shape)


def load(data_dir, prefix):
    """Returns images (N, 1, 28, 28) scaled to [0, 1] and labels (N,) as int64."""
    images = read_idx(data_dir, f"{prefix}-images-idx3-ubyte")
    labels = read_idx(data_dir, f"{prefix}-labels-idx1-ubyte")
    return images.unsqueeze(1).float().div_(255.0), labels.long()


def make_model():
    nn = torch.nn
    return nn.Sequential(nn.Conv2d(1, 32, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Dropout(0.5), nn.Linear(64 * 5 * 5, 10))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        correct = sum(int((model(x[i:i + 1000]).argmax(1) == y[i:i + 1000]).sum())
                      for i in range(0, len(x), 1000))
    model.train()
    return correct / len(x)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    x, y = load(args.data, "train")
    test_x, test_y = load(args.data, "t10k")
    torch.manual_seed(args.seed)
    model = make_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    loss_fn = torch.nn.CrossEntropyLoss()  # softmax + sparse categorical cross-entropy
    shuffle = torch.Generator().manual_seed(args.seed)

    seconds = 0.0
    samples = 0
    for epoch in range(args.epochs):
        order = torch.randperm(len(x), generator=shuffle)
        start = time.perf_counter()
        for first in range(0, len(order), args.batch_size):
            rows = order[first:first + args.batch_size]
            optimizer.zero_grad(set_to_none=True)
            loss_fn(model(x[rows]), y[rows]).backward()
            optimizer.step()
        epoch_seconds = time.perf_counter() - start
        seconds += epoch_seconds
        samples += len(order)
        test_accuracy = accuracy(model, test_x, test_y)
        print(f"epoch {epoch + 1}: {len(order) / epoch_seconds:.0f} samples/s, "
              f"test accuracy {test_accuracy:.4f}", flush=True)

    print(f"RESULT torch_convnet threads={args.threads} batch={args.batch_size} "
          f"epochs={args.epochs} samples_per_s={samples / seconds:.0f} "
          f"test_accuracy={test_accuracy:.4f} torch={torch.__version__}")


if __name__ == "__main__":
    main()
