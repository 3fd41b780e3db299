"""Drives `faultline proxy --toxiproxy-api` with toxiproxy's own Python client
(toxiproxy-python, from PyPI), exactly as a test suite drives toxiproxy, and prints one JSON
object a line with what it saw (for Tests/EndToEndTests/ToxiproxyClientTests.swift).

Usage: toxiproxy_driver.py API_PORT UPSTREAM_PORT PEERS_SCRIPT
"""
import json
import subprocess
import sys

from toxiproxy import Toxiproxy
from toxiproxy.exceptions import NotFound, ProxyExists


def emit(**fields):
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def bird_client(listen, peers, *extra):
    run = subprocess.run([sys.executable, "-u", peers, "client", "ws://%s/app/key" % listen, "--mode", "bird"] + list(extra),
                         capture_output=True, text=True, timeout=60)
    return [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]


def main():
    api_port, upstream_port, peers = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    server = Toxiproxy()
    server.update_api_consumer("127.0.0.1", api_port)
    emit(step="running", value=server.running())
    emit(step="version", value=json.loads(server.version()))

    proxy = server.create(upstream="127.0.0.1:%d" % upstream_port, name="bird")
    emit(step="created", name=proxy.name, listen=proxy.listen, upstream=proxy.upstream, enabled=proxy.enabled)
    try:
        server.create(upstream="127.0.0.1:1", name="bird")
        emit(step="duplicate", error=None)
    except ProxyExists:
        emit(step="duplicate", error="ProxyExists")

    proxy.add_toxic(type="latency", attributes={"latency": 300, "jitter": 0})
    toxics = proxy.toxics()
    emit(step="toxics", value={name: {"type": t.type, "stream": t.stream, "toxicity": t.toxicity,
                                      "attributes": t.attributes} for name, t in toxics.items()})
    lines = bird_client(proxy.listen, peers, "--send", '{"event":"bird:ping","data":{}}', "--wait", "1")
    emit(step="client", received=[json.loads(l["data"]).get("event") for l in lines if l.get("kind") == "received"])
    proxy.destroy_toxic("latency_downstream")
    emit(step="toxics-after-delete", value=list(proxy.toxics().keys()))

    # A connection open while the proxy is disabled is cut, and the listener goes away.
    client = subprocess.Popen([sys.executable, "-u", peers, "client", "ws://%s/app/key" % proxy.listen, "--mode", "bird",
                               "--wait", "30"], stdout=subprocess.PIPE, text=True)
    first = client.stdout.readline()
    while first and '"received"' not in first:
        first = client.stdout.readline()
    proxy.disable()
    rest = [json.loads(line) for line in client.stdout.read().splitlines() if line.startswith("{")]
    client.wait(timeout=30)
    emit(step="disabled", enabled=server.get_proxy("bird").enabled,
         closed=[l for l in rest if l.get("kind") == "closed"])
    proxy.enable()
    again = server.get_proxy("bird")
    emit(step="enabled", enabled=again.enabled, listen=again.listen)
    lines = bird_client(again.listen, peers, "--wait", "0.5")
    emit(step="client-again", received=[json.loads(l["data"]).get("event") for l in lines if l.get("kind") == "received"])

    proxy.add_toxic(type="timeout", name="cut", stream="upstream", toxicity=1.0, attributes={"timeout": 100})
    emit(step="reset", value=server.reset(), toxics=list(server.get_proxy("bird").toxics().keys()))
    server.destroy(proxy)
    emit(step="destroyed", proxies=list(server.proxies().keys()))
    try:
        proxy.destroy_toxic("none")
        emit(step="missing", error=None)
    except NotFound:
        emit(step="missing", error="NotFound")


if __name__ == "__main__":
    main()
