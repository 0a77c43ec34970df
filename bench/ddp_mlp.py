"""PyTorch DDP (gloo) on the Keras MNIST MLP: the peer bench/link_bench.sh
measures Troupe against. One rank of a world of 2: 784-128relu-10, Adam
lr 0.001, each rank half of the global batch of a seeded permutation, one
epoch of Fashion-MNIST; rank 0 prints the training loop's samples/s.

  python ddp_mlp.py RANK MASTER_ADDR DATA_DIR GLOBAL_BATCH

Needs torch (bench/link_bench.sh takes its Python from $TROUPE_TORCH_PYTHON);
Troupe itself never does."""
import gzip
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    dims = data[3]
    shape = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(dims)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def main():
    rank, master, data_dir, global_batch = (int(sys.argv[1]), sys.argv[2], sys.argv[3],
                                            int(sys.argv[4]))
    os.environ.update(MASTER_ADDR=master, MASTER_PORT="29511")
    torch.set_num_threads(1)  # two ranks on a 2-core host, as Troupe's two nodes
    dist.init_process_group("gloo", rank=rank, world_size=2)
    images = read_idx(os.path.join(data_dir, "train-images-idx3-ubyte.gz"))
    labels = read_idx(os.path.join(data_dir, "train-labels-idx1-ubyte.gz"))
    x = torch.from_numpy(images.reshape(len(images), -1).astype(np.float32) / 255.0)
    y = torch.from_numpy(labels.astype(np.int64))
    torch.manual_seed(11)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(),
                                torch.nn.Linear(128, 10))
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    optimizer = torch.optim.Adam(ddp.parameters(), lr=0.001)
    loss_fn = torch.nn.CrossEntropyLoss()
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(11))
    share = global_batch // 2
    dist.barrier()
    start = time.perf_counter()
    for first in range(0, len(order) - global_batch + 1, global_batch):
        rows = order[first + rank * share:first + (rank + 1) * share]
        optimizer.zero_grad()
        loss_fn(ddp(x[rows]), y[rows]).backward()
        optimizer.step()
    dist.barrier()
    seconds = time.perf_counter() - start
    if rank == 0:
        trained = (len(order) // global_batch) * global_batch
        print(f"{trained / seconds:.0f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
