#!/usr/bin/env python3
"""Bird-style client peer for the replay tests (Python `websockets`).

Connects to URL, reads bird:connection_established, subscribes to --channel (with an auth
signature that differs on every run), waits for the subscription to succeed, sends a
client-typing event carrying the socket_id it was given, then waits for the server to
close and prints `CLOSED <code> <reason>`. With --connections N it connects again after
each close, N times in all. A wss:// URL is verified against --ca (a PEM file).
--user-agent sets the User-Agent (default BirdRealtime/2.3): the replay's client key. Prints `FAILED ...` and exits 1 on anything unexpected.
"""
import argparse
import asyncio
import json
import secrets
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed


async def once(url, channel, ca, agent):
    context = ssl.create_default_context(cafile=ca) if url.startswith("wss://") else None
    async with connect(url, open_timeout=10, ping_interval=None, user_agent_header=agent, ssl=context) as ws:
        hello = json.loads(await asyncio.wait_for(ws.recv(), 10))
        assert hello["event"] == "bird:connection_established", hello
        socket_id = json.loads(hello["data"])["socket_id"]
        auth = "key:" + secrets.token_hex(32)
        await ws.send(json.dumps({"event": "bird:subscribe", "data": {"channel": channel, "auth": auth}},
                                 separators=(",", ":")))
        answer = json.loads(await asyncio.wait_for(ws.recv(), 10))
        print(f"GOT {answer['event']}", flush=True)
        await ws.send(json.dumps({"event": "client-typing", "channel": channel, "data": {"socket_id": socket_id}},
                                 separators=(",", ":")))
        try:
            extra = await asyncio.wait_for(ws.recv(), 10)
            raise AssertionError(f"expected a close, got {extra!r:.80}")
        except ConnectionClosed as closed:
            frame = closed.rcvd
            print(f"CLOSED {frame.code if frame else 'none'} {frame.reason if frame else ''}", flush=True)


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--channel", default="private-orders")
    parser.add_argument("--connections", type=int, default=1)
    parser.add_argument("--ca", help="CA certificates (PEM) to verify a wss:// server against")
    parser.add_argument("--user-agent", default="BirdRealtime/2.3")
    args = parser.parse_args()
    for _ in range(args.connections):
        await once(args.url, args.channel, args.ca, args.user_agent)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(asyncio.run(main()))
    except Exception as error:  # report, never hang
        print(f"FAILED {type(error).__name__}: {error}", flush=True)
        sys.exit(1)
