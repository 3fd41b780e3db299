"""Drives headless Chromium over its DevTools protocol for the web UI's tests.

Chromium speaks the protocol on a pipe (--remote-debugging-pipe: it reads commands from
fd 3 and writes answers to fd 4, each a JSON text ended by a NUL byte), so no port is
bound. Usage:

    cdp_driver.py --url URL --steps STEPS.json --profile DIR [--chromium PATH]

STEPS.json is a list of steps, run in order; each prints one JSON line with its result:
    {"wait": EXPR, "timeout": S}     until EXPR is truthy, re-checked on every DOM change
    {"click": SELECTOR}              a real mouse click at the element's centre
    {"type": SELECTOR, "text": T}    focus, clear, then type T as keyboard input
    {"eval": EXPR}                   the value of EXPR
    {"viewport": W, "height": H}     the window's size
    {"screenshot": PATH}             a PNG of the page as it is now
A failed step prints {"ok": false, "error": ...} and the driver exits 1. The last line is
{"console": [...], "exceptions": [...]}: everything the page logged and every uncaught
error (a Content-Security-Policy violation shows up there).
"""
import argparse, base64, fcntl, json, os, subprocess, sys, threading

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

WAIT = """new Promise(function (resolve, reject) {
  var done = false;
  function check() {
    if (done) return;
    var v; try { v = (%s); } catch (e) { v = false; }
    if (v) { done = true; observer.disconnect(); clearTimeout(timer); resolve(v); }
  }
  var observer = new MutationObserver(check);
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  var timer = setTimeout(function () { done = true; observer.disconnect(); reject(new Error("timed out")); }, %d);
  check();
})"""

class Page:
    def __init__(self, browser):
        self.browser = browser
        target = browser.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable")

    def call(self, method, params=None, timeout=60):
        return self.browser.call(method, params, session=self.session, timeout=timeout)

    def eval(self, expression, timeout=60):
        result = self.call("Runtime.evaluate", {"expression": expression, "awaitPromise": True, "returnByValue": True},
                           timeout=timeout)
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    def step(self, step):
        if "wait" in step:
            seconds = float(step.get("timeout", 30))
            return self.eval(WAIT % (step["wait"], int(seconds * 1000)), timeout=seconds + 10)
        if "click" in step:
            box = self.eval("(function(){var e=document.querySelector(%s); if(!e) throw new Error('no element %s');"
                            "e.scrollIntoView({block:'center'}); var r=e.getBoundingClientRect();"
                            "return {x:r.left+r.width/2, y:r.top+r.height/2};})()" % (json.dumps(step["click"]), step["click"].replace("'", "")))
            for kind in ("mousePressed", "mouseReleased"):
                self.call("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"], "button": "left", "clickCount": 1})
            return box
        if "type" in step:
            self.eval("(function(){var e=document.querySelector(%s); e.focus(); e.select && e.select(); return true;})()"
                      % json.dumps(step["type"]))
            self.call("Input.insertText", {"text": step["text"]})
            return True
        if "eval" in step:
            return self.eval(step["eval"])
        if "viewport" in step:
            self.call("Emulation.setDeviceMetricsOverride", {"width": int(step["viewport"]), "height": int(step.get("height", 900)),
                                                              "deviceScaleFactor": 1, "mobile": False})
            return True
        if "screenshot" in step:
            data = self.call("Page.captureScreenshot", {"format": "png"})["data"]
            with open(step["screenshot"], "wb") as f:
                f.write(base64.b64decode(data))
            return step["screenshot"]
        if "navigate" in step:
            self.call("Page.navigate", {"url": step["navigate"]})
            return self.eval(WAIT % ("document.readyState === 'complete'", 30000), timeout=40)
        raise RuntimeError("unknown step %r" % step)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--steps", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    with open(args.steps) as f:
        steps = json.load(f)
    browser = Browser(args.chromium, args.profile)
    status = 0
    try:
        page = Page(browser)
        page.step({"navigate": args.url})
        for i, step in enumerate(steps):
            try:
                value = page.step(step)
                print(json.dumps({"step": i, "ok": True, "value": value}), flush=True)
            except Exception as error:
                print(json.dumps({"step": i, "ok": False, "error": str(error), "at": step}), flush=True)
                status = 1
                break
        print(json.dumps({"console": browser.console, "exceptions": browser.exceptions}), flush=True)
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
