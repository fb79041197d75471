"""What the headless Chromium tests share: starting the browser, serving our own pages,
an "attacker" server that records whatever lands on it, and reading back where a
navigation ended (URL, HTTP status, visible text) with a screenshot of every window.

Nothing here copies the OAuth.io SDK; the pages the scripts serve are our own code that
behaves as it does.
"""
import http.server
import json
import os
import threading
import time
import urllib.parse

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM_FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--disable-extensions", "--host-resolver-rules=MAP localhost 127.0.0.1")


def start_chromium(page_load_timeout=20):
    """A headless Chromium whose performance log records every document request (for the
    HTTP status and redirect chain of a navigation). Raises RuntimeError if it never starts."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    failure = "unknown"
    # Chromium can be slow to come up when the machine is busy (the rest of the suite runs
    # beside these tests), and chromedriver then gives up on the session: try again.
    for _ in range(3):
        try:
            driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
            driver.set_page_load_timeout(page_load_timeout)
            return driver
        except Exception as error:
            failure = type(error).__name__ + ": " + str(error)[:300]
    raise RuntimeError("chromium did not start: " + failure)


def serve(port, answer):
    """An HTTP server on 127.0.0.1:port (0 picks one); `answer(method, path, query, body)`
    returns (status, content type, text)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def respond(self, method):
            parts = urllib.parse.urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
            status, content_type, text = answer(method, parts.path, parts.query, body)
            data = text.encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.respond("GET")

        def do_POST(self):
            self.respond("POST")

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


LANDING = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Attacker landing</title></head>
<body><h1>Attacker origin</h1><pre id="landed" style="white-space: pre-wrap; word-break: break-all"></pre>
<script>
const seen = {path: location.pathname, search: location.search, hash: location.hash};
document.getElementById("landed").textContent = JSON.stringify(seen, null, 1);
fetch("/record", {method: "POST", body: JSON.stringify(seen)});
</script></body></html>
"""


class Attacker:
    """A second local origin that keeps every page request it gets (the server sees the
    query) and what its landing page's script saw of `location` (only the page sees the
    fragment), so a test can tell what a browser carried there."""

    def __init__(self, port):
        self.lock = threading.Lock()
        self.hits = []
        self.reports = []
        self.server = serve(port, self.answer)
        self.port = self.server.server_address[1]
        self.origin = "http://localhost:%d" % self.port

    def answer(self, method, path, query, body):
        if path == "/favicon.ico":
            return 404, "text/plain", ""
        with self.lock:
            if method == "POST" and path == "/record":
                try:
                    self.reports.append(json.loads(body))
                except ValueError:
                    self.reports.append({"unparsed": body[:500]})
                return 204, "text/plain", ""
            self.hits.append({"path": path, "query": query})
        return 200, "text/html; charset=utf-8", LANDING

    def snapshot(self):
        with self.lock:
            return list(self.hits), list(self.reports)


def oauthio_messages(text):
    """The OAuth.io messages (`oauthio=<percent-encoded JSON>`) in a query or fragment."""
    messages = []
    for pair in text.lstrip("?#").split("&"):
        name, _, value = pair.partition("=")
        if name != "oauthio":
            continue
        try:
            messages.append(json.loads(urllib.parse.unquote(value)))
        except ValueError:
            messages.append({"unparsed": value[:200]})
    return messages


def access_tokens(messages):
    return [m["data"]["access_token"] for m in messages
            if isinstance(m.get("data"), dict) and isinstance(m["data"].get("access_token"), str)]


def document_requests(driver):
    """Every top-level document request since the last call, in order: URL (without the
    fragment), whether a fragment went with it, and the status it got (a redirect's status
    arrives with the request it led to)."""
    requests = []
    for entry in driver.get_log("performance"):
        event = json.loads(entry["message"])["message"]
        params = event.get("params", {})
        if event.get("method") == "Network.requestWillBeSent" and params.get("type") == "Document":
            redirect = params.get("redirectResponse")
            if redirect and requests:
                requests[-1]["status"] = redirect.get("status")
            request = params.get("request", {})
            requests.append({"url": request.get("url", ""), "fragment": request.get("urlFragment", ""), "status": None,
                             "frame": params.get("frameId")})
        elif event.get("method") == "Network.responseReceived" and params.get("type") == "Document":
            url = params.get("response", {}).get("url")
            for request in reversed(requests):
                if request["url"] == url and request["status"] is None:
                    request["status"] = params["response"].get("status")
                    break
    return requests


def settle(driver, done, timeout, quiet=2.0):
    """Waits until `done()` is true, or the tab's URL has stayed the same (and loaded) for
    `quiet` seconds, or `timeout` passes. Returns the seconds waited."""
    start = time.monotonic()
    last_url, since = None, time.monotonic()
    while time.monotonic() - start < timeout:
        if done():
            time.sleep(0.5)  # let the page finish what it started (the landing page's report)
            break
        try:
            url = driver.current_url
            ready = driver.execute_script("return document.readyState") == "complete"
        except Exception:
            url, ready = None, False
        if url != last_url or not ready:
            last_url, since = url, time.monotonic()
        elif time.monotonic() - since >= quiet:
            break
        time.sleep(0.2)
    return round(time.monotonic() - start, 1)


def visible_state(driver):
    """The current tab: URL, the text a person sees (shortened), and its document status."""
    try:
        text = driver.execute_script("return document.body ? document.body.innerText : ''") or ""
    except Exception as error:
        text = "(unreadable: %s)" % type(error).__name__
    return {"url": driver.current_url, "text": text.strip()[:400]}


def screenshots(driver, directory, name):
    """A PNG of every open window, `<directory>/<name>-<n>.png`; returns the paths."""
    paths = []
    if not directory:
        return paths
    os.makedirs(directory, exist_ok=True)
    for number, handle in enumerate(driver.window_handles):
        try:
            driver.switch_to.window(handle)
            path = os.path.join(directory, "%s-%d.png" % (name, number))
            if driver.save_screenshot(path):
                paths.append(path)
        except Exception:
            continue
    if driver.window_handles:
        driver.switch_to.window(driver.window_handles[0])
    return paths


def finish(driver, outcome, case, name, directory, servers):
    """Names the case, takes the screenshots, stops the browser and servers, prints the one
    JSON line the Swift test reads; returns the exit code."""
    outcome["case"] = case
    outcome["screenshots"] = screenshots(driver, directory, name + "-" + case)
    driver.quit()
    for server in servers:
        server.shutdown()
    print(json.dumps(outcome))
    return 0 if outcome.get("ok") else 1


def readable_error(text):
    """A plain error page a person can read: some text, naming what was wrong."""
    lowered = text.lower()
    return bool(text) and any(word in lowered for word in ("redirect", "domain", "origin"))
