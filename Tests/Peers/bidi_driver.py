"""Drives a running headless Firefox over WebDriver BiDi for the web UI's tests.

Firefox speaks BiDi itself on --remote-debugging-port (ws://127.0.0.1:PORT/session; no
geckodriver). The test suite starts Firefox once and runs this driver once per journey:
it opens a BiDi session and a tab of its own, runs the steps, then closes both, so the
next journey finds the browser as it was (Firefox allows one session at a time). Usage:

    bidi_driver.py --bidi ws://127.0.0.1:PORT --url URL --steps STEPS.json

The steps and what the driver prints are those of browser_steps.py (shared with
cdp_driver.py, which drives Chromium).
"""
import argparse, base64, json, sys
from websockets.sync.client import connect
import browser_steps

class Session:
    """One BiDi session on one socket: commands answered in order, events kept as they pass."""

    def __init__(self, socket):
        self.socket = socket
        self.next_id = 0
        self.console = []
        self.exceptions = []
        self.call("session.new", {"capabilities": {}})
        self.call("session.subscribe", {"events": ["log.entryAdded"]})

    def call(self, method, params, timeout=60):
        self.next_id += 1
        ident = self.next_id
        self.socket.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            try:
                message = json.loads(self.socket.recv(timeout=timeout))
            except TimeoutError:
                raise RuntimeError("%s: no answer in %s s" % (method, timeout))
            if message.get("type") == "event":
                self.event(message)
            elif message.get("id") == ident:
                if message.get("type") == "error":
                    raise RuntimeError("%s: %s: %s" % (method, message.get("error"), message.get("message")))
                return message.get("result", {})

    def event(self, message):
        if message.get("method") != "log.entryAdded":
            return
        entry = message["params"]
        if entry.get("type") == "console":
            self.console.append(" ".join(str(a.get("value", a.get("type", ""))) for a in entry.get("args", [])))
        else:   # "javascript": an uncaught error, or the browser's own report of a refused script
            self.exceptions.append(entry.get("text", ""))

    def end(self):
        self.call("session.end", {}, timeout=10)

# The value of an expression as JSON text: the test reads plain JSON values, as CDP's
# returnByValue gives them, not BiDi's typed serialization.
AS_JSON = "Promise.resolve().then(function () { return (%s); }).then(function (v) { return JSON.stringify(v === undefined ? null : v); })"

class Page:
    def __init__(self, session):
        self.session = session
        self.context = session.call("browsingContext.create", {"type": "tab"})["context"]
        # Before any script of the page's own, in every document this tab loads.
        session.call("script.addPreloadScript", {"functionDeclaration": "() => { %s }" % browser_steps.CSP_WATCH,
                                                 "contexts": [self.context]})

    def eval(self, expression, timeout=60):
        answer = self.session.call("script.evaluate", {"expression": AS_JSON % expression, "target": {"context": self.context},
                                                        "awaitPromise": True, "resultOwnership": "none"}, timeout=timeout)
        if answer.get("type") == "exception":
            raise RuntimeError(answer["exceptionDetails"].get("text"))
        return json.loads(answer["result"]["value"])

    def click_at(self, x, y):
        self.session.call("input.performActions", {"context": self.context, "actions": [{
            "type": "pointer", "id": "mouse", "parameters": {"pointerType": "mouse"},
            "actions": [{"type": "pointerMove", "x": int(round(x)), "y": int(round(y)), "origin": "viewport"},
                        {"type": "pointerDown", "button": 0}, {"type": "pointerUp", "button": 0}]}]})

    def insert_text(self, text):
        keys = []
        for character in text:
            keys += [{"type": "keyDown", "value": character}, {"type": "keyUp", "value": character}]
        self.session.call("input.performActions", {"context": self.context, "actions": [{"type": "key", "id": "keyboard", "actions": keys}]})

    def set_viewport(self, width, height):
        self.session.call("browsingContext.setViewport", {"context": self.context, "viewport": {"width": width, "height": height}})

    def screenshot(self):
        return base64.b64decode(self.session.call("browsingContext.captureScreenshot", {"context": self.context})["data"])

    def navigate(self, url):
        self.session.call("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def settle(self):
        # Events come on the one socket: a last round trip reads every entry logged before it.
        try:
            self.session.call("script.evaluate", {"expression": "0", "target": {"context": self.context}, "awaitPromise": False}, timeout=10)
        except Exception:
            pass

    def close(self):
        self.session.call("browsingContext.close", {"context": self.context}, timeout=10)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bidi", required=True, help="Firefox's ws://127.0.0.1:PORT")
    parser.add_argument("--url", required=True)
    parser.add_argument("--steps", required=True)
    args = parser.parse_args()
    status = 1
    with connect(args.bidi.rstrip("/") + "/session", max_size=None, open_timeout=60) as socket:
        session = Session(socket)
        try:
            page = Page(session)
            try:
                status = browser_steps.run(page, args.url, args.steps, session.console, session.exceptions)
            finally:
                page.close()
        finally:
            session.end()   # else Firefox refuses the next journey's session
    sys.exit(status)

if __name__ == "__main__":
    main()
