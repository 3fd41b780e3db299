"""Drives headless Chromium over its DevTools protocol for the web UI's tests.

Chromium speaks the protocol on a pipe (--remote-debugging-pipe: it reads commands from
fd 3 and writes answers to fd 4, each a JSON text ended by a NUL byte), so no port is
bound. Usage:

    cdp_driver.py --url URL --steps STEPS.json --profile DIR [--chromium PATH]

The steps and what the driver prints are those of browser_steps.py (shared with
bidi_driver.py, which drives Firefox).
"""
import argparse, base64, fcntl, json, os, subprocess, sys, threading
import browser_steps

class Browser:
    def __init__(self, chromium, profile):
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()
        # Out of the way of 3 and 4 before they are put there in the child.
        a = fcntl.fcntl(to_chrome_r, fcntl.F_DUPFD, 10)
        b = fcntl.fcntl(from_chrome_w, fcntl.F_DUPFD, 10)
        def child():
            os.dup2(a, 3)
            os.dup2(b, 4)
        self.process = subprocess.Popen(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
             "--remote-debugging-pipe", "--user-data-dir=" + profile, "about:blank"],
            preexec_fn=child, pass_fds=(3, 4), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for fd in (to_chrome_r, from_chrome_w, a, b):
            os.close(fd)
        self.out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self.inp = os.fdopen(from_chrome_r, "rb", buffering=0)
        self.next_id = 0
        self.answers = {}
        self.cond = threading.Condition()
        self.console = []
        self.exceptions = []
        self.closed = False
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        buffer = b""
        while True:
            chunk = self.inp.read(65536)
            if not chunk:
                with self.cond:
                    self.closed = True
                    self.cond.notify_all()
                return
            buffer += chunk
            while b"\0" in buffer:
                text, buffer = buffer.split(b"\0", 1)
                message = json.loads(text)
                with self.cond:
                    if "id" in message:
                        self.answers[message["id"]] = message
                        self.cond.notify_all()
                    elif message.get("method") == "Runtime.consoleAPICalled":
                        args = message["params"].get("args", [])
                        self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in args))
                    elif message.get("method") == "Runtime.exceptionThrown":
                        self.exceptions.append(message["params"]["exceptionDetails"].get("exception", {}).get("description")
                                               or message["params"]["exceptionDetails"].get("text"))
                    elif message.get("method") == "Log.entryAdded":
                        self.console.append(message["params"]["entry"].get("text", ""))

    def call(self, method, params=None, session=None, timeout=60):
        with self.cond:
            self.next_id += 1
            ident = self.next_id
        message = {"id": ident, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        self.out.write(json.dumps(message).encode() + b"\0")
        with self.cond:
            if not self.cond.wait_for(lambda: ident in self.answers or self.closed, timeout):
                raise RuntimeError("%s: no answer in %s s" % (method, timeout))
            if ident not in self.answers:
                raise RuntimeError("%s: the browser went away" % method)
            answer = self.answers.pop(ident)
        if "error" in answer:
            raise RuntimeError("%s: %s" % (method, answer["error"].get("message")))
        return answer.get("result", {})

class Page:
    def __init__(self, browser):
        self.browser = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable")
        self.call("Page.addScriptToEvaluateOnNewDocument", {"source": browser_steps.CSP_WATCH})

    def call(self, method, params=None, timeout=60):
        return self.browser.call(method, params, session=self.session, timeout=timeout)

    def eval(self, expression, timeout=60):
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                           timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    def click_at(self, x, y):
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": "left", "clickCount": 1})

    def insert_text(self, text):
        self.call("Input.insertText", {"text": text})

    def set_viewport(self, width, height):
        self.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def screenshot(self):
        return base64.b64decode(self.call("Page.captureScreenshot", {"format": "png"})["data"])

    def navigate(self, url):
        self.call("Page.navigate", {"url": url})

    def settle(self):
        pass   # events are read as they come, by the browser's reading thread

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--steps", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    browser = Browser(args.chromium, args.profile)
    status = 1
    try:
        status = browser_steps.run(Page(browser), args.url, args.steps, browser.console, browser.exceptions)
    finally:
        try:
            browser.call("Browser.close", timeout=10)
        except Exception:
            pass
        try:
            browser.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            browser.process.kill()
            browser.process.wait()
    sys.exit(status)

if __name__ == "__main__":
    main()
