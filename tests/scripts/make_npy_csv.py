#!/usr/bin/python3
"""Converts an IDX (Fashion-)MNIST directory into .npy and CSV data sources.

    make_npy_csv.py IDX_DIR OUT_DIR [--csv-samples N]

Reads train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
and t10k-labels-idx1-ubyte from IDX_DIR (NAME.gz wins over NAME, as Troupe's
loader picks) and writes into OUT_DIR:

    train_X.npy, test_X.npy   uint8 pixels shaped (samples, rows * cols)
    train_y.npy, test_y.npy   uint8 labels shaped (samples,)
    train.csv, test.csv       columns p0..pK (pixels / 255 as float32, printed
                              with repr) and label; the first N samples of each
                              split with --csv-samples N, else all of them

Troupe loads them as OUT_DIR/train_X.npy,OUT_DIR/train_y.npy and
OUT_DIR/train.csv, with the same floats as the IDX directory, bit for bit.
Needs numpy only. Exits 2 with a message naming the file on bad input.
"""
import argparse
import gzip
import os
import sys

import numpy as np

IMAGES_MAGIC = 2051
LABELS_MAGIC = 2049


def fail(message):
    print(f"make_npy_csv.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_idx(directory, name, magic, dims):
    """Returns the payload of DIR/NAME(.gz) as a uint8 array shaped by its header."""
    path = os.path.join(directory, name + ".gz")
    if not os.path.exists(path):
        path = os.path.join(directory, name)
    if not os.path.exists(path):
        fail(f"{directory}: missing {name} (looked for {name}.gz and {name})")
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    header_size = 4 + 4 * dims
    if len(data) < header_size:
        fail(f"{path}: truncated IDX header")
    header = np.frombuffer(data, dtype=">u4", count=1 + dims)
    if header[0] != magic:
        fail(f"{path}: wrong magic number {header[0]}, expected {magic}")
    shape = tuple(int(d) for d in header[1:])
    payload = np.frombuffer(data, dtype=np.uint8, offset=header_size)
    if payload.size != int(np.prod(shape)):
        fail(f"{path}: the header promises {shape} bytes but {payload.size} follow it")
    return payload.reshape(shape)


def read_split(directory, prefix):
    images = read_idx(directory, f"{prefix}-images-idx3-ubyte", IMAGES_MAGIC, 3)
    labels = read_idx(directory, f"{prefix}-labels-idx1-ubyte", LABELS_MAGIC, 1)
    if images.shape[0] != labels.shape[0]:
        fail(f"{directory}: {prefix} has {images.shape[0]} images but {labels.shape[0]} labels")
    return images.reshape(images.shape[0], -1), labels


def write_csv(path, images, labels):
    # float32 division, as Troupe scales IDX pixels; only 256 values can occur.
    scaled = np.arange(256, dtype=np.float32) / np.float32(255)
    text = [repr(float(v)) for v in scaled]
    with open(path, "w", newline="\n") as f:
        f.write(",".join(f"p{j}" for j in range(images.shape[1])) + ",label\n")
        for row, label in zip(images, labels):
            f.write(",".join(text[p] for p in row.tolist()) + f",{int(label)}\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("idx_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--csv-samples", type=int, default=None, metavar="N",
                        help="write only the first N samples of each split to the CSVs")
    args = parser.parse_args()
    if args.csv_samples is not None and args.csv_samples < 1:
        fail(f"--csv-samples must be at least 1, got {args.csv_samples}")
    if not os.path.isdir(args.idx_dir):
        fail(f"{args.idx_dir}: not a directory")
    splits = {split: read_split(args.idx_dir, prefix)
              for split, prefix in (("train", "train"), ("test", "t10k"))}
    os.makedirs(args.out_dir, exist_ok=True)
    for split, (images, labels) in splits.items():
        np.save(os.path.join(args.out_dir, f"{split}_X.npy"), np.ascontiguousarray(images))
        np.save(os.path.join(args.out_dir, f"{split}_y.npy"), np.ascontiguousarray(labels))
        rows = images.shape[0] if args.csv_samples is None else args.csv_samples
        write_csv(os.path.join(args.out_dir, f"{split}.csv"), images[:rows], labels[:rows])


if __name__ == "__main__":
    main()
