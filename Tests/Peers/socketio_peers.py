"""Real Socket.IO peers for the socketio pack's end-to-end tests (SocketIOClientTests).

  server [--ping-interval S] [--ping-timeout S] [--disconnect-after S] [--emit-every S]
      python-socketio's AsyncServer as an ASGI app on uvicorn, on 127.0.0.1 and a free
      port; prints {"kind":"listening","port":N} once it accepts connections.
      --disconnect-after: S seconds after a client's first namespace connect the server
      disconnects it from '/' (a 41 packet); --emit-every: a "tick" event that often.
  client URL [--delay S] [--delay-max S] [--randomization F] [--connects N] [--hold S]
             [--run S]
      python-socketio's Client (transports=['websocket']) with those reconnection options;
      prints one JSON line per connect and disconnect, and exits after N connects (then
      `--hold` seconds connected, then disconnect()), or after --run seconds in all, or
      --hold seconds after a server disconnect (which must not be retried).
Every wait is bounded; output is one JSON object a line.
"""
import argparse
import asyncio
import json
import socket
import sys
import threading
import time


def emit(**fields):
    print(json.dumps(fields), flush=True)


def serve(args):
    import socketio
    import uvicorn

    sio = socketio.AsyncServer(async_mode='asgi', cors_allowed_origins='*', ping_interval=args.ping_interval,
                               ping_timeout=args.ping_timeout, logger=False, engineio_logger=False)
    app = socketio.ASGIApp(sio)
    seen = set()

    @sio.event
    async def connect(sid, environ, auth=None):
        first = not seen
        seen.add(sid)
        if args.disconnect_after is not None and first:
            async def later():
                await asyncio.sleep(args.disconnect_after)
                await sio.disconnect(sid)
            sio.start_background_task(later)

    async def ticks():
        while True:
            await asyncio.sleep(args.emit_every)
            await sio.emit('tick', {'t': time.time()})

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(('127.0.0.1', 0))
    port = listener.getsockname()[1]
    config = uvicorn.Config(app, log_level='warning', lifespan='off', ws='websockets-sansio')
    server = uvicorn.Server(config)

    async def main():
        if args.emit_every:
            asyncio.get_running_loop().create_task(ticks())
        task = asyncio.get_running_loop().create_task(server.serve(sockets=[listener]))
        while not server.started:
            await asyncio.sleep(0.01)
        emit(kind='listening', port=port)
        await task

    asyncio.run(main())


def client(args):
    import socketio

    sio = socketio.Client(reconnection=True, reconnection_attempts=0,
                          reconnection_delay=args.delay, reconnection_delay_max=args.delay_max,
                          randomization_factor=args.randomization, logger=False, engineio_logger=False)
    start = time.monotonic()
    connects = 0
    done = threading.Event()
    server_disconnected = threading.Event()

    @sio.event
    def connect():
        nonlocal connects
        connects += 1
        emit(kind='connect', n=connects, sid=sio.get_sid(), t=round(time.monotonic() - start, 3))
        if connects >= args.connects:
            done.set()

    @sio.event
    def disconnect(reason=None):
        emit(kind='disconnect', reason=str(reason), t=round(time.monotonic() - start, 3))
        if str(reason) == str(sio.reason.SERVER_DISCONNECT):
            server_disconnected.set()

    # The server's periodic event: python-socketio's server above ("tick") or
    # `faultline sim server --protocol socketio` ("sim-tick").
    @sio.on('tick')
    def tick(data):
        emit(kind='tick')

    @sio.on('sim-tick')
    def sim_tick(data):
        emit(kind='tick')

    try:
        sio.connect(args.url, transports=['websocket'], wait_timeout=5, retry=True)
    except Exception as error:
        emit(kind='connect_failed', error=str(error))
    deadline = start + args.run
    while time.monotonic() < deadline and not done.is_set() and not server_disconnected.is_set():
        time.sleep(0.02)
    if server_disconnected.is_set():
        # A server disconnect is final: no reconnect may follow while we watch.
        time.sleep(args.hold)
        emit(kind='after_server_disconnect', connects=connects, connected=sio.connected)
    else:
        if done.is_set():
            time.sleep(args.hold)
        emit(kind='done', connects=connects, timed_out=not done.is_set())
    sio.disconnect()
    sio.shutdown() if hasattr(sio, 'shutdown') else None


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest='mode', required=True)
    s = sub.add_parser('server')
    s.add_argument('--ping-interval', type=float, default=1)
    s.add_argument('--ping-timeout', type=float, default=0.5)
    s.add_argument('--disconnect-after', type=float)
    s.add_argument('--emit-every', type=float)
    c = sub.add_parser('client')
    c.add_argument('url')
    c.add_argument('--delay', type=float, default=0.1)
    c.add_argument('--delay-max', type=float, default=0.4)
    c.add_argument('--randomization', type=float, default=0.05)
    c.add_argument('--connects', type=int, default=1)
    c.add_argument('--hold', type=float, default=0.3)
    c.add_argument('--run', type=float, default=10)
    args = parser.parse_args()
    serve(args) if args.mode == 'server' else client(args)


if __name__ == '__main__':
    main()
