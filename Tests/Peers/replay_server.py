#!/usr/bin/env python3
"""Bird-style server peer for the replay tests (Python `websockets`).

Listens on 127.0.0.1 (port 0 = any free port), prints `READY <port>`. Each connection gets
bird:connection_established with a fresh random socket_id; bird:subscribe is answered with
bird_internal:subscription_succeeded; client-typing is answered with typing-ack carrying
the connection's socket_id when the event carries the right one, else with wrong-socket;
client-bye makes the server close with 4009 "bye". With --tick SECONDS, every connection
also gets a `tick` event ({"n": N}) that often, on the server's own timer. Runs until killed.
"""
import argparse
import asyncio
import json
import random

from websockets.asyncio.server import serve
from websockets.exceptions import ConnectionClosed


def message(event, data, channel=None):
    body = {"event": event}
    if channel:
        body["channel"] = channel
    body["data"] = data
    return json.dumps(body, separators=(",", ":"))


TICK = None


async def ticks(ws):
    n = 0
    try:
        while True:
            await asyncio.sleep(TICK)
            n += 1
            await ws.send(message("tick", {"n": n}))
    except ConnectionClosed:
        pass


async def handler(ws):
    socket_id = f"{random.randint(1, 999999)}.{random.randint(1, 999999)}"
    await ws.send(message("bird:connection_established",
                          json.dumps({"socket_id": socket_id, "activity_timeout": 120}, separators=(",", ":"))))
    ticker = asyncio.create_task(ticks(ws)) if TICK else None
    try:
        async for raw in ws:
            event = json.loads(raw)
            name = event.get("event")
            if name == "bird:subscribe":
                await ws.send(message("bird_internal:subscription_succeeded", "{}", event["data"]["channel"]))
            elif name == "client-typing":
                ok = event["data"].get("socket_id") == socket_id
                await ws.send(message("typing-ack" if ok else "wrong-socket", {"socket_id": socket_id}, event["channel"]))
            elif name == "client-bye":
                await ws.close(4009, "bye")
                break
    except ConnectionClosed:
        pass
    finally:
        if ticker:
            ticker.cancel()


async def main():
    global TICK
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tick", type=float, help="seconds between tick events (default: none)")
    args = parser.parse_args()
    TICK = args.tick
    async with serve(handler, "127.0.0.1", args.port, ping_interval=None) as server:
        print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
        await asyncio.Future()


if __name__ == "__main__":
    asyncio.run(main())
