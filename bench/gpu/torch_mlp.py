#!/usr/bin/env python3
"""The PyTorch baseline for gpu_train_bench: the same 784-128relu-10 model,
Adam (lr 1e-3, eps 1e-7), one epoch of Fashion-MNIST per batch size, data
resident on the GPU and shuffled once, timed between synchronizations.

    python3 bench/gpu/torch_mlp.py [--data DIR] [--batches 32,128,1024] [--fused]
"""
import argparse
import gzip
import os
import time

import torch


def read_idx(path, header_bytes):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        return torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)[header_bytes:]


def find(data_dir, name):
    for candidate in (name + ".gz", name):
        path = os.path.join(data_dir, candidate)
        if os.path.exists(path):
            return path
    raise FileNotFoundError(os.path.join(data_dir, name))


def train_steps(model, optimizer, images, labels, batch, steps):
    loss_fn = torch.nn.CrossEntropyLoss()
    count = images.shape[0]
    begin = 0
    for _ in range(steps):
        if begin >= count:
            begin = 0
        x = images[begin:begin + batch]
        y = labels[begin:begin + batch]
        optimizer.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        begin += x.shape[0]


def make(fused):
    torch.manual_seed(42)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10)).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7,
                                 fused=True if fused else None)
    return model, optimizer


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--batches", default="32,128,1024")
    parser.add_argument("--warmup-steps", type=int, default=50)
    parser.add_argument("--fused", action="store_true", help="Adam(fused=True)")
    args = parser.parse_args()

    # Full FP32 matrix products, as cuBLAS in the Troupe backend computes them.
    torch.backends.cuda.matmul.allow_tf32 = False
    images = read_idx(find(args.data, "train-images-idx3-ubyte"), 16)
    labels = read_idx(find(args.data, "train-labels-idx1-ubyte"), 8)
    count = labels.shape[0]
    images = (images.reshape(count, 784).float() / 255.0).cuda()
    labels = labels.long().cuda()
    order = torch.randperm(count, device="cuda", generator=None)
    images, labels = images[order].contiguous(), labels[order].contiguous()
    print(f"device {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"{count} training samples resident on the device, "
          f"Adam {'fused' if args.fused else 'default (foreach)'}")

    for batch in (int(b) for b in args.batches.split(",")):
        model, optimizer = make(args.fused)
        train_steps(model, optimizer, images, labels, batch, args.warmup_steps)
        model, optimizer = make(args.fused)
        steps = (count + batch - 1) // batch
        torch.cuda.synchronize()
        start = time.perf_counter()
        train_steps(model, optimizer, images, labels, batch, steps)
        torch.cuda.synchronize()
        elapsed = time.perf_counter() - start
        rate = count / elapsed
        print(f"batch {batch:5d}: {steps} steps, {count} samples in {elapsed:.3f} s = "
              f"{rate:.0f} samples/s ({1e6 * elapsed / steps:.1f} us/step)")
        tag = "torch_fused" if args.fused else "torch"
        print(f"RESULT {tag} batch={batch} samples_per_s={rate:.0f}")


if __name__ == "__main__":
    main()
