#!/usr/bin/env python3
"""A small realtime app for the forward proxy's tests: an HTTP server (a page, a
channel-auth endpoint) and a Bird-protocol WebSocket server, and a client that uses both
through an HTTP proxy, as a browser or phone app would.

  server [--cert C --key K]   HTTP (HTTPS with a certificate) and ws:// (wss://) on
                              127.0.0.1, ports chosen by the kernel. Prints
                              `HTTP <port>`, then `READY <ws port>`; `DONE <text>` when a
                              page reports its result (GET /done?result=...).
  client URL WS_URL --proxy P [--ca CA]
                              POSTs the channel auth to URL/auth, opens WS_URL, subscribes
                              to private-orders with the signature, reads the answer,
                              closes. One JSON line per step.

Pages: GET / is an HTML page whose script does what `client` does (fetch, WebSocket,
subscribe) and reports the events it got and the close code to /done; it closes itself
once subscribed with /?close=1, else it waits for the server (or a fault) to close. The auth signature is HMAC-SHA256 of
"SOCKET_ID:CHANNEL" with the secret "secret", as Bird/Pusher channel auth is.
"""
import argparse
import asyncio
import hashlib
import hmac
import json
import ssl
import sys
import threading
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from websockets.asyncio.client import connect
from websockets.asyncio.server import serve

KEY, SECRET, CHANNEL = "app-key", "secret", "private-orders"

PAGE = """<!doctype html><title>forward proxy test</title><script>
async function run() {
  const response = await fetch("/auth", {method: "POST",
      headers: {"Content-Type": "application/x-www-form-urlencoded"},
      body: "socket_id=1.2&channel_name=%(channel)s"});
  const auth = (await response.json()).auth;
  const ws = new WebSocket("%(ws)s/app/%(key)s?protocol=7");
  const events = [];
  ws.onmessage = (m) => {
    const event = JSON.parse(m.data).event;
    events.push(event);
    if (event === "bird:connection_established") {
      ws.send(JSON.stringify({event: "bird:subscribe", data: {channel: "%(channel)s", auth: auth}}));
    } else if (location.search.includes("close=1")) {
      ws.close(1000);
    }
  };
  ws.onclose = (c) => fetch("/done?result=" + encodeURIComponent(events.join(",") + " close " + c.code));
}
run().catch((e) => fetch("/done?result=" + encodeURIComponent("error " + e)));
</script>"""


def sign(socket_id, channel):
    digest = hmac.new(SECRET.encode(), f"{socket_id}:{channel}".encode(), hashlib.sha256).hexdigest()
    return f"{KEY}:{digest}"


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def http_handler(ws_url):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def reply(self, status, body, kind):
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            path = urllib.parse.urlparse(self.path)
            if path.path == "/done":
                result = urllib.parse.parse_qs(path.query).get("result", [""])[0]
                print(f"DONE {result}", flush=True)
                self.reply(200, "ok\n", "text/plain")
            elif path.path == "/":
                self.reply(200, PAGE % {"ws": ws_url, "key": KEY, "channel": CHANNEL}, "text/html")
            else:
                self.reply(404, "not found\n", "text/plain")

        def do_POST(self):
            length = int(self.headers.get("Content-Length", "0"))
            form = urllib.parse.parse_qs(self.rfile.read(length).decode())
            if self.path != "/auth":
                self.reply(404, "not found\n", "text/plain")
                return
            auth = sign(form.get("socket_id", [""])[0], form.get("channel_name", [""])[0])
            self.reply(200, json.dumps({"auth": auth}), "application/json")

    return Handler


async def bird(ws):
    await ws.send(json.dumps({"event": "bird:connection_established",
                              "data": json.dumps({"socket_id": "1.2", "activity_timeout": 120})}))
    async for message in ws:
        event = json.loads(message)
        if event.get("event") == "bird:subscribe":
            data = event.get("data", {})
            ok = data.get("auth") == sign("1.2", data.get("channel", ""))
            reply = "bird_internal:subscription_succeeded" if ok else "bird:subscription_error"
            await ws.send(json.dumps({"event": reply, "channel": data.get("channel"), "data": "{}"}))


async def server(args):
    context = None
    if args.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.cert, args.key)
    async with serve(bird, "127.0.0.1", 0, ssl=context, compression=None) as ws_server:
        ws_port = ws_server.sockets[0].getsockname()[1]
        scheme = "wss" if context else "ws"
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), http_handler(f"{scheme}://localhost:{ws_port}"))
        if context:
            httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        print(f"HTTP {httpd.server_address[1]}", flush=True)
        print(f"READY {ws_port}", flush=True)
        await asyncio.Future()


async def client(args):
    context = ssl.create_default_context(cafile=args.ca) if args.ca else None
    handlers = [urllib.request.ProxyHandler({"http": args.proxy, "https": args.proxy})]
    if context:
        handlers.append(urllib.request.HTTPSHandler(context=context))
    opener = urllib.request.build_opener(*handlers)
    body = urllib.parse.urlencode({"socket_id": "1.2", "channel_name": CHANNEL}).encode()
    with opener.open(urllib.request.Request(args.url + "/auth", data=body, method="POST"), timeout=20) as response:
        auth = json.loads(response.read())["auth"]
    emit(kind="auth", auth=auth)
    async with connect(args.ws_url + "/app/" + KEY + "?protocol=7", proxy=args.proxy, ssl=context,
                       compression=None, open_timeout=20) as ws:
        emit(kind="received", data=await asyncio.wait_for(ws.recv(), 20))
        await ws.send(json.dumps({"event": "bird:subscribe", "data": {"channel": CHANNEL, "auth": auth}}))
        emit(kind="received", data=await asyncio.wait_for(ws.recv(), 20))
        await ws.close()
    emit(kind="closed", code=ws.close_code)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("role", choices=["server", "client"])
    parser.add_argument("url", nargs="?")
    parser.add_argument("ws_url", nargs="?")
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--proxy")
    parser.add_argument("--ca")
    args = parser.parse_args()
    asyncio.run(server(args) if args.role == "server" else client(args))


if __name__ == "__main__":
    main()
