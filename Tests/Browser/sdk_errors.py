#!/usr/bin/env python3
"""Errors the OAuth.io SDK must see, in headless Chromium (issue 41).

A page of our own opens /auth/mock2 in a popup as the SDK's OAuth.popup() does and waits up
to --wait seconds for a message from the gateway's origin; without one the SDK's promise
would stay pending. The app (--key) whitelists only http://localhost:<page-port>. Cases:

  unknown-key        the popup names a public key no app has. Expected: an error message
                     posted to the page, its text mentioning the public key.
  unlisted-origin    the page is served from http://localhost:<stranger-port>, which the app
                     does not whitelist. Expected: an error message posted to that page (the
                     `d` origin), its text saying the origin does not match a registered domain.
  unlisted-redirect  redirect mode (a top-level navigation) with a redirect_uri on the
                     attacker origin, which the app does not whitelist. Expected: the browser
                     never reaches the redirect_uri and the tab shows a plain error page
                     (status 400) with readable text.

Usage: sdk_errors.py --case unknown-key --gateway URL --key KEY --page-port N
                     --stranger-port N --attacker-port N [--screenshots DIR]
Prints one JSON line ({"ok": ..., "case": ..., ...}) and exits 0 when the case holds.
"""
import argparse
import json
import secrets
import sys
import time

from selenium.webdriver.common.by import By

import browser_support as support

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>SDK error test</title></head>
<body>
<button id="popup">Sign in (popup)</button>
<a id="redirect" href="#">Sign in (redirect)</a>
<pre id="result"></pre>
<script>
const gateway = %(gateway)s;
const key = %(key)s;
const gatewayOrigin = new URL(gateway).origin;
const state = Array.from(crypto.getRandomValues(new Uint8Array(16)), b => b.toString(16).padStart(2, "0")).join("");
window.addEventListener("message", (event) => {
  if (event.origin !== gatewayOrigin || document.getElementById("result").textContent) return;
  let message;
  try { message = JSON.parse(event.data); } catch (e) { message = {unparsed: String(event.data).slice(0, 300)}; }
  document.getElementById("result").textContent = JSON.stringify(message);
});
function startURL(extra) {
  return gateway + "/auth/mock2?k=" + encodeURIComponent(key) +
      "&d=" + encodeURIComponent(location.origin + "/") + extra;
}
document.getElementById("popup").addEventListener("click", () => {
  const opts = {state: state, state_type: "client"};
  window.open(startURL("&opts=" + encodeURIComponent(JSON.stringify(opts))), "oauthio", "width=480,height=640");
});
document.getElementById("redirect").addEventListener("click", (event) => {
  event.preventDefault();
  location.href = startURL("&redirect_uri=" + encodeURIComponent(%(redirect_uri)s));
});
</script>
</body></html>
"""

EXPECTED = {"unknown-key": "public key", "unlisted-origin": "does not match"}


def popup_case(driver, args, page_origin, expected):
    driver.get(page_origin + "/")
    driver.find_element(By.ID, "popup").click()
    start = time.monotonic()
    text = ""
    while time.monotonic() - start < args.wait and not text:
        time.sleep(0.2)
        text = driver.find_element(By.ID, "result").text.strip()
    waited = round(time.monotonic() - start, 1)
    message = json.loads(text) if text else None
    words = message.get("message") if isinstance(message, dict) else None
    matches = isinstance(words, str) and expected in words.lower()
    outcome = {
        "ok": bool(message) and message.get("status") == "error" and matches,
        "message_received": message is not None, "message": message, "expected_substring": expected, "waited_s": waited,
    }
    if message is None:
        popup = [h for h in driver.window_handles if h != driver.current_window_handle]
        if popup:
            driver.switch_to.window(popup[0])
            outcome["popup"] = support.visible_state(driver)
            driver.switch_to.window(driver.window_handles[0])
        outcome["why"] = "no message from the gateway within %gs: the SDK's promise would stay pending" % args.wait
    elif not outcome["ok"]:
        outcome["why"] = "the message is not an error whose text contains %r" % expected
    return outcome


def redirect_case(driver, args, page_origin, attacker):
    driver.get(page_origin + "/")
    driver.get_log("performance")
    driver.find_element(By.ID, "redirect").click()
    waited = support.settle(driver, lambda: bool(attacker.snapshot()[0]), args.wait)
    requests = support.document_requests(driver)
    state = support.visible_state(driver)
    hits, _ = attacker.snapshot()
    final = requests[-1] if requests else {}
    on_gateway = state["url"].startswith(args.gateway + "/")
    error_page = on_gateway and final.get("status") == 400 and support.readable_error(state["text"])
    outcome = {
        "ok": not hits and error_page,
        "attacker_hits": [h["path"] for h in hits], "error_page": error_page,
        "final_url": state["url"][:160], "final_status": final.get("status"), "final_text": state["text"][:200],
        "waited_s": waited,
    }
    if hits:
        outcome["why"] = "the browser was sent to the unlisted redirect_uri"
    elif not error_page:
        outcome["why"] = "the tab does not show a readable 400 error page on the gateway"
    return outcome


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("unknown-key", "unlisted-origin", "unlisted-redirect"), required=True)
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--page-port", type=int, required=True)
    parser.add_argument("--stranger-port", type=int, required=True)
    parser.add_argument("--attacker-port", type=int, required=True)
    parser.add_argument("--screenshots", default="")
    parser.add_argument("--wait", type=float, default=10)
    args = parser.parse_args()

    attacker = support.Attacker(args.attacker_port)
    key = "unknown-" + secrets.token_hex(8) if args.case == "unknown-key" else args.key
    port = args.stranger_port if args.case == "unlisted-origin" else args.page_port
    page = PAGE % {"gateway": json.dumps(args.gateway), "key": json.dumps(key),
                   "redirect_uri": json.dumps(attacker.origin + "/land")}
    server = support.serve(port, lambda *_: (200, "text/html; charset=utf-8", page))
    page_origin = "http://localhost:%d" % port
    try:
        driver = support.start_chromium()
    except RuntimeError as error:
        server.shutdown()
        attacker.server.shutdown()
        print(json.dumps({"ok": False, "case": args.case, "why": str(error)}))
        return 1
    try:
        if args.case == "unlisted-redirect":
            outcome = redirect_case(driver, args, page_origin, attacker)
        else:
            outcome = popup_case(driver, args, page_origin, EXPECTED[args.case])
    except Exception as error:  # report, never hang
        outcome = {"ok": False, "why": type(error).__name__ + ": " + str(error)[:300]}
    return support.finish(driver, outcome, args.case, "sdk_errors", args.screenshots, [server, attacker.server])


if __name__ == "__main__":
    sys.exit(main())
