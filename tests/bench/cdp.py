"""Headless Chromium driven over the DevTools protocol on a pipe
(--remote-debugging-pipe: commands on fd 3, replies and events on fd 4,
each a JSON text ended by NUL), standard library only. Used by
tests/bench/report_test.py to load a page from file:// and look at it as
a browser does.

    b = cdp.Browser()                  # or raises cdp.Unavailable(why)
    page = b.open(url, width, height)  # waits for the load event
    page.eval("document.title")        # a JSON-able value
    page.screenshot(path)
    page.events                        # every event seen (method, params)
    b.close()
"""

import base64
import json
import os
import shutil
import subprocess
import time


class Unavailable(Exception):
    pass


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class Browser:
    def __init__(self, wait_s=120):
        exe = chromium_path()
        if not exe:
            raise Unavailable("no chromium on PATH (scripts/deps.sh installs Debian's chromium)")
        self.wait_s = wait_s
        cmd_r, cmd_w = os.pipe()    # we write commands, chromium reads fd 3
        ev_r, ev_w = os.pipe()      # chromium writes fd 4, we read
        self.profile = None
        import tempfile
        self.profile = tempfile.mkdtemp(prefix="mshare-bench-chromium.")

        def child():
            os.dup2(cmd_r, 3)
            os.dup2(ev_w, 4)
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
             "--no-first-run", "--no-default-browser-check", "--user-data-dir=" + self.profile,
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            preexec_fn=child, pass_fds=(3, 4))  # kept open past preexec_fn's dup2
        os.close(cmd_r)
        os.close(ev_w)
        self.w = os.fdopen(cmd_w, "wb", buffering=0)
        self.r = os.fdopen(ev_r, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0
        self.events = []
        try:
            self.call("Browser.getVersion")
        except Exception as e:
            self.close()
            raise Unavailable("chromium did not answer on the DevTools pipe: %s" % e)

    def _read_message(self):
        while b"\0" not in self.buf:
            chunk = self.r.read(65536)
            if not chunk:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""
                raise EOFError("chromium closed the pipe " + err[-500:])
            self.buf += chunk
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method, params=None, session=None):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.wait_s
        while time.monotonic() < deadline:
            m = self._read_message()
            if m.get("id") == mid:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self.events.append((m["method"], m.get("params", {})))
        raise TimeoutError(method)

    def wait_event(self, method, session=None):
        deadline = time.monotonic() + self.wait_s
        while time.monotonic() < deadline:
            m = self._read_message()
            if "method" in m:
                self.events.append((m["method"], m.get("params", {})))
                if m["method"] == method:
                    return m.get("params", {})
        raise TimeoutError(method)

    def open(self, url, width=1300, height=900):
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable", session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False}, session=session)
        page.mark = len(self.events)
        self.call("Page.navigate", {"url": url}, session=session)
        if not any(m == "Page.loadEventFired" for m, _ in self.events[page.mark:]):
            self.wait_event("Page.loadEventFired")
        return page

    def close(self):
        try:
            if self.proc.poll() is None:
                try:
                    self.call("Browser.close")
                except Exception:
                    pass
                try:
                    self.proc.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        finally:
            for f in (self.w, self.r):
                try:
                    f.close()
                except OSError:
                    pass
            if self.profile:
                shutil.rmtree(self.profile, ignore_errors=True)


class Page:
    def __init__(self, browser, session):
        self.b = browser
        self.session = session
        self.mark = 0

    @property
    def events(self):
        return self.b.events[self.mark:]

    def eval(self, expression):
        r = self.b.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                             "awaitPromise": True}, session=self.session)
        if "exceptionDetails" in r:
            raise RuntimeError("page: %s" % r["exceptionDetails"].get("text"))
        return r["result"].get("value")

    def screenshot(self, path):
        r = self.b.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                        session=self.session)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
