#!/usr/bin/env python3
"""Drives a Gatehouse popup login in headless Chromium, the way the OAuth.io JS SDK does.

A page of our own, served from http://localhost:<port>/, opens /auth/<provider> in a popup,
accepts the postMessage only from the gateway's origin, checks the provider and its own state,
and writes the outcome into the page, where this script reads it. Nothing here copies the SDK.

Usage: popup_flow.py --gateway http://127.0.0.1:6284 --key KEY --provider mock2
Prints one JSON line ({"ok": true, ...}) and exits 0 on success, 1 otherwise.
"""
import argparse
import json
import sys

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import browser_support as support

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Gatehouse popup test</title></head>
<body>
<button id="login">Sign in</button>
<pre id="result"></pre>
<pre id="ignored"></pre>
<script>
const gateway = %(gateway)s;
const key = %(key)s;
const provider = %(provider)s;
const bytes = new Uint8Array(16);
crypto.getRandomValues(bytes);
const state = Array.from(bytes, b => b.toString(16).padStart(2, "0")).join("");
const gatewayOrigin = new URL(gateway).origin;
function finish(outcome) { document.getElementById("result").textContent = JSON.stringify(outcome); }
window.addEventListener("message", (event) => {
  if (event.origin !== gatewayOrigin) {
    document.getElementById("ignored").textContent += event.origin + "\\n";
    return;
  }
  let message;
  try { message = JSON.parse(event.data); } catch (e) { return finish({ok: false, why: "not JSON"}); }
  if (!message.provider) return;
  if (message.provider.toLowerCase() !== provider) return finish({ok: false, why: "provider mismatch"});
  if (message.status !== "success" || !message.data) return finish({ok: false, why: message.message || "no data"});
  if (String(message.state).replace(/\\s/g, "") !== state) return finish({ok: false, why: "state mismatch"});
  finish({ok: true, state: message.state, provider: message.provider,
          has_token: typeof message.data.access_token === "string" && message.data.access_token.length > 0,
          has_code: "code" in message.data, request_url: message.data.request && message.data.request.url});
});
document.getElementById("login").addEventListener("click", () => {
  const opts = {state: state, state_type: "client"};
  const url = gateway + "/auth/" + provider + "?k=" + encodeURIComponent(key) +
      "&d=" + encodeURIComponent(location.origin + "/") + "&opts=" + encodeURIComponent(JSON.stringify(opts));
  window.open(url, "oauthio", "width=480,height=640");
});
</script>
</body></html>
"""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--provider", default="mock2")
    parser.add_argument("--timeout", type=float, default=30)
    args = parser.parse_args()

    page = PAGE % {"gateway": json.dumps(args.gateway), "key": json.dumps(args.key), "provider": json.dumps(args.provider)}
    server = support.serve(0, lambda *_: (200, "text/html; charset=utf-8", page))
    port = server.server_address[1]
    try:
        driver = support.start_chromium(page_load_timeout=args.timeout)
    except RuntimeError as error:
        server.shutdown()
        print(json.dumps({"ok": False, "why": str(error)}))
        return 1
    outcome = {"ok": False, "why": "timed out"}
    try:
        driver.get("http://localhost:%d/" % port)
        driver.find_element(By.ID, "login").click()
        WebDriverWait(driver, args.timeout).until(lambda d: d.find_element(By.ID, "result").text.strip() != "")
        outcome = json.loads(driver.find_element(By.ID, "result").text)
        outcome["ignored_origins"] = [o for o in driver.find_element(By.ID, "ignored").text.split("\n") if o]
    except Exception as error:  # report, never hang
        outcome = {"ok": False, "why": type(error).__name__ + ": " + str(error)[:300]}
    finally:
        driver.quit()
        server.shutdown()
    print(json.dumps(outcome))
    return 0 if outcome.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())
