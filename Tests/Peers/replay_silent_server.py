#!/usr/bin/env python3
"""A server that accepts TCP connections and never answers (for the replay tests).

Listens on 127.0.0.1 (port 0 = any free port), prints `READY <port>`, accepts every
connection, reads what comes and never writes a byte: an upstream that is reachable but
does not answer the WebSocket upgrade request. Runs until killed.
"""
import argparse
import asyncio


async def handler(reader, writer):
    try:
        while await reader.read(4096):
            pass
    except ConnectionError:
        pass
    writer.close()


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    server = await asyncio.start_server(handler, "127.0.0.1", args.port)
    print(f"READY {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main())
