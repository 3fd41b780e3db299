"""A pysignalr client for SignalRClientTests: connects to URL (a hub, negotiation skipped),
prints one line per thing that happens ("open", "close", "message TYPE TARGET") and
runs for SECONDS, or until pysignalr's run() gives up ("stopped: EXCEPTION").

pysignalr's SignalRClient always POSTs /negotiate first; its WebsocketTransport has
skip_negotiation, which SignalRClient 1.3.3 does not pass on, so it is set on the
client's transport here. Everything else (handshake, keep-alive, reconnects) is the
library's own code; its timings are shortened with SignalRClient's own options
(retry_sleep, retry_multiplier, retry_count, signalr_ping_interval, ping_interval,
connection_timeout).
"""
import argparse
import asyncio
import sys

from pysignalr.client import SignalRClient


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--keep-alive", type=float, default=15.0,
                        help="signalr_ping_interval: the client's keep-alive ping period")
    parser.add_argument("--ping-interval", type=float, default=20.0,
                        help="ping_interval: websockets' WebSocket ping period (its ping_timeout stays 20 s)")
    parser.add_argument("--connection-timeout", type=float, default=10.0,
                        help="connection_timeout: websockets' open and close timeouts")
    parser.add_argument("--retry-sleep", type=float, default=1.0)
    parser.add_argument("--retry-multiplier", type=float, default=1.1)
    parser.add_argument("--retry-count", type=int, default=10)
    args = parser.parse_args()

    client = SignalRClient(args.url, signalr_ping_interval=args.keep_alive, ping_interval=args.ping_interval,
                           connection_timeout=args.connection_timeout, retry_sleep=args.retry_sleep,
                           retry_multiplier=args.retry_multiplier, retry_count=args.retry_count)
    client._transport._skip_negotiation = True  # noqa: SLF001 (see the module doc)

    async def on_open() -> None:
        print("open", flush=True)

    async def on_close() -> None:
        print("close", flush=True)

    async def on_tick(arguments) -> None:
        print(f"message sim-tick {arguments}", flush=True)

    client.on_open(on_open)
    client.on_close(on_close)
    client.on("sim-tick", on_tick)
    try:
        await asyncio.wait_for(client.run(), timeout=args.seconds)
    except (TimeoutError, asyncio.TimeoutError):
        print("done", flush=True)
    except Exception as error:  # what makes pysignalr's run() give up
        print(f"stopped: {type(error).__name__}: {error}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
