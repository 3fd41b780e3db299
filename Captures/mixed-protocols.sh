#!/usr/bin/env bash
# Records Captures/mixed-protocols.jsonl: clients of four packs through ONE recording proxy
# whose routes send each path to its own simulator server (`--route 127.0.0.1/PATH=...`):
#   /app/sim-key      faultline sim client (Bird): client events on a channel whose
#                     subscription the server refused (trigger.unsubscribed)
#   /socket.io/       python-socketio 5.18's Client     -> sim server --protocol socketio
#   /graphql          gql 4.4's websockets transport    -> sim server --protocol graphql-ws,
#                     its first connection reset after 1 s (conn=3) and the app never
#                     subscribing again within the 10 s window (channels.resubscribe)
#   /hub              pysignalr 1.3.3                   -> sim server --protocol signalr
# One after another, each a second or two (the graphql-ws client 12.5 s). Without --spec, analyze judges each client by
# the pack detected on its own upgrade and first messages (docs/protocols.md); see
# Captures/README.md and expected.json for what it must find.
#
# Usage: Captures/mixed-protocols.sh   (FAULTLINE=path picks the binary; needs Tools/setup's .venv)
set -euo pipefail
cd "$(dirname "$0")/.."
FAULTLINE=${FAULTLINE:-.build/debug/faultline}
PYTHON=${FAULTLINE_PYTHON:-$PWD/.venv/bin/python}
WORK=$(mktemp -d)
PIDS=()
cleanup() { for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT

# Waits (at most 10 s) for 'listening on HOST:PORT' in FILE and prints PORT.
port_of() {
    for _ in $(seq 100); do
        if line=$(grep -m1 '^listening on ' "$1" 2>/dev/null); then echo "${line##*:}"; return; fi
        sleep 0.1
    done
    echo "mixed-protocols: no 'listening on' in $1" >&2
    exit 1
}

# server NAME OPTIONS...: a sim server; its port in $WORK/NAME.port
server() {
    local name=$1; shift
    "$FAULTLINE" sim server --listen 127.0.0.1:0 --seed 1 "$@" >"$WORK/$name" 2>&1 &
    PIDS+=("$!")
    port_of "$WORK/$name" >"$WORK/$name.port"
}

server bird --event-interval 0
server socketio --protocol socketio --ping-interval 500ms --ping-timeout 1s
server graphql --protocol graphql-ws --event-interval 250ms
server signalr --protocol signalr --event-interval 250ms
"$FAULTLINE" proxy --listen 127.0.0.1:0 --record Captures/mixed-protocols.jsonl --overwrite --seed 1 \
    --fault reset,conn=3,after=1s \
    --route "127.0.0.1/app=ws://127.0.0.1:$(cat "$WORK/bird.port")" \
    --route "127.0.0.1/socket.io=ws://127.0.0.1:$(cat "$WORK/socketio.port")" \
    --route "127.0.0.1/graphql=ws://127.0.0.1:$(cat "$WORK/graphql.port")" \
    --route "127.0.0.1/hub=ws://127.0.0.1:$(cat "$WORK/signalr.port")" >"$WORK/proxy" 2>&1 &
proxy=$!
PIDS+=("$proxy")
port=$(port_of "$WORK/proxy")

"$FAULTLINE" sim client --url "ws://127.0.0.1:$port/app/sim-key" --seed 7 --channels private-chat \
    --bug trigger-unsubscribed --bug bad-signature --trigger-interval 600ms --duration 1s >"$WORK/bird-client" 2>&1 || true
"$PYTHON" -u Tests/Peers/socketio_peers.py client "http://127.0.0.1:$port" --connects 1 --hold 1 >"$WORK/socketio-client" 2>&1 || true
"$PYTHON" -u Tests/Peers/graphqlws_client.py "ws://127.0.0.1:$port/graphql" --duration 12.5 --every 1 --resubscribe-wait 30 >"$WORK/graphql-client" 2>&1 || true
"$PYTHON" -u Tests/Peers/signalr_client.py "ws://127.0.0.1:$port/hub" --seconds 1.5 --keep-alive 0.5 >"$WORK/signalr-client" 2>&1 || true

kill -INT "$proxy"
wait "$proxy" || echo "mixed-protocols: proxy exited with $?" >&2
for f in bird-client socketio-client graphql-client signalr-client; do echo "== $f"; tail -3 "$WORK/$f"; done >&2
echo "mixed-protocols: wrote Captures/mixed-protocols.jsonl" >&2
