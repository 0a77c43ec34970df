# shellcheck shell=bash disable=SC2154 # $build comes from the script sourcing this
# What the bench scripts that run node programs on loopback share. Sourced
# after setting $build (the examples' folder): checks that mnist and node are
# built, makes $work (a scratch folder) and removes it, with every node
# still running, on exit. start_node NAME starts "$build/node --port=0",
# appends its pid to `nodes` and its HOST:PORT to `addresses` (call it in
# the script's own shell, not in $(...): a subshell's `nodes` is lost, and
# its node left running).
for program in "$build/mnist" "$build/node"; do
  [ -x "$program" ] || { echo "missing $program: build first (scripts/test.sh)" >&2; exit 1; }
done
work="$(mktemp -d)"
nodes=()
addresses=()
stop_nodes_and_clean() {
  for pid in "${nodes[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop_nodes_and_clean EXIT
start_node() {
  "$build/node" --port=0 > "$work/$1.log" 2>&1 &
  local pid=$!
  nodes+=("$pid")
  # A loaded host may take seconds to start one; a node that died says why.
  for _ in $(seq 300); do
    address="$(sed -n 's/^troupe node listening on \([0-9.:]*\) (.*/\1/p' "$work/$1.log")"
    [ -n "$address" ] && { addresses+=("$address"); return; }
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "node $1 did not start:" >&2
  cat "$work/$1.log" >&2
  exit 1
}
