"""The step language of the web UI's browser tests, shared by the two drivers:
cdp_driver.py (Chromium, DevTools protocol) and bidi_driver.py (Firefox, WebDriver BiDi).

A driver gives a page with six primitives (eval, click_at, insert_text, set_viewport,
screenshot, navigate); everything else, and so what each step means, is written once here.

STEPS.json is a list of steps, run in order; each prints one JSON line with its result:
    {"wait": EXPR, "timeout": S}     until EXPR is truthy, re-checked on every DOM change
                                     and every 100 ms
    {"click": SELECTOR, "timeout": S} a real mouse click at the element's centre, once it is
                                     clickable there (ACTIONABLE, waited for up to S s,
                                     default 10); fails unless the element then received
                                     the click (within S s)
    {"type": SELECTOR, "text": T}    focus, select what it holds, then type T as keyboard input
    {"eval": EXPR}                   the value of EXPR (a promise is awaited)
    {"viewport": W, "height": H}     the window's size
    {"screenshot": PATH}             a PNG of the page as it is now
    {"navigate": URL}                load URL and wait until it is complete
A failed step prints {"ok": false, "error": ...} and the driver exits 1. The last line is
{"console": [...], "exceptions": [...]}: everything the page logged and every uncaught
error (a Content-Security-Policy violation shows up there).
"""
import json, sys

WAIT = """new Promise(function (resolve, reject) {
  var done = false;
  function check() {
    if (done) return;
    var v; try { v = (%s); } catch (e) { v = false; }
    if (v) { done = true; observer.disconnect(); clearInterval(poll); clearTimeout(timer); resolve(v); }
  }
  var observer = new MutationObserver(check);
  observer.observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
  // Some states change without a DOM mutation (an image finishing its load): looked at again every 100 ms.
  var poll = setInterval(check, 100);
  var timer = setTimeout(function () { done = true; observer.disconnect(); clearInterval(poll); reject(new Error("timed out")); }, %d);
  check();
})"""

# An element as the errors name it: tag#id.class.
DESCRIBE = """function describe(n) {
    return n ? n.tagName.toLowerCase() + (n.id ? "#" + n.id : "") + (n.className ? "." + String(n.className).split(" ").join(".") : "") : "nothing";
  }"""

# Where to click an element, once a click there can reach it: the element is in the page,
# enabled, scrolled into view, its box the same on two looks 50 ms apart (not moving), and
# the point at its centre hits the element itself (nothing covers it).
# Then it is armed: its next click is counted, so the driver can tell that the click landed.
# Rejects after TIMEOUT ms saying which condition never held.
ACTIONABLE = """new Promise(function (resolve, reject) {
  var selector = %s, last = null, why = "", started = Date.now();
  function look() {
    var e = document.querySelector(selector);
    if (!e) why = "no element " + selector;
    else if (e.disabled) why = selector + " is disabled";
    else {
      e.scrollIntoView({block: "center"});
      var r = e.getBoundingClientRect(), box = [r.left, r.top, r.width, r.height].join(",");
      var x = r.left + r.width / 2, y = r.top + r.height / 2, hit = document.elementFromPoint(x, y);
      if (!r.width || !r.height) why = selector + " has no size";
      else if (box !== last) { why = selector + " is still moving"; last = box; }
      else if (!hit || !e.contains(hit)) why = selector + " is covered at its centre by " + describe(hit);
      else {
        window.__clickTarget = {element: e, clicks: 0, x: x, y: y};
        e.addEventListener("click", function () { window.__clickTarget.clicks++; }, {capture: true, once: true});
        return resolve({x: x, y: y});
      }
    }
    if (Date.now() - started > %d) return reject(new Error("not clickable: " + why));
    setTimeout(look, 50);
  }
  DESCRIBE
  look();
})""".replace("DESCRIBE", DESCRIBE)

# After the mouse went down and up at the armed element's centre: waits (the page may be
# busy) until its click listener ran; else rejects saying what is at that point now.
CLICKED = """new Promise(function (resolve, reject) {
  var target = window.__clickTarget, started = Date.now();
  (function check() {
    if (target.clicks > 0) return resolve(true);
    if (Date.now() - started > %d) {
      var hit = document.elementFromPoint(target.x, target.y);
      return reject(new Error("the click did not reach " + %s + " (at its centre now: " + describe(hit) +
        (target.element.isConnected ? "" : "; the element was removed from the page") + ")"));
    }
    setTimeout(check, 50);
  })();
  DESCRIBE
})""".replace("DESCRIBE", DESCRIBE)

FOCUS = """(function () {
  var e = document.querySelector(%s); if (!e) throw new Error(%s);
  e.focus(); e.select && e.select(); return true;
})()"""

# Reports every Content-Security-Policy violation on the console, whatever the browser's own
# logging of them; drivers that can run a script before the page's own install it.
CSP_WATCH = """document.addEventListener('securitypolicyviolation', function (e) {
  console.error('Content Security Policy violation: ' + e.violatedDirective + ' blocked ' + (e.blockedURI || 'inline'));
});"""

def element(selector, template):
    return template % (json.dumps(selector), json.dumps("no element " + selector))

def run_step(page, step):
    if "wait" in step:
        seconds = float(step.get("timeout", 30))
        return page.eval(WAIT % (step["wait"], int(seconds * 1000)), timeout=seconds + 10)
    if "click" in step:
        selector, seconds = json.dumps(step["click"]), float(step.get("timeout", 10))
        box = page.eval(ACTIONABLE % (selector, int(seconds * 1000)), timeout=seconds + 10)
        page.click_at(box["x"], box["y"])
        page.eval(CLICKED % (int(seconds * 1000), selector), timeout=seconds + 10)
        return box
    if "type" in step:
        page.eval(element(step["type"], FOCUS))
        page.insert_text(step["text"])
        return True
    if "eval" in step:
        return page.eval(step["eval"])
    if "viewport" in step:
        page.set_viewport(int(step["viewport"]), int(step.get("height", 900)))
        return True
    if "screenshot" in step:
        with open(step["screenshot"], "wb") as f:
            f.write(page.screenshot())
        return step["screenshot"]
    if "navigate" in step:
        page.navigate(step["navigate"])
        return page.eval(WAIT % ("document.readyState === 'complete'", 30000), timeout=40)
    raise RuntimeError("unknown step %r" % step)

def run(page, url, steps_path, console, exceptions):
    """Opens url, runs the steps of steps_path, prints a line each and the closing line
    (console and exceptions are the driver's lists, read at the end); the exit status."""
    with open(steps_path) as f:
        steps = json.load(f)
    status = 0
    try:
        run_step(page, {"navigate": url})
        for i, step in enumerate(steps):
            try:
                value = run_step(page, step)
                print(json.dumps({"step": i, "ok": True, "value": value}), flush=True)
            except Exception as error:
                print(json.dumps({"step": i, "ok": False, "error": str(error), "at": step}), flush=True)
                status = 1
                break
    finally:
        page.settle()
        print(json.dumps({"console": console, "exceptions": exceptions}), flush=True)
    return status
