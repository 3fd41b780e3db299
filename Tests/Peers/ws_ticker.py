#!/usr/bin/env python3
"""Client peer for the UI's intercept test (Python `websockets`).

Connects to URL, prints `CONNECTED`, then sends the text `tick N` every --interval seconds
(N = 1, 2, ...) and prints `RECV <text>` for every message it receives, until it has
received a message equal to --until (then prints `DONE` and closes with 1000) or --limit
seconds pass (then exits 1).
"""
import argparse
import asyncio
import sys

from websockets.asyncio.client import connect


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--interval", type=float, default=0.3)
    parser.add_argument("--until", required=True)
    parser.add_argument("--limit", type=float, default=120)
    args = parser.parse_args()
    async with connect(args.url, open_timeout=10) as ws:
        print("CONNECTED", flush=True)

        async def tick():
            n = 0
            while True:
                n += 1
                await ws.send(f"tick {n}")
                await asyncio.sleep(args.interval)

        ticker = asyncio.create_task(tick())

        async def receive():
            async for message in ws:
                text = message if isinstance(message, str) else message.decode("utf-8", "replace")
                print(f"RECV {text}", flush=True)
                if text == args.until:
                    return

        try:
            await asyncio.wait_for(receive(), args.limit)
        except asyncio.TimeoutError:
            print("TIMEOUT", flush=True)
            sys.exit(1)
        finally:
            ticker.cancel()
        print("DONE", flush=True)


if __name__ == "__main__":
    asyncio.run(main())
