"""The step language of the web UI's browser tests, shared by the two drivers:
cdp_driver.py (Chromium, DevTools protocol) and bidi_driver.py (Firefox, WebDriver BiDi).

A driver gives a page with six primitives (eval, click_at, insert_text, set_viewport,
screenshot, navigate); everything else, and so what each step means, is written once here.

STEPS.json is a list of steps, run in order; each prints one JSON line with its result:
    {"wait": EXPR, "timeout": S}     until EXPR is truthy, re-checked on every DOM change
                                     and every 100 ms
    {"click": SELECTOR}              a real mouse click at the element's centre
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

# The centre of the element, in the viewport's coordinates, after scrolling it into view.
CENTRE = """(function () {
  var e = document.querySelector(%s); if (!e) throw new Error(%s);
  e.scrollIntoView({block: 'center'}); var r = e.getBoundingClientRect();
  return {x: r.left + r.width / 2, y: r.top + r.height / 2};
})()"""

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
        box = page.eval(element(step["click"], CENTRE))
        page.click_at(box["x"], box["y"])
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
