#!/usr/bin/env bash
# Cuts the first training and test samples out of the full Fashion-MNIST files
# into tests/data/ (the four standard .gz names), rewriting the IDX count field.
# Usage: scripts/cut_test_data.sh [source_dir] [dest_dir] [train_count] [test_count]
set -euo pipefail

src=${1:-/usr/share/datasets/fashion-mnist}
dst=${2:-"$(cd "$(dirname "$0")/.." && pwd)/tests/data"}
train_count=${3:-2000}
test_count=${4:-500}

# Writes one big-endian 32-bit value as raw bytes.
be32() {
  local v=$1 shift_by
  for shift_by in 24 16 8 0; do
    printf "\\$(printf '%03o' $(((v >> shift_by) & 255)))"
  done
}

# Finds NAME.gz or NAME in the source directory and prints it uncompressed.
# The readers stop early (head), so a SIGPIPE here is expected: pipefail is off
# for these pipelines and check_size verifies every result instead.
read_source() {
  if [[ -f "$src/$1.gz" ]]; then
    gzip -dc "$src/$1.gz" 2>/dev/null
  else
    cat "$src/$1"
  fi
}

# Fails unless the source directory holds NAME.gz or NAME.
require_source() {
  if [[ ! -f "$src/$1.gz" && ! -f "$src/$1" ]]; then
    echo "cut_test_data.sh: neither $src/$1.gz nor $src/$1 exists" >&2
    exit 1
  fi
}

# cut_images NAME COUNT: magic 2051, count, rows 28, cols 28, then COUNT*784 bytes.
cut_images() {
  local name=$1 count=$2
  {
    be32 2051; be32 "$count"; be32 28; be32 28
    read_source "$name" | tail -c +17 | head -c $((count * 784))
  } | gzip -n -9 > "$dst/$name.gz"
}

# cut_labels NAME COUNT: magic 2049, count, then COUNT bytes.
cut_labels() {
  local name=$1 count=$2
  {
    be32 2049; be32 "$count"
    read_source "$name" | tail -c +9 | head -c "$count"
  } | gzip -n -9 > "$dst/$name.gz"
}

# Checks that a cut file has exactly the expected uncompressed size.
check_size() {
  local got
  got=$(gzip -dc "$dst/$1.gz" | wc -c)
  if [[ "$got" -ne "$2" ]]; then
    echo "cut_test_data.sh: $dst/$1.gz holds $got bytes, expected $2" >&2
    exit 1
  fi
}

for name in train-images-idx3-ubyte train-labels-idx1-ubyte \
            t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  require_source "$name"
done
mkdir -p "$dst"
set +o pipefail
cut_images train-images-idx3-ubyte "$train_count"
cut_labels train-labels-idx1-ubyte "$train_count"
cut_images t10k-images-idx3-ubyte "$test_count"
cut_labels t10k-labels-idx1-ubyte "$test_count"
set -o pipefail
check_size train-images-idx3-ubyte $((16 + train_count * 784))
check_size train-labels-idx1-ubyte $((8 + train_count))
check_size t10k-images-idx3-ubyte $((16 + test_count * 784))
check_size t10k-labels-idx1-ubyte $((8 + test_count))

# Class counts, for the README: one "count label" line per class.
for name in train-labels-idx1-ubyte t10k-labels-idx1-ubyte; do
  echo "$name class counts:"
  gzip -dc "$dst/$name.gz" | tail -c +9 | od -An -v -tu1 -w1 | sort -n | uniq -c
done
