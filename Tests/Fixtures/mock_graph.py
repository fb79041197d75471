#!/usr/bin/env python3
"""Mock of Facebook Login and the Graph API, for Gatehouse's me / request-proxy tests.

Speaks Facebook's documented wire formats: the manual login flow's dialog and code
exchange, the long-lived token exchange (grant_type=fb_exchange_token), GET /me with the
`fields` selector, DELETE /me/permissions, and Graph's error object
{"error": {"message", "type", "code", "fbtrace_id"}}. Every path may carry a version prefix
(/v19.0/...); the version used is recorded.

Checks on every request:
- `appsecret_proof` (hex HMAC-SHA256 of the access token keyed with the app secret) must be
  right when present, and present when the mock runs with --require-proof;
- it never accepts an `oauthio` header or a Cookie: such a request is counted under
  `forbidden_headers` and refused, so a test can assert that the gateway never forwards them.

Test-only endpoints: /echo/<anything> (any method: answers what it received),
/slow?seconds=N, and the control endpoints /_stats, /_reset, /_config?require_proof=0|1.
Python 3 standard library only; loopback only.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from mock_common import (  # noqa: E402
    NO_STORE, MockHandler, MockState, append_query, http, make_mock_server, parse_arguments, serve,
)

APP_ID = "1234567890"
APP_SECRET = "fb-app-secret-0123456789"
USER_ID = "10158253215623784"
LONG_LIVED_SECONDS = 5183944

PROFILE = {
    "id": USER_ID,
    "name": "Ada Lovelace",
    "first_name": "Ada",
    "last_name": "Lovelace",
    "email": "ada@example.com",
    "picture": {"data": {"height": 200, "is_silhouette": False, "width": 200,
                         "url": "https://platform-lookaside.fbsbx.com/platform/profilepic/?asid=10158253215623784&height=200&width=200"}},
    "gender": "female",
    "locale": "en_GB",
    "location": {"id": "106078429431815", "name": "London, United Kingdom"},
    "birthday": "12/10/1815",
    "link": "https://www.facebook.com/app_scoped_user_id/YXNpZADpBWEdKc2xR/",
}

STAT_KEYS = ("dialog", "code_exchange", "fb_exchange_token", "me", "revoke", "echo", "slow", "proof_checked",
             "proof_rejected", "forbidden_headers")

VERSION = re.compile(r"^/(v\d+\.\d+)(/.*)$")


def proof_for(token):
    return hmac.new(APP_SECRET.encode(), token.encode(), hashlib.sha256).hexdigest()


class GraphState(MockState):
    def __init__(self, host, require_proof):
        super().__init__(host)
        self.startup_require_proof = require_proof
        self.reset()

    def reset(self):
        with self.lock:
            self.require_proof = self.startup_require_proof
            self.stats = {key: 0 for key in STAT_KEYS}
            self.codes = {}      # code -> redirect_uri
            self.tokens = {}     # access token -> {"long_lived": bool}
            self.versions = []   # the version prefixes seen, in order
            self.last_echo = None


class GraphHandler(MockHandler):
    server_version = "mock-graph"
    log_name = "mock_graph"
    ROUTES = {
        "/dialog/oauth": ("handle_dialog", ("GET",)),
        "/oauth/access_token": ("handle_access_token", ("GET", "POST")),
        "/me": ("handle_me", ("GET",)),
        "/me/permissions": ("handle_permissions", ("DELETE",)),
        "/slow": ("handle_slow", ("GET",)),
        "/_stats": ("handle_stats", ("GET",)),
        "/_reset": ("handle_reset", ("POST",)),
        "/_config": ("handle_config", ("GET",)),
    }

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_OPTIONS(self):
        self.dispatch("OPTIONS")

    def find_route(self, path):
        match = VERSION.match(path)
        if match:
            with self.state.lock:
                self.state.versions.append(match.group(1))
            path = match.group(2)
            self.req_path = path
        if path.startswith("/echo/") or path == "/echo":
            return ("handle_echo", ("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))
        return self.ROUTES.get(path)

    def dispatch(self, method):
        # Checked before routing, so nothing a gateway forwards by mistake goes unnoticed.
        if not self.path.startswith("/_") and (self.headers.get("oauthio") is not None or self.headers.get("Cookie") is not None):
            self.state.count("forbidden_headers")
            self.method = method
            try:
                self.read_body()
            except (ValueError, OSError):
                pass
            return self.graph_error(400, "Forbidden header forwarded (oauthio or Cookie)", 100)
        return super().dispatch(method)

    # -- helpers --

    def graph_error(self, status, message, code, kind="OAuthException"):
        return self.send_json(status, {"error": {"message": message, "type": kind, "code": code,
                                                 "fbtrace_id": "A" + secrets.token_hex(10)}})

    def params(self):
        pairs = list(self.query)
        form = self.form_params()
        if form:
            pairs += form
        return dict(pairs)

    def access_token(self, params):
        header = self.headers.get("Authorization") or ""
        if header.lower().startswith("bearer "):
            return header[7:].strip()
        return params.get("access_token")

    def check_proof(self, params, token):
        """None when the proof is acceptable, else the error already sent."""
        proof = params.get("appsecret_proof")
        with self.state.lock:
            required = self.state.require_proof
        if proof is None:
            if required:
                self.state.count("proof_rejected")
                return self.graph_error(400, "API calls from the server require an appsecret_proof argument", 100, "GraphMethodException")
            return None
        if not hmac.compare_digest(proof, proof_for(token)):
            self.state.count("proof_rejected")
            return self.graph_error(400, "Invalid appsecret_proof provided in the API argument", 100, "GraphMethodException")
        self.state.count("proof_checked")
        return None

    def authorised(self, params):
        """The access token if it is valid and its proof right; else None (error sent)."""
        token = self.access_token(params)
        with self.state.lock:
            known = token in self.state.tokens
        if not token or not known:
            self.graph_error(400, "Invalid OAuth access token - Cannot parse access token", 190)
            return None
        if self.check_proof(params, token) is not None:
            return None
        return token

    # -- Facebook Login --

    def handle_dialog(self):
        params = dict(self.query)
        self.state.count("dialog")
        if params.get("client_id") != APP_ID or not params.get("redirect_uri"):
            return self.graph_error(400, "Invalid App ID", 101)
        code = "AQ" + secrets.token_urlsafe(32)
        with self.state.lock:
            self.state.codes[code] = params["redirect_uri"]
        pairs = [("code", code)]
        if "state" in params:
            pairs.append(("state", params["state"]))
        return self.send(302, b"", None, [("Location", append_query(params["redirect_uri"], pairs))] + list(NO_STORE))

    def handle_access_token(self):
        params = self.params()
        if params.get("client_id") != APP_ID or params.get("client_secret") != APP_SECRET:
            return self.graph_error(400, "Error validating client secret.", 1)
        if params.get("grant_type") == "fb_exchange_token":
            old = params.get("fb_exchange_token") or ""
            with self.state.lock:
                known = old in self.state.tokens
            if not known:
                return self.graph_error(400, "Invalid OAuth access token - Cannot parse access token", 190)
            if params.get("appsecret_proof") is not None and self.check_proof(params, old) is not None:
                return None
            self.state.count("fb_exchange_token")
            token = "EAAL" + secrets.token_urlsafe(40)
            with self.state.lock:
                self.state.tokens[token] = {"long_lived": True}
            return self.send_json(200, {"access_token": token, "token_type": "bearer", "expires_in": LONG_LIVED_SECONDS}, NO_STORE)
        code = params.get("code") or ""
        with self.state.lock:
            redirect_uri = self.state.codes.pop(code, None)
        if redirect_uri is None:
            return self.graph_error(400, "This authorization code has been used.", 100)
        if params.get("redirect_uri") != redirect_uri:
            return self.graph_error(400, "Can't load URL: the redirect_uri differs from the one used in the dialog", 191)
        self.state.count("code_exchange")
        token = "EAAS" + secrets.token_urlsafe(40)
        with self.state.lock:
            self.state.tokens[token] = {"long_lived": False}
        return self.send_json(200, {"access_token": token, "token_type": "bearer", "expires_in": 5400}, NO_STORE)

    # -- Graph API --

    def handle_me(self):
        params = dict(self.query)
        if self.authorised(params) is None:
            return None
        self.state.count("me")
        fields = params.get("fields")
        wanted = ["id", "name"] if not fields else [re.sub(r"\..*$", "", name) for name in fields.split(",")]
        return self.send_json(200, {name: PROFILE[name] for name in wanted if name in PROFILE})

    def handle_permissions(self):
        params = dict(self.query)
        token = self.authorised(params)
        if token is None:
            return None
        self.state.count("revoke")
        with self.state.lock:
            self.state.tokens.pop(token, None)
        return self.send_json(200, {"success": True})

    def handle_echo(self):
        params = dict(self.query)
        form = self.form_params() if self.method in ("POST", "PUT", "PATCH") else None
        if form:
            params.update(dict(form))
        token = self.authorised(params)
        if token is None:
            return None
        self.state.count("echo")
        seen = {
            "method": self.method,
            "path": self.req_path,
            "query": dict(self.query),
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "body": self.body.decode("utf-8", "replace"),
        }
        with self.state.lock:
            self.state.last_echo = seen
        return self.send_json(201 if self.method == "POST" else 200, seen,
                              [("X-Graph-Echo", "1"), ("Set-Cookie", "fr=provider-cookie; Path=/"),
                               ("Access-Control-Allow-Origin", "https://graph.example")])

    def handle_slow(self):
        seconds = float(dict(self.query).get("seconds", "5"))
        self.state.count("slow")
        time.sleep(min(seconds, 30))
        return self.send_json(200, {"slept": seconds})

    # -- control --

    def handle_stats(self):
        with self.state.lock:
            stats = dict(self.state.stats)
            stats["versions"] = sorted(set(self.state.versions))
            stats["last_echo"] = self.state.last_echo
        return self.send_json(200, stats, NO_STORE)

    def handle_reset(self):
        self.state.reset()
        return self.send_json(200, {"reset": True})

    def handle_config(self):
        params = dict(self.query)
        with self.state.lock:
            if "require_proof" in params:
                self.state.require_proof = params["require_proof"] == "1"
            config = {"require_proof": self.state.require_proof}
        return self.send_json(200, config)


def make_server(host, port, verbose=False, require_proof=False):
    return make_mock_server(host, port, GraphHandler, GraphState(host, require_proof), verbose)


def selftest():
    """A quick independent walk through the flow: login, me, proof, exchange, revoke."""
    import threading
    server = make_server("127.0.0.1", 0, require_proof=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d/v19.0" % server.server_address[1]
    failures = 0

    def check(name, ok):
        nonlocal failures
        print(("ok   " if ok else "FAIL ") + name)
        failures += 0 if ok else 1

    dialog = http("GET", base + "/dialog/oauth?" + urllib.parse.urlencode(
        {"client_id": APP_ID, "redirect_uri": "http://127.0.0.1/cb", "state": "s"}))
    location = dialog.headers["Location"]
    code = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query))["code"]
    exchanged = http("GET", base + "/oauth/access_token?" + urllib.parse.urlencode(
        {"client_id": APP_ID, "client_secret": APP_SECRET, "redirect_uri": "http://127.0.0.1/cb", "code": code}))
    token = exchanged.json()["access_token"]
    check("code exchange", exchanged.status == 200)
    check("me without proof refused", http("GET", base + "/me?access_token=" + token).status == 400)
    me = http("GET", base + "/me?" + urllib.parse.urlencode(
        {"access_token": token, "appsecret_proof": proof_for(token), "fields": "id,email,picture.type(large)"}))
    check("me with proof", me.status == 200 and me.json()["email"] == "ada@example.com" and "name" not in me.json())
    check("oauthio refused", http("GET", base + "/me", headers={"oauthio": "k=x"}).status == 400)
    longer = http("GET", base + "/oauth/access_token?" + urllib.parse.urlencode(
        {"grant_type": "fb_exchange_token", "client_id": APP_ID, "client_secret": APP_SECRET, "fb_exchange_token": token}))
    check("long-lived exchange", longer.json().get("expires_in") == LONG_LIVED_SECONDS)
    fresh = longer.json()["access_token"]
    revoked = http("DELETE", base + "/me/permissions?" + urllib.parse.urlencode({"access_token": fresh, "appsecret_proof": proof_for(fresh)}))
    check("revoke", revoked.json() == {"success": True})
    check("revoked token refused", http("GET", base + "/me?" + urllib.parse.urlencode(
        {"access_token": fresh, "appsecret_proof": proof_for(fresh)})).status == 400)
    server.shutdown()
    return 0 if failures == 0 else 1


def main(argv):
    def options(parser):
        parser.add_argument("--require-proof", action="store_true", help="refuse Graph calls without appsecret_proof")
    args = parse_arguments(argv, "Mock of Facebook Login and the Graph API for tests.", options)
    if args.selftest:
        return selftest()
    return serve(lambda: make_server(args.host, args.port, args.verbose, args.require_proof), args.exit_on_stdin_eof)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
