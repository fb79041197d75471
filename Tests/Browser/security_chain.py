#!/usr/bin/env python3
"""Cross-app token theft through the gateway's own origin, in headless Chromium (issue 41).

Two apps on one gateway: A whitelists only its page origin (http://localhost:<page-port>),
B only the attacker's (http://localhost:<attacker-port>). Cases:

  chain      From A's page, a redirect-mode login for A whose redirect_uri is a gateway URL
             that starts B's login with redirect_type=server and B's redirect_uri on the
             attacker. A browser carries A's `#oauthio=<A's tokens>` through B's login, and a
             302 without a fragment of its own lets it inherit that fragment, so A's tokens
             would land on the attacker. Expected: no A token reaches the attacker, and A's
             login is refused with a plain error page on the gateway (status 400).
  inherited  A direct visit to B's start URL with `#oauthio=INHERITED-MARK`. Expected: B's
             login lands on the attacker page (its own result in the query) and the landing
             hash does not carry INHERITED-MARK (the gateway's 302s end in a fragment of
             their own).

Usage: security_chain.py --case chain --gateway URL --key-a KEY --key-b KEY
                         --page-port N --attacker-port N [--screenshots DIR]
Prints one JSON line ({"ok": ..., "case": ..., ...}) and exits 0 when the case holds.
"""
import argparse
import json
import sys
import urllib.parse

from selenium.webdriver.common.by import By

import browser_support as support

MARK = "INHERITED-MARK"

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>App A</title></head>
<body><h1>App A</h1><a id="login" href="#">Sign in (redirect)</a>
<script>
document.getElementById("login").addEventListener("click", (event) => {
  event.preventDefault();
  location.href = %(start)s;
});
</script></body></html>
"""


def start_url(gateway, key, page, redirect_uri, extra=None):
    query = {"k": key, "d": page + "/", "redirect_uri": redirect_uri}
    query.update(extra or {})
    return gateway + "/auth/mock2?" + urllib.parse.urlencode(query)


def b_start_url(args, attacker):
    """B's server-mode login, its redirect_uri on the attacker (which B whitelists)."""
    return start_url(args.gateway, args.key_b, attacker.origin, attacker.origin + "/land", {"redirect_type": "server"})


def chain_summary(requests):
    """The document requests without their queries (they hold tokens), with their fragments' start."""
    return [{"status": r["status"], "url": r["url"].split("?")[0], "fragment": r["fragment"][:40]} for r in requests]


def arrivals(attacker):
    """What reached the attacker: requests, what its pages saw, and every token in it."""
    hits, reports = attacker.snapshot()
    in_hash = [m for r in reports for m in support.oauthio_messages(r.get("hash", ""))]
    in_search = [m for r in reports for m in support.oauthio_messages(r.get("search", ""))]
    in_search += [m for h in hits for m in support.oauthio_messages(h.get("query", ""))]
    return hits, reports, in_hash, in_search


def run_chain(driver, args, attacker, page_origin):
    a_start = start_url(args.gateway, args.key_a, page_origin, b_start_url(args, attacker))
    page = PAGE % {"start": json.dumps(a_start)}
    server = support.serve(args.page_port, lambda *_: (200, "text/html; charset=utf-8", page))
    try:
        driver.get(page_origin + "/")
        driver.get_log("performance")  # only what the click starts
        driver.find_element(By.ID, "login").click()
        waited = support.settle(driver, lambda: bool(attacker.snapshot()[1]), args.timeout)
        requests = support.document_requests(driver)
        state = support.visible_state(driver)
    finally:
        server.shutdown()
    hits, reports, in_hash, in_search = arrivals(attacker)
    b_tokens = set(support.access_tokens(in_search))
    # The only other login this browser ran is A's: any other token the attacker holds is A's.
    a_tokens = [t for t in support.access_tokens(in_hash + in_search) if t not in b_tokens]
    final = requests[-1] if requests else {}
    on_gateway = state["url"].startswith(args.gateway + "/")
    refused = on_gateway and final.get("status") == 400 and support.readable_error(state["text"])
    outcome = {
        "ok": not a_tokens and not in_hash and refused,
        "a_token_reached_attacker": bool(a_tokens),
        "a_tokens_at_attacker": a_tokens, "b_tokens_at_attacker": sorted(b_tokens),
        "oauthio_in_attacker_hash": len(in_hash),
        "attacker_hits": [h["path"] for h in hits],
        "a_login_refused_with_error_page": refused,
        "final_url": state["url"][:160], "final_status": final.get("status"), "final_text": state["text"][:200],
        "chain": chain_summary(requests), "waited_s": waited,
    }
    if not outcome["ok"]:
        problems = []
        if a_tokens or in_hash:
            problems.append("app A's oauthio message reached the attacker origin in its fragment")
        if not refused:
            problems.append("A's login with a gateway redirect_uri was not refused with a 400 error page")
        outcome["why"] = "; ".join(problems)
    return outcome


def run_inherited(driver, args, attacker):
    driver.get_log("performance")
    driver.get(b_start_url(args, attacker) + "#oauthio=" + MARK)
    waited = support.settle(driver, lambda: bool(attacker.snapshot()[1]), args.timeout)
    requests = support.document_requests(driver)
    hits, reports, in_hash, in_search = arrivals(attacker)
    hashes = [r.get("hash", "") for r in reports]
    inherited = any(MARK in h for h in hashes)
    landed = bool(reports) and any(m.get("status") == "success" for m in in_search)
    outcome = {
        "ok": landed and not inherited,
        "landed_with_own_result": landed,
        "mark_inherited": inherited,
        "landing_hashes": [h[:80] for h in hashes],
        "chain": chain_summary(requests), "waited_s": waited,
    }
    if inherited:
        outcome["why"] = "the gateway's fragment-less 302 let the landing page inherit #oauthio=" + MARK
    elif not landed:
        outcome["why"] = "B's login did not land on its redirect_uri with its own result"
    return outcome


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=("chain", "inherited"), required=True)
    parser.add_argument("--gateway", required=True)
    parser.add_argument("--key-a", required=True)
    parser.add_argument("--key-b", required=True)
    parser.add_argument("--page-port", type=int, required=True)
    parser.add_argument("--attacker-port", type=int, required=True)
    parser.add_argument("--screenshots", default="")
    parser.add_argument("--timeout", type=float, default=10)
    args = parser.parse_args()

    attacker = support.Attacker(args.attacker_port)
    page_origin = "http://localhost:%d" % args.page_port
    try:
        driver = support.start_chromium()
    except RuntimeError as error:
        attacker.server.shutdown()
        print(json.dumps({"ok": False, "case": args.case, "why": str(error)}))
        return 1
    try:
        if args.case == "chain":
            outcome = run_chain(driver, args, attacker, page_origin)
        else:
            outcome = run_inherited(driver, args, attacker)
    except Exception as error:  # report, never hang
        outcome = {"ok": False, "why": type(error).__name__ + ": " + str(error)[:300]}
    return support.finish(driver, outcome, args.case, "security_chain", args.screenshots, [attacker.server])


if __name__ == "__main__":
    sys.exit(main())
