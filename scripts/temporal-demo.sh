#!/usr/bin/env bash
# The demo on Temporal, on this machine: a local Temporal dev server, two workers sharing
# one embedded home, and the research demo started, approved and finished through Temporal.
# Everything it starts is stopped on exit. Usage: scripts/temporal-demo.sh [BIN_DIR]
set -euo pipefail
BIN=${1:-.venv/bin}
WORK=$(mktemp -d -t execgraph-temporal-demo-XXXX)
PORT=$("$BIN/python" -c 'from execgraph.engines.temporal.dev_server import free_port; print(free_port())')
ADDRESS=127.0.0.1:$PORT
QUEUE=demo
# The workers accept only answers signed with their approval key: the workers and the
# approving command share one (a fresh one per demo).
EXECGRAPH_APPROVAL_SECRET=$("$BIN/python" -c 'import secrets; print(secrets.token_hex(32))')
export EXECGRAPH_APPROVAL_SECRET
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap cleanup EXIT

"$BIN/temporal" server start-dev --ip 127.0.0.1 --port "$PORT" --headless \
  --db-filename "$WORK/temporal.db" --log-level warn >"$WORK/server.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do
  "$BIN/temporal" operator cluster health --address "$ADDRESS" 2>/dev/null | grep -q SERVING && break
  sleep 0.2
done
echo "Temporal dev server on $ADDRESS (history in $WORK/temporal.db)"

for n in 1 2; do
  "$BIN/execgraph" worker --task-queue "$QUEUE" --address "$ADDRESS" --home "$WORK/home" \
    >"$WORK/worker-$n.log" 2>&1 &
  pids+=($!)
done
for n in 1 2; do  # each worker prints one line once it polls the task queue
  for _ in $(seq 1 300); do grep -q "ready" "$WORK/worker-$n.log" && break; sleep 0.2; done
  cat "$WORK/worker-$n.log"
done

"$BIN/execgraph" demo --engine temporal --address "$ADDRESS" --task-queue "$QUEUE" \
  --auto-approve --home "$WORK/cli"
echo "the workers' home (the published report is under workspaces/): $WORK/home"
