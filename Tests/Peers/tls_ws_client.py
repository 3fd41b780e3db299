#!/usr/bin/env python3
"""WebSocket client peer (Python `websockets`) for the TLS end-to-end tests.

Connects to URL (ws:// or wss://; for wss:// the server is verified against --ca), with
permessage-deflate offered unless --no-compression, sends each --send text and reads its
echo (and with --send-binary N, N pseudo-random bytes as one binary message and checks
the echo byte for byte), then either closes with 1000 or, with --await-close, waits up to --wait seconds for
the server (or the proxy) to close. With --proxy http://HOST:PORT it connects through that
HTTP proxy (CONNECT, websockets >= 15); without it, never through one. Prints one JSON object a line:

  {"kind": "open", "extensions": ["permessage-deflate", ...]}
  {"kind": "received", "data": "..."}
  {"kind": "echoed", "len": N, "intact": true|false}     for --send-binary N
  {"kind": "closed", "code": C, "reason": "..."}
  {"kind": "refused", "status": S, "body": "..."}        the upgrade got an HTTP error
  {"kind": "error", "type": "...", "detail": "..."}
"""
import argparse
import asyncio
import json
import random
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("url")
    parser.add_argument("--ca")
    parser.add_argument("--proxy", help="an HTTP proxy URL (CONNECT); default: none, whatever the environment says")
    parser.add_argument("--send", action="append", default=[])
    parser.add_argument("--send-binary", type=int, default=0, metavar="N")
    parser.add_argument("--no-compression", action="store_true")
    parser.add_argument("--await-close", action="store_true")
    parser.add_argument("--wait", type=float, default=10)
    args = parser.parse_args()
    context = None
    if args.url.startswith("wss://"):
        context = ssl.create_default_context(cafile=args.ca)
    try:
        async with connect(args.url, ssl=context, proxy=args.proxy, compression=None if args.no_compression else "deflate",
                           ping_interval=None, open_timeout=10, max_size=None) as ws:
            extensions = [type(e).__name__ for e in ws.protocol.extensions]
            emit(kind="open", extensions=["permessage-deflate" if "Deflate" in e else e for e in extensions])
            try:
                for text in args.send:
                    await ws.send(text)
                    emit(kind="received", data=await asyncio.wait_for(ws.recv(), args.wait))
                if args.send_binary:
                    data = random.Random(7).randbytes(args.send_binary)
                    await ws.send(data)
                    echo = await asyncio.wait_for(ws.recv(), args.wait)
                    emit(kind="echoed", len=len(echo), intact=echo == data)
                if args.await_close:
                    await asyncio.wait_for(ws.wait_closed(), args.wait)
                else:
                    await ws.close()
            except ConnectionClosed:
                pass
            except asyncio.TimeoutError:
                emit(kind="error", type="timeout", detail="no close within --wait")
            emit(kind="closed", code=ws.close_code, reason=ws.close_reason)
    except InvalidStatus as error:
        response = error.response
        emit(kind="refused", status=response.status_code, body=response.body.decode(errors="replace"))
    except Exception as error:  # noqa: BLE001 - reported, the test decides
        emit(kind="error", type=type(error).__name__, detail=str(error))


if __name__ == "__main__":
    asyncio.run(main())
