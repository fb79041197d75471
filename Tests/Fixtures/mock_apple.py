#!/usr/bin/env python3
"""Mock of Sign in with Apple's server API for Gatehouse's integration tests.

Apple is unreachable from test machines, so this speaks its wire formats on loopback instead
(Apple's documented server API): /auth/authorize with form_post and the first-consent `user`
field, /auth/token with the ES256 client_secret JWT (client_secret_post only), /auth/revoke,
/auth/keys (RS256 JWKS with rotation), RS256 identity tokens, and server-to-server
notifications. Helpers prefixed `/_` stand in for the parts a test cannot drive through HTTP
(a native app's credential, hand-made tokens, key rotation, notifications). Python 3
standard library only; all state is in memory.

    python3 mock_apple.py [--host 127.0.0.1] [--port 0] [--exit-on-stdin-eof] [--verbose]
    python3 mock_apple.py --selftest

The first and only stdout line is "PORT <n>"; the server then runs until SIGTERM or SIGINT
and exits 0. See README.md next to this file for the endpoints.
"""

import base64
import hashlib
import html
import html.parser
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

# Explicitly, because -I and PYTHONSAFEPATH leave the script's directory off sys.path.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from mock_common import (  # noqa: E402
    NO_STORE, OPENER, RSA_E, BadRequest, MockHandler, MockState, RsaKey, SelfTestBase, b64url, client_b64,
    client_rs256_verify, client_unb64, compact_jws, http, json_bytes, make_mock_server, parse_arguments, serve,
)

# --- Registered identifiers (test constants) ---------------------------------------------

TEAM_ID = "TEAM123456"
KEY_ID = "KEY1234567"
SERVICES_ID = "com.example.web"
BUNDLE_IDS = ("com.example.app", "com.example.watch")
CLIENT_IDS = (SERVICES_ID,) + BUNDLE_IDS

# A second developer (another team, its own key and ids), for tests where two apps must not
# share what Apple gave one of them. Only /auth/token and /auth/revoke know it.
SECOND_TEAM_ID = "TEAM654321"
SECOND_KEY_ID = "KEY7654321"
SECOND_CLIENT_IDS = ("com.second.web", "com.second.app")

USER_SUB = "000723.25da8be3e0fb4ad0a9c1a82b1bc3fef0.0402"
USER_EMAIL = "ada@privaterelay.appleid.com"
USER_NAME = {"firstName": "Ada", "lastName": "Lovelace"}

CODE_LIFETIME = 300                 # authorization codes: 5 minutes, single use
ACCESS_TOKEN_LIFETIME = 3600
ID_TOKEN_LIFETIME = 86400
NOTIFICATION_LIFETIME = 86400
CLIENT_SECRET_MAX_LIFETIME = 15777000   # exp - iat, six months
CLIENT_SECRET_IAT_LEEWAY = 60           # iat may be this far in the future
REAL_USER_STATUS = 2                    # LikelyReal

FORM_POST_REQUIRED = "response_mode must be form_post when name or email scope is requested"

# --- NIST P-256 (SEC 2 secp256r1 / FIPS 186-4 D.1.2.3) ----------------------------------

P256_P = 0xFFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF
P256_A = P256_P - 3
P256_B = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
P256_N = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
P256_G = (0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
          0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5)

# The .p8 key the mock trusts for client_secret JWTs: the RFC 7515 appendix A.3 P-256 key
# (public part here; apple.md section 6 has it as a PKCS#8 PEM). Test data only.
CLIENT_KEY_X = 0x7FCDCE2770F6C45D4183CBEE6FDB4B7B580733357BE9EF13BACF6E3C7BD15445
CLIENT_KEY_Y = 0xC7F144CD1BBD9B7E872CDFEDB9EEB9F4B3695D6EA90B24AD8A4623288588E5AD
CLIENT_KEY_PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgjpsQnnGQmL+YBIff\n"
    "H1136cspYG6+0iY7X1fCE9+E9LKhRANCAAR/zc4ncPbEXUGDy+5v20t7WAczNXvp\n"
    "7xO6z248e9FURcfxRM0bvZt+hyzf7bnuufSzaV1uqQskrYpGIyiFiOWt\n"
    "-----END PRIVATE KEY-----\n"
)
# The second team's .p8 (made once with `openssl ecparam -name prime256v1 -genkey`; test data,
# also `MockApple.secondPrivateKeyPEM`). The selftest signs with the PEM.
SECOND_CLIENT_KEY_PEM = (
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgJtVTugQCgW1ri3Ri\n"
    "Afo0POgGh1mGiJKrJGsYJu1+HDWhRANCAARsjWbuAD9y1k3x6EWZhf5Bax1pCyGd\n"
    "tBJiKwZRwVEr9uf9zhF+hA47Q+aoMa9Te3LjpFELvMI2MzoJi30tvalb\n"
    "-----END PRIVATE KEY-----\n"
)
SECOND_CLIENT_KEY_X = 0x6C8D66EE003F72D64DF1E8459985FE416B1D690B219DB412622B0651C1512BF6
SECOND_CLIENT_KEY_Y = 0xE7FDCE117E840E3B43E6A831AF537B72E3A4510BBCC236333A098B7D2DBDA95B

# client_id -> (team id, key id, public key) of the developer that registered it.
DEVELOPERS = {client_id: (TEAM_ID, KEY_ID, (CLIENT_KEY_X, CLIENT_KEY_Y)) for client_id in CLIENT_IDS}
DEVELOPERS.update({client_id: (SECOND_TEAM_ID, SECOND_KEY_ID, (SECOND_CLIENT_KEY_X, SECOND_CLIENT_KEY_Y))
                   for client_id in SECOND_CLIENT_IDS})

# --- Two fixed 2048-bit RSA signing keys (made once with `openssl genrsa 2048`; test data) ---

RSA_KEYS = (
    RsaKey("mockApple1", (
        "c469ff8b5d248a12a2be96b4dc3db266b7a0bd2f5f98104af37c7c5e5a9a0ef3",
        "ebdd510356b4a7d3f2b85b9dccde13797a46ef8d7aa994a0d5384a8c5c588ce3",
        "dc293e5066b8c7f5830dd26d8d0f771e0598a25db286b3e0b42ee33b6f4fe074",
        "34fe77fb916bbe522983b3fdef9274ef3d07ec98047d90b03fd30987747b7494",
        "4b41cddd1026d430b1f3161182f1ee06c7b9af7d7101ff2bcff492b3f5d979a7",
        "1bc67b9e30c2c1d8bdfb680613294ea8d2051fba8f97b7b540070cf68bec54a0",
        "c701d1895246376d78960eaddee622ecdc2a9f0ca4b34dab737f6c86c197255e",
        "98ae74b0dd8c12fc29eddd79d680235cf52b0ea5c8435ffb2520bde20ef9be47",
    ), (
        "0f8705b1c1ca4ab410739abc6f90dd12abbfa455236c851537cc86947afb24e5",
        "79a704698c283a005276ea9f3dfbec74350b7892a9b8d04c2aaf098db11b3b00",
        "247e8a3396fb52ab8111cda9e575ec87ce0f73fe8e4781dee8bfb02d19aea9e2",
        "e5f19c10a23d6f4d5584d8ece14ca5bbe80a4154ff3de1fb5d0055078558e12d",
        "5881159759afce7ae83ba7cd35007a356811d05d4aea494ae41573d93f3916a1",
        "13f10d8276ef9d1fae022d45b6bb3e4c294e8ddb9c0ed6f46286f10d7b37537a",
        "580e6145ec1e05c1f97f865995af8968db3509de2aa28070b7e91d2ac2e070b2",
        "01a87c9e63b4a423f99ab786aa3800253fb4e227aeb484fed5f96003ba2a2049",
    )),
    RsaKey("mockApple2", (
        "9d02a936c808c3282ea48078518bc9d99f23469729741f9fecf8447f063e59ec",
        "20397d1f92256aad9f9b1a0f9f3e796c797687e5814b2cee8100d34553f946d5",
        "0e5fad604b2be55b738c6a4b400610b9b2289e1a50b8a0c2b5fc21f45f7fa404",
        "25dec0683369077ee405d7c3631a8f14429215d31bc63868813c9f6e79167fd7",
        "0e12bfa97d054bccc30862042c81940d0d02cebf2de1eaffd4ef24ed7734198e",
        "0d7a1b58961170c6c17a023df3f5124efcd94b1aafb78aa3e7bb5fe959d3f442",
        "6464e7a1883855295410d418dfa57be2a852d4966c93ff7a1a543719b8f407c6",
        "28996546516535102d8c1b10c2b54e55d406589d1bc263ea2be867877447ebe3",
    ), (
        "023a12ef5177fa589c0cbe3bb6a05e6d053a495a847e7ea2548892e420510b12",
        "73c48cf74129e1b0f3b60df111c79f8e3fccc411a7bb4ab859410b3e0cfa589c",
        "55f75a6ca6b4492cfa5f0ff4e04415c1a47ab9ff528cc3ceef28d3cc74fc48f5",
        "bc19c42dd628d3afe38907ade03e74b00b5faa0a93f6c43f0b32326aad31f9ff",
        "2b9f21c0ff5187dd08d297fe4ca020502ccb04806cf25c62d34604ef6f1adee3",
        "a7fba7965a4e129d94145a59705a880ca476714163356337e36c966aaab73517",
        "fafc544240b18c894f9c24cb66a723ea9d7532e126ffca72a3d8db45b0e072bc",
        "2c8c1cadde7b4a46c920b7927501d215e4440bae756909910c29e6a6b1ef4595",
    )),
)


# --- Encoding helpers -------------------------------------------------------------------


def b64url_decode(text):
    """Strict base64url without padding; ValueError on anything else."""
    if not isinstance(text, str) or not re.fullmatch(r"[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        raise ValueError("not base64url")
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def left_hash(value):
    """c_hash / at_hash: base64url of the left 16 bytes of SHA-256 over the ASCII value."""
    return b64url(hashlib.sha256(value.encode("ascii")).digest()[:16])


def scope_words(scope):
    return (scope or "").split()


def new_token(kind):
    """Apple-looking opaque values: c… codes, r… refresh tokens, a… access tokens."""
    return "%s%s.0.mock.%s" % (kind, secrets.token_hex(16), secrets.token_urlsafe(18))


def user_json(scope):
    """The first-consent `user` form field: a JSON string with what the scope asked for."""
    words = scope_words(scope)
    user = {}
    if "name" in words:
        user["name"] = dict(USER_NAME)
    if "email" in words:
        user["email"] = USER_EMAIL
    return json.dumps(user, separators=(",", ":"))


def first_login_user_json():
    return json.dumps({"name": USER_NAME, "email": USER_EMAIL}, separators=(",", ":"))


# --- ES256 verification: P-256 in Jacobian coordinates ----------------------------------

_INFINITY = (1, 1, 0)


def _jacobian_double(point):
    x1, y1, z1 = point
    if z1 == 0 or y1 == 0:
        return _INFINITY
    p = P256_P
    delta = z1 * z1 % p
    gamma = y1 * y1 % p
    beta = x1 * gamma % p
    alpha = 3 * (x1 - delta) * (x1 + delta) % p      # a = -3
    x3 = (alpha * alpha - 8 * beta) % p
    z3 = ((y1 + z1) * (y1 + z1) - gamma - delta) % p
    y3 = (alpha * (4 * beta - x3) - 8 * gamma * gamma) % p
    return (x3, y3, z3)


def _jacobian_add(first, second):
    if first[2] == 0:
        return second
    if second[2] == 0:
        return first
    p = P256_P
    x1, y1, z1 = first
    x2, y2, z2 = second
    z1z1 = z1 * z1 % p
    z2z2 = z2 * z2 % p
    u1 = x1 * z2z2 % p
    u2 = x2 * z1z1 % p
    s1 = y1 * z2 * z2z2 % p
    s2 = y2 * z1 * z1z1 % p
    if u1 == u2:
        return _jacobian_double(first) if s1 == s2 else _INFINITY
    h = (u2 - u1) % p
    r = (s2 - s1) % p
    hh = h * h % p
    hhh = h * hh % p
    v = u1 * hh % p
    x3 = (r * r - hhh - 2 * v) % p
    y3 = (r * (v - x3) - s1 * hhh) % p
    z3 = h * z1 * z2 % p
    return (x3, y3, z3)


def p256_multiply(scalar, point):
    """scalar * affine point, as an affine (x, y) or None for the point at infinity."""
    result = _INFINITY
    addend = (point[0], point[1], 1)
    for bit in bin(scalar % P256_N)[2:]:
        result = _jacobian_double(result)
        if bit == "1":
            result = _jacobian_add(result, addend)
    return _to_affine(result)


def _to_affine(point):
    x, y, z = point
    if z == 0:
        return None
    z_inverse = pow(z, -1, P256_P)
    zz = z_inverse * z_inverse % P256_P
    return (x * zz % P256_P, y * zz * z_inverse % P256_P)


def p256_on_curve(point):
    x, y = point
    return 0 <= x < P256_P and 0 <= y < P256_P and (y * y - (x * x * x + P256_A * x + P256_B)) % P256_P == 0


def es256_verify(message, signature, public_key):
    """ECDSA P-256 / SHA-256 (FIPS 186-4 section 6.4) over a JWS raw R||S signature (RFC 7518
    section 3.4): exactly 64 bytes, so a DER-encoded signature fails."""
    if len(signature) != 64 or not p256_on_curve(public_key):
        return False
    r = int.from_bytes(signature[:32], "big")
    s = int.from_bytes(signature[32:], "big")
    if not (1 <= r < P256_N and 1 <= s < P256_N):
        return False
    z = int.from_bytes(hashlib.sha256(message).digest(), "big")
    w = pow(s, -1, P256_N)
    u1 = z * w % P256_N
    u2 = r * w % P256_N
    g = (P256_G[0], P256_G[1], 1)
    q = (public_key[0], public_key[1], 1)
    # u1*G + u2*Q with one shared double-and-add pass (Shamir's trick).
    both = _jacobian_add(g, q)
    result = _INFINITY
    for i in range(max(u1.bit_length(), u2.bit_length()) - 1, -1, -1):
        result = _jacobian_double(result)
        bits = ((u1 >> i) & 1, (u2 >> i) & 1)
        if bits == (1, 1):
            result = _jacobian_add(result, both)
        elif bits == (1, 0):
            result = _jacobian_add(result, g)
        elif bits == (0, 1):
            result = _jacobian_add(result, q)
    affine = _to_affine(result)
    return affine is not None and affine[0] % P256_N == r


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_client_secret(secret, client_id, audience, now):
    """Apple's client_secret rules (apple.md section 3), for the developer that registered
    client_id (a registered id). None if valid, else why not."""
    team_id, key_id, public_key = DEVELOPERS[client_id]
    parts = secret.split(".")
    if len(parts) != 3:
        return "client_secret is not a compact JWS (%d segments)" % len(parts)
    try:
        header = json.loads(b64url_decode(parts[0]))
        claims = json.loads(b64url_decode(parts[1]))
        signature = b64url_decode(parts[2])
    except (ValueError, UnicodeDecodeError):
        return "client_secret segments are not base64url JSON"
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return "client_secret header or claims are not JSON objects"
    if header.get("alg") != "ES256":
        return "client_secret alg is %r, not ES256" % (header.get("alg"),)
    if header.get("kid") != key_id:
        return "client_secret kid is %r, not %s" % (header.get("kid"), key_id)
    if len(signature) != 64:
        return "client_secret signature is %d bytes, not raw R||S (64); DER?" % len(signature)
    signing_input = (parts[0] + "." + parts[1]).encode("ascii")
    if not es256_verify(signing_input, signature, public_key):
        return "client_secret ES256 signature does not verify with the registered key"
    if claims.get("iss") != team_id:
        return "client_secret iss is %r, not the team id %s" % (claims.get("iss"), team_id)
    if claims.get("aud") != audience:
        return "client_secret aud is %r, not %s" % (claims.get("aud"), audience)
    if claims.get("sub") != client_id:
        return "client_secret sub is %r but client_id is %r" % (claims.get("sub"), client_id)
    iat, exp = claims.get("iat"), claims.get("exp")
    if not _is_number(iat) or not _is_number(exp):
        return "client_secret iat/exp missing or not numbers"
    if iat > now + CLIENT_SECRET_IAT_LEEWAY:
        return "client_secret iat is %d s in the future" % (iat - now)
    if exp <= now:
        return "client_secret expired %d s ago" % (now - exp)
    if exp - iat > CLIENT_SECRET_MAX_LIFETIME:
        return "client_secret exp - iat is %d s, more than %d" % (exp - iat, CLIENT_SECRET_MAX_LIFETIME)
    return None


# --- State ------------------------------------------------------------------------------

STAT_KEYS = ("authorize", "token_code", "token_refresh", "revoke", "keys", "invalid_client", "discovery", "webhook_attempts")


class AppleState(MockState):
    """Everything the mock remembers. Every access goes through `lock`."""

    def __init__(self, host):
        super().__init__(host)
        self.reset()

    def reset(self):
        with self.lock:
            self.stats = {key: 0 for key in STAT_KEYS}
            self.refresh_calls = {}       # refresh token -> count of refresh_token grants
            self.last_invalid_client = ""
            self.codes = {}               # code -> record
            self.grants = {}              # grant id -> record
            self.access_tokens = {}       # token -> grant id
            self.refresh_tokens = {}      # token -> grant id
            self.consented = set()        # (client_id, sub) that already saw the consent sheet
            self.current_key = 0          # index into RSA_KEYS used for signing
            self.published = [0]          # indexes /auth/keys serves, in order
            self.pending_publish = False  # rotate?publish=later waiting for /_publish
            self.failing_key_fetches = 0  # /auth/keys answers 503 this many more times
            self.webhooks = []            # JSON bodies the app's webhook (/_webhook) accepted
            self.failing_webhooks = 0     # /_webhook answers 503 this many more times

    @property
    def issuer(self):
        return self.base_url

    def signing_key(self, which="current"):
        with self.lock:
            index = self.current_key if which == "current" else 1 - self.current_key
        return RSA_KEYS[index]

    def key_state(self):
        with self.lock:
            return {"current": RSA_KEYS[self.current_key].kid,
                    "published": [RSA_KEYS[index].kid for index in self.published],
                    "pending_publish": self.pending_publish}

    def make_jws(self, claims, which="current"):
        key = self.signing_key(which)
        return compact_jws({"kid": key.kid, "alg": "RS256"}, claims, key, ensure_ascii=False)

    def identity_claims(self, aud, auth_time, nonce=None, email=True, c_hash=None, at_hash=None):
        """An identity token's claims, in the order Apple's tokens carry them."""
        now = int(time.time())
        claims = {"iss": self.issuer, "aud": aud, "exp": now + ID_TOKEN_LIFETIME, "iat": now, "sub": USER_SUB}
        if nonce is not None:
            claims["nonce"] = nonce
        if c_hash is not None:
            claims["c_hash"] = c_hash
        if at_hash is not None:
            claims["at_hash"] = at_hash
        if email:
            claims["email"] = USER_EMAIL
            claims["email_verified"] = "true"
            claims["is_private_email"] = "true"
        claims["auth_time"] = auth_time
        claims["nonce_supported"] = True
        claims["real_user_status"] = REAL_USER_STATUS
        return claims

    def new_code(self, client_id, redirect_uri, nonce, scope, auth_time):
        code = new_token("c")
        with self.lock:
            self.codes[code] = {
                "client_id": client_id, "redirect_uri": redirect_uri, "nonce": nonce, "scope": scope,
                "auth_time": auth_time, "expires": time.time() + CODE_LIFETIME, "used": False,
                "native": redirect_uri is None,
            }
        return code

    def revoke_grant(self, grant):
        """Drops every token of one authorization and the user's consent. Caller holds the lock."""
        record = self.grants.pop(grant, None)
        for table in (self.access_tokens, self.refresh_tokens):
            for token in [t for t, g in table.items() if g == grant]:
                del table[token]
        if record is not None:
            self.consented.discard((record["client_id"], record["sub"]))


# --- HTTP -------------------------------------------------------------------------------


JSON_TYPE = "application/json;charset=UTF-8"


class AppleHandler(MockHandler):
    server_version = "MockApple/1.0"
    log_name = "mock_apple"
    json_content_type = JSON_TYPE
    json_ascii = False   # Apple sends non-ASCII as UTF-8, not \u escapes

    ROUTES = {
        "/auth/authorize": ("handle_authorize", ("GET",)),
        "/auth/token": ("handle_token", ("POST",)),
        "/auth/revoke": ("handle_revoke", ("POST",)),
        "/auth/keys": ("handle_keys", ("GET",)),
        "/.well-known/openid-configuration": ("handle_discovery", ("GET",)),
        "/_native": ("handle_native", ("POST",)),
        "/_sign": ("handle_sign", ("POST",)),
        "/_rotate": ("handle_rotate", ("POST",)),
        "/_publish": ("handle_publish", ("POST",)),
        "/_fail_keys": ("handle_fail_keys", ("POST",)),
        "/_notify": ("handle_notify", ("POST",)),
        "/_webhook": ("handle_webhook", ("POST",)),
        "/_webhooks": ("handle_webhooks", ("GET",)),
        "/_fail_webhook": ("handle_fail_webhook", ("POST",)),
        "/_stats": ("handle_stats", ("GET",)),
        "/_reset": ("handle_reset", ("POST",)),
    }

    def json_body(self):
        try:
            value = json.loads(self.body.decode("utf-8") or "{}")
        except (UnicodeDecodeError, ValueError) as error:
            raise BadRequest("body is not JSON: %s" % error)
        if not isinstance(value, dict):
            raise BadRequest("body must be a JSON object")
        return value

    # -- /auth/authorize --

    def error_page(self, title, message):
        """Apple shows problems with the client or redirect on its own page, never redirected."""
        page = ("<!DOCTYPE html>\n<html>\n<head><title>%s</title></head>\n<body>\n<h1>%s</h1>\n<p>%s</p>\n"
                "</body>\n</html>\n") % (html.escape(title), html.escape(title), html.escape(message))
        return self.send(400, page.encode("utf-8"), "text/html; charset=utf-8", NO_STORE)

    def handle_authorize(self):
        self.state.count("authorize")
        params, duplicates = self.single_values(self.query)
        if duplicates:
            return self.error_page("invalid_request", "Duplicate parameter: " + sorted(duplicates)[0])
        client_id = params.get("client_id")
        if client_id != SERVICES_ID:
            return self.error_page("invalid_client", "Invalid client id or web redirect url.")
        redirect_uri = params.get("redirect_uri") or ""
        parsed = urllib.parse.urlsplit(redirect_uri)
        if parsed.scheme not in ("http", "https") or not parsed.netloc or "#" in redirect_uri:
            return self.error_page("invalid_request", "Invalid web redirect url.")
        response_types = scope_words(params.get("response_type"))
        if set(response_types) == {"id_token"}:
            return self.error_page("invalid_request", "Requesting only id_token is unsupported.")
        if sorted(response_types) not in (["code"], ["code", "id_token"]) or len(set(response_types)) != len(response_types):
            return self.error_page("unsupported_response_type", "Invalid response_type.")
        wants_id_token = "id_token" in response_types
        response_mode = params.get("response_mode")
        if response_mode not in (None, "query", "fragment", "form_post"):
            return self.error_page("invalid_request", "Invalid response_mode.")
        scope = params.get("scope", "")
        words = scope_words(scope)
        if ("name" in words or "email" in words) and response_mode != "form_post":
            return self.error_page("invalid_request", FORM_POST_REQUIRED)
        response_mode = response_mode or "query"
        if wants_id_token and response_mode == "query":
            return self.error_page("invalid_request",
                                   "response_mode must be fragment or form_post when id_token is requested")
        state = params.get("state")
        nonce = params.get("nonce")

        if "deny" in words:  # the user pressed Cancel
            return self.respond_to_client(redirect_uri, response_mode,
                                          [("error", "user_cancelled_authorize"), ("state", state)])

        auth_time = int(time.time())
        code = self.state.new_code(client_id, redirect_uri, nonce, scope, auth_time)
        with self.state.lock:
            key = (client_id, USER_SUB)
            first = key not in self.state.consented
            self.state.consented.add(key)
        fields = [("code", code)]
        if wants_id_token:
            claims = self.state.identity_claims(client_id, auth_time, nonce, "email" in words, c_hash=left_hash(code))
            fields.append(("id_token", self.state.make_jws(claims)))
        fields.append(("state", state))
        if first and response_mode == "form_post" and ("name" in words or "email" in words):
            fields.append(("user", user_json(scope)))
        return self.respond_to_client(redirect_uri, response_mode, fields)

    # -- /auth/token and /auth/revoke --

    def oauth_error(self, error, description=None):
        body = {"error": error}
        if description is not None:
            body["error_description"] = description
        return self.send_json(400, body, NO_STORE)

    def invalid_client(self, reason):
        with self.state.lock:
            self.state.stats["invalid_client"] += 1
            self.state.last_invalid_client = reason
        if not self.server.quiet:
            sys.stderr.write("mock_apple: invalid_client: %s\n" % reason)
            sys.stderr.flush()
        return self.oauth_error("invalid_client")

    def authenticate_client(self, params):
        """client_secret_post with an ES256 JWT. The client_id, or None after invalid_client."""
        client_id = params.get("client_id")
        secret = params.get("client_secret")
        if not client_id:
            self.invalid_client("missing client_id")
            return None
        if client_id not in DEVELOPERS:
            self.invalid_client("unknown client_id %r" % client_id)
            return None
        if not secret:
            self.invalid_client("missing client_secret (HTTP Basic is not accepted)")
            return None
        reason = check_client_secret(secret, client_id, self.state.issuer, time.time())
        if reason is not None:
            self.invalid_client(reason)
            return None
        return client_id

    def read_form(self):
        """(params, None) or (None, response already sent)."""
        try:
            pairs = self.form_params()
        except BadRequest as error:
            return None, self.oauth_error("invalid_request", str(error))
        if pairs is None:
            return None, self.oauth_error("invalid_request", "Content-Type must be application/x-www-form-urlencoded")
        params, duplicates = self.single_values(pairs)
        if duplicates:
            return None, self.oauth_error("invalid_request", "Duplicate parameter: " + sorted(duplicates)[0])
        return params, None

    def handle_token(self):
        params, _ = self.read_form()
        grant_type = params.get("grant_type") if params is not None else None
        if grant_type == "authorization_code":
            self.state.count("token_code")
        elif grant_type == "refresh_token":
            self.state.count("token_refresh")
            token = params.get("refresh_token") or ""
            with self.state.lock:
                self.state.refresh_calls[token] = self.state.refresh_calls.get(token, 0) + 1
        if params is None:
            return
        client_id = self.authenticate_client(params)
        if client_id is None:
            return
        if not grant_type:
            return self.oauth_error("invalid_request", "Missing grant_type")
        if grant_type == "authorization_code":
            return self.grant_code(client_id, params)
        if grant_type == "refresh_token":
            return self.grant_refresh(client_id, params)
        return self.oauth_error("unsupported_grant_type")

    def grant_code(self, client_id, params):
        code = params.get("code")
        if not code:
            return self.oauth_error("invalid_request", "Missing code")
        redirect_uri = params.get("redirect_uri")
        failure = None
        with self.state.lock:
            record = self.state.codes.get(code)
            if record is None or record["expires"] < time.time():
                failure = ("invalid_grant", "The code has expired or has been revoked.")
            elif record["used"]:
                failure = ("invalid_grant", "The code has already been used.")
            elif record["client_id"] != client_id:
                failure = ("invalid_grant", "client_id mismatch. The code was not issued to %s." % client_id)
            elif record["native"] and redirect_uri is not None:
                failure = ("invalid_client", "redirect_uri sent for a code from a native app")
            elif not record["native"] and redirect_uri != record["redirect_uri"]:
                failure = ("invalid_client", "redirect_uri %r does not match the authorization request" % (redirect_uri,))
            else:
                # Only a successful exchange uses the code up.
                record["used"] = True
                grant = secrets.token_hex(8)
                access = new_token("a")
                refresh = new_token("r")
                self.state.grants[grant] = {
                    "client_id": client_id, "sub": USER_SUB, "scope": record["scope"],
                    "auth_time": record["auth_time"], "native": record["native"],
                }
                self.state.access_tokens[access] = grant
                self.state.refresh_tokens[refresh] = grant
        if failure is not None:
            if failure[0] == "invalid_client":
                return self.invalid_client(failure[1])
            return self.oauth_error(*failure)
        with_email = record["native"] or "email" in scope_words(record["scope"])
        claims = self.state.identity_claims(client_id, record["auth_time"], record["nonce"], with_email,
                                            at_hash=left_hash(access))
        return self.send_json(200, {
            "access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TOKEN_LIFETIME,
            "refresh_token": refresh, "id_token": self.state.make_jws(claims),
        }, NO_STORE)

    def grant_refresh(self, client_id, params):
        token = params.get("refresh_token")
        if not token:
            return self.oauth_error("invalid_request", "Missing refresh_token")
        failure = None
        with self.state.lock:
            grant = self.state.refresh_tokens.get(token)
            record = self.state.grants.get(grant) if grant is not None else None
            if record is None:
                failure = "The token has expired or has been revoked."
            elif record["client_id"] != client_id:
                failure = "client_id mismatch. The token was not issued to %s." % client_id
            else:
                access = new_token("a")
                self.state.access_tokens[access] = grant
        if failure is not None:
            return self.oauth_error("invalid_grant", failure)
        with_email = record["native"] or "email" in scope_words(record["scope"])
        claims = self.state.identity_claims(client_id, record["auth_time"], None, with_email, at_hash=left_hash(access))
        # No new refresh_token on a refresh grant.
        return self.send_json(200, {
            "access_token": access, "token_type": "Bearer", "expires_in": ACCESS_TOKEN_LIFETIME,
            "id_token": self.state.make_jws(claims),
        }, NO_STORE)

    def handle_revoke(self):
        self.state.count("revoke")
        params, sent = self.read_form()
        if params is None:
            return sent
        client_id = self.authenticate_client(params)
        if client_id is None:
            return
        token = params.get("token")
        if not token:
            return self.oauth_error("invalid_request", "Missing token")
        with self.state.lock:
            grant = self.state.refresh_tokens.get(token) or self.state.access_tokens.get(token)
            record = self.state.grants.get(grant) if grant is not None else None
            if record is not None and record["client_id"] == client_id:
                # Revoking ends the user's authorization of this client: every grant of it.
                for other in [g for g, r in self.state.grants.items()
                              if r["client_id"] == client_id and r["sub"] == record["sub"]]:
                    self.state.revoke_grant(other)
        # Junk, unknown, foreign and already revoked tokens all get the same empty 200.
        return self.send(200, b"", None, NO_STORE)

    # -- /auth/keys and discovery --

    def handle_keys(self):
        self.state.count("keys")
        with self.state.lock:
            failing = self.state.failing_key_fetches > 0
            if failing:
                self.state.failing_key_fetches -= 1
            keys = [RSA_KEYS[index].jwk() for index in self.state.published]
        if failing:
            return self.send_text(503, "Service Unavailable\n")
        return self.send_json(200, {"keys": keys})

    def handle_discovery(self):
        self.state.count("discovery")
        base = self.state.base_url
        return self.send_json(200, {
            "issuer": self.state.issuer,
            "authorization_endpoint": base + "/auth/authorize",
            "token_endpoint": base + "/auth/token",
            "revocation_endpoint": base + "/auth/revoke",
            "jwks_uri": base + "/auth/keys",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "fragment", "form_post"],
            "subject_types_supported": ["pairwise"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "name"],
            "token_endpoint_auth_methods_supported": ["client_secret_post"],
            "claims_supported": ["aud", "email", "email_verified", "exp", "iat", "is_private_email", "iss", "nonce",
                                 "nonce_supported", "real_user_status", "sub", "transfer_sub"],
        })

    # -- test helpers (not Apple API, not counted) --

    def control_params(self):
        """Query plus form body, for the /_ helpers."""
        pairs = list(self.query)
        try:
            pairs += self.form_params() or []
        except BadRequest:
            pass
        return self.single_values(pairs)[0]

    def handle_native(self):
        params = self.control_params()
        client_id = params.get("client_id", BUNDLE_IDS[0])
        if client_id not in BUNDLE_IDS:
            return self.send_json(400, {"error": "client_id must be one of %s" % ", ".join(BUNDLE_IDS)})
        nonce = params.get("nonce")
        auth_time = int(time.time())
        code = self.state.new_code(client_id, None, nonce, "", auth_time)
        claims = self.state.identity_claims(client_id, auth_time, nonce, True, c_hash=left_hash(code))
        result = {"identity_token": self.state.make_jws(claims), "authorization_code": code}
        if params.get("first") in ("1", "true"):
            result["user"] = first_login_user_json()
        return self.send_json(200, result, NO_STORE)

    def handle_sign(self):
        try:
            request = self.json_body()
        except BadRequest as error:
            return self.send_json(400, {"error": str(error)})
        claims = request.get("claims", {})
        header_overrides = request.get("header") or {}
        which = request.get("key", "current")
        template = request.get("template")
        if not isinstance(claims, dict) or not isinstance(header_overrides, dict):
            return self.send_json(400, {"error": "claims and header must be JSON objects"})
        if which not in ("current", "old", "none"):
            return self.send_json(400, {"error": "key must be current, old or none"})
        if template not in (None, "id_token"):
            return self.send_json(400, {"error": "template must be id_token or absent"})
        if template == "id_token":
            base = self.state.identity_claims(BUNDLE_IDS[0], int(time.time()))
            base.update(claims)
            claims = base
        claims = {name: value for name, value in claims.items() if value is not None}
        key = None
        if which == "none":
            header = {"alg": "none"}
        else:
            key = self.state.signing_key(which)
            header = {"kid": key.kid, "alg": "RS256"}
        header.update(header_overrides)
        header = {name: value for name, value in header.items() if value is not None}
        return self.send(200, compact_jws(header, claims, key, ensure_ascii=False).encode("ascii"), "application/jwt")

    def handle_rotate(self):
        publish = self.control_params().get("publish", "now")
        if publish not in ("now", "later", "both"):
            return self.send_json(400, {"error": "publish must be now, later or both"})
        with self.state.lock:
            old = self.state.current_key
            self.state.current_key = 1 - old
            if publish == "now":
                self.state.published = [self.state.current_key]
                self.state.pending_publish = False
            elif publish == "both":
                self.state.published = [old, self.state.current_key]
                self.state.pending_publish = False
            else:
                self.state.pending_publish = True
        return self.send_json(200, self.state.key_state())

    def handle_publish(self):
        with self.state.lock:
            self.state.published = [self.state.current_key]
            self.state.pending_publish = False
        return self.send_json(200, self.state.key_state())

    def set_failures(self, attribute):
        """/_fail_*?count=n: the next n uses of something answer 503."""
        count = self.control_params().get("count", "1")
        if not count.isdigit():
            return self.send_json(400, {"error": "count must be a non-negative integer"})
        with self.state.lock:
            setattr(self.state, attribute, int(count))
        return self.send_json(200, {attribute: int(count)})

    def handle_fail_keys(self):
        return self.set_failures("failing_key_fetches")

    def handle_notify(self):
        try:
            request = self.json_body()
        except BadRequest as error:
            return self.send_json(400, {"error": str(error)})
        url, aud, kind, sub = (request.get(name) for name in ("url", "aud", "type", "sub"))
        email = request.get("email")
        if not all(isinstance(value, str) and value for value in (url, aud, kind, sub)):
            return self.send_json(400, {"error": "url, aud, type and sub are required strings"})
        if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            return self.send_json(400, {"error": "url must be http or https"})
        now = time.time()
        event = {"type": kind, "sub": sub}
        if kind.startswith("email-"):
            event["email"] = email if isinstance(email, str) and email else USER_EMAIL
            event["is_private_email"] = "true"
        event["event_time"] = int(now * 1000)
        jti = secrets.token_urlsafe(16)
        iat = int(now)
        claims = {"iss": self.state.issuer, "aud": aud, "exp": iat + NOTIFICATION_LIFETIME, "iat": iat, "jti": jti,
                  "events": json.dumps(event, separators=(",", ":"))}
        payload = self.state.make_jws(claims)
        outgoing = urllib.request.Request(url, data=json_bytes({"payload": payload}, ensure_ascii=False), method="POST",
                                          headers={"Content-Type": "application/json"})
        try:
            with OPENER.open(outgoing, timeout=15) as reply:
                reply.read()
                status = reply.status
        except urllib.error.HTTPError as error:
            error.read()
            status = error.code
        except (urllib.error.URLError, OSError) as error:
            return self.send_json(502, {"error": "could not POST to %s: %s" % (url, error), "jti": jti,
                                        "payload": payload})
        return self.send_json(200, {"status": status, "jti": jti, "payload": payload})

    # The app backend's side of notifications: a webhook that Gatehouse forwards events to,
    # able to fail on demand so that retries can be observed.
    def handle_webhook(self):
        try:
            event = self.json_body()
        except BadRequest as error:
            return self.send_json(400, {"error": str(error)})
        with self.state.lock:
            self.state.stats["webhook_attempts"] += 1
            if self.state.failing_webhooks > 0:
                self.state.failing_webhooks -= 1
                failing = True
            else:
                self.state.webhooks.append(event)
                failing = False
        if failing:
            return self.send_json(503, {"error": "temporarily unavailable"})
        return self.send_json(200, {"received": True})

    def handle_webhooks(self):
        with self.state.lock:
            received = list(self.state.webhooks)
        return self.send_json(200, {"received": received}, NO_STORE)

    def handle_fail_webhook(self):
        return self.set_failures("failing_webhooks")

    def handle_stats(self):
        with self.state.lock:
            stats = dict(self.state.stats)
            stats["refresh_calls"] = dict(self.state.refresh_calls)
            stats["last_invalid_client"] = self.state.last_invalid_client
        return self.send_json(200, stats, NO_STORE)

    def handle_reset(self):
        self.state.reset()
        return self.send_json(200, {"reset": True})


def make_server(host, port, verbose=False):
    server = make_mock_server(host, port, AppleHandler, AppleState(host), verbose)
    server.quiet = False   # True: no invalid_client reasons on stderr (the selftest provokes dozens)
    return server


# --- Self-test: an independent little client ---------------------------------------------


def client_der_to_raw(der):
    """ECDSA-Sig-Value DER (SEQUENCE { INTEGER r, INTEGER s }) to JWS R||S, 32 bytes each."""
    def read_length(data, at):
        first = data[at]
        if first < 0x80:
            return first, at + 1
        count = first & 0x7F
        return int.from_bytes(data[at + 1:at + 1 + count], "big"), at + 1 + count

    if der[0] != 0x30:
        raise ValueError("not a SEQUENCE")
    length, at = read_length(der, 1)
    if at + length != len(der):
        raise ValueError("trailing bytes after the SEQUENCE")
    halves = []
    for _ in range(2):
        if der[at] != 0x02:
            raise ValueError("not an INTEGER")
        length, at = read_length(der, at + 1)
        value = int.from_bytes(der[at:at + length], "big")
        at += length
        halves.append(value.to_bytes(32, "big"))
    if at != len(der):
        raise ValueError("trailing bytes after s")
    return halves[0] + halves[1]


class ClientSecretMinter:
    """Mints client_secret JWTs with the openssl CLI, apart from the server's own code."""

    def __init__(self, pem=CLIENT_KEY_PEM, team_id=TEAM_ID, key_id=KEY_ID):
        self.team_id, self.key_id = team_id, key_id
        handle, self.path = tempfile.mkstemp(suffix=".p8")
        with os.fdopen(handle, "w") as key_file:
            key_file.write(pem)

    def close(self):
        os.unlink(self.path)

    def der_signature(self, signing_input):
        return subprocess.run(["openssl", "dgst", "-sha256", "-sign", self.path], input=signing_input,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True).stdout

    def mint(self, client_id, audience, header=None, claims=None, der=False, flip=False):
        now = int(time.time())
        full_header = {"alg": "ES256", "kid": self.key_id}
        full_header.update(header or {})
        full_claims = {"iss": self.team_id, "iat": now, "exp": now + 3600, "aud": audience, "sub": client_id}
        full_claims.update(claims or {})
        full_header = {k: v for k, v in full_header.items() if v is not None}
        full_claims = {k: v for k, v in full_claims.items() if v is not None}
        signing_input = (client_b64(json.dumps(full_header).encode()) + "."
                         + client_b64(json.dumps(full_claims).encode()))
        der_signature = self.der_signature(signing_input.encode())
        signature = der_signature if der else client_der_to_raw(der_signature)
        if flip:
            signature = signature[:-1] + bytes([signature[-1] ^ 1])
        return signing_input + "." + client_b64(signature)


def client_verify_jws(token, jwks):
    """(header, claims) if `token` is RS256 and verifies with the JWKS key of its kid, else None."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    header = json.loads(client_unb64(parts[0]))
    if header.get("alg") != "RS256":
        return None
    matches = [key for key in jwks["keys"] if key.get("kid") == header.get("kid")]
    if len(matches) != 1 or matches[0]["kty"] != "RSA":
        return None
    n = int.from_bytes(client_unb64(matches[0]["n"]), "big")
    e = int.from_bytes(client_unb64(matches[0]["e"]), "big")
    if not client_rs256_verify((parts[0] + "." + parts[1]).encode(), client_unb64(parts[2]), n, e):
        return None
    return header, json.loads(client_unb64(parts[1]))


def client_half_hash(value):
    return client_b64(hashlib.sha256(value.encode()).digest()[:16])


class FormParser(html.parser.HTMLParser):
    """Collects <form action> and hidden inputs the way a browser would submit them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.action = None
        self.method = None
        self.fields = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        if tag == "form":
            self.action = attributes.get("action")
            self.method = attributes.get("method")
        elif tag == "input" and attributes.get("name"):
            self.fields.append((attributes["name"], attributes.get("value") or ""))

    handle_startendtag = handle_starttag


def parse_form_post(page):
    parser = FormParser()
    parser.feed(page)
    parser.close()
    return parser


class Receiver:
    """A stand-in for the gateway's notification endpoint, recording what it is sent."""

    def __init__(self):
        self.received = []
        self.status = 200
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                receiver.received.append((self.path, self.headers.get("Content-Type"), body))
                self.send_response(receiver.status)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self.thread.start()
        self.url = "http://127.0.0.1:%d/apple/notifications" % self.server.server_address[1]

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class SelfTest(SelfTestBase):
    REDIRECT = 'https://rp.example.org/cb?x=1&y="<>'

    # -- helpers --

    def jwks(self):
        return http("GET", self.base + "/auth/keys").json()

    def secret(self, client_id, **options):
        return self.minter.mint(client_id, self.base, **options)

    def token(self, form):
        return http("POST", self.base + "/auth/token", form=form)

    def authorize(self, scope="name email", response_type="code id_token", nonce="n-0S6_WzA2Mj",
                  state='st a&b=c/é"<>', response_mode="form_post", client_id=SERVICES_ID):
        params = {"client_id": client_id, "redirect_uri": self.REDIRECT, "response_type": response_type,
                  "scope": scope, "state": state}
        if response_mode is not None:
            params["response_mode"] = response_mode
        if nonce is not None:
            params["nonce"] = nonce
        return http("GET", self.base + "/auth/authorize?" + urllib.parse.urlencode(params))

    def web_code(self, scope="name email", nonce="n-0S6_WzA2Mj"):
        page = self.authorize(scope=scope, nonce=nonce)
        return dict(parse_form_post(page.text).fields)["code"]

    def native(self, client_id="com.example.app", nonce=None, first=False):
        query = {"client_id": client_id}
        if nonce is not None:
            query["nonce"] = nonce
        if first:
            query["first"] = "1"
        return http("POST", self.base + "/_native?" + urllib.parse.urlencode(query))

    def expect_invalid_client(self, name, reply):
        return self.check(name, reply.status == 400 and reply.body == b'{"error":"invalid_client"}'
                          and reply.headers.get("Cache-Control") == "no-store", (reply.status, reply.body))

    # -- known answers --

    def known_answers(self):
        self.check("P-256 generator is on the curve", p256_on_curve(P256_G))
        self.check("n * G is the point at infinity", p256_multiply(P256_N, P256_G) is None)
        d = int.from_bytes(client_unb64("jpsQnnGQmL-YBIffH1136cspYG6-0iY7X1fCE9-E9LI"), "big")
        self.check("RFC 7515 A.3: d * G equals the trusted (x, y)", p256_multiply(d, P256_G) == (CLIENT_KEY_X, CLIENT_KEY_Y))
        signing_input = (b"eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxl"
                         b"LmNvbS9pc19yb290Ijp0cnVlfQ")
        signature = client_unb64("DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q")
        key = (CLIENT_KEY_X, CLIENT_KEY_Y)
        self.check("RFC 7515 A.3 ES256 signature verifies", es256_verify(signing_input, signature, key))
        self.check("A.3 with one flipped bit fails", not es256_verify(signing_input, signature[:-1] + bytes([signature[-1] ^ 1]), key))
        self.check("A.3 over other data fails", not es256_verify(signing_input + b"x", signature, key))
        self.check("r = 0 / s = n rejected", not es256_verify(signing_input, bytes(32) + signature[32:], key)
                   and not es256_verify(signing_input, signature[:32] + P256_N.to_bytes(32, "big"), key))
        der = self.minter.der_signature(signing_input)
        self.check("openssl signature verifies once converted DER -> raw",
                   es256_verify(signing_input, client_der_to_raw(der), key))
        self.check("the same signature as DER fails", not es256_verify(signing_input, der, key), len(der))
        # OpenID Connect Core 1.0 appendix A.4 (response_type "code id_token").
        self.check("c_hash known answer (OIDC Core A.4)",
                   left_hash("Qcb0Orv1zh30vL1MPRsbm-diHiMwcLyZvn1arpZv-Jxf_11jnpEX3Tgfvk") == "LDktKdoQak3Pk0cnXxCltA")
        self.check("at_hash known answer (OIDC Core A.3)",
                   left_hash("jHkWEdUXMU1BwAsC4vtUsZwnNvTIxEl0z9K3vx5KF0Y") == "77QmUPtjPfzWtF2AnpK9RQ")
        for key in RSA_KEYS:
            self.check("RSA key %s is 2048 bits and consistent" % key.kid, key.n.bit_length() == 2048
                       and pow(pow(0x1234567, RSA_E, key.n), key.d, key.n) == 0x1234567)

    # -- web flow --

    def web(self):
        base = self.base
        jwks = self.jwks()
        self.check("JWKS has the current key with Apple's members",
                   [list(key) for key in jwks["keys"]] == [["kty", "kid", "use", "alg", "n", "e"]]
                   and jwks["keys"][0]["kid"] == "mockApple1" and jwks["keys"][0]["e"] == "AQAB", jwks)

        page = self.authorize()
        form = parse_form_post(page.text)
        fields = dict(form.fields)
        self.check("authorize answers 200 HTML form_post", page.status == 200
                   and page.headers.get("Content-Type", "").startswith("text/html")
                   and form.method == "post" and form.action == self.REDIRECT, (page.status, form.action))
        self.check("form fields code, id_token, state, user", [name for name, _ in form.fields]
                   == ["code", "id_token", "state", "user"], form.fields)
        self.check("state echoed exactly", fields.get("state") == 'st a&b=c/é"<>', fields.get("state"))
        self.check("first consent sends the user JSON string",
                   fields.get("user") == '{"name":{"firstName":"Ada","lastName":"Lovelace"},'
                                         '"email":"ada@privaterelay.appleid.com"}', fields.get("user"))
        verified = client_verify_jws(fields.get("id_token", ""), jwks)
        self.check("authorize id_token verifies", verified is not None)
        claims = verified[1] if verified else {}
        self.check("authorize id_token claims", claims.get("aud") == SERVICES_ID and claims.get("iss") == base
                   and claims.get("c_hash") == client_half_hash(fields["code"]) and claims.get("nonce") == "n-0S6_WzA2Mj"
                   and claims.get("sub") == USER_SUB, claims)
        code = fields["code"]

        again = dict(parse_form_post(self.authorize().text).fields)
        self.check("second consent has no user field", "user" not in again and "code" in again, list(again))

        bad = self.authorize(client_id="com.example.app")
        self.check("unknown client_id -> 400 page", bad.status == 400 and "invalid_client" in bad.text, bad.status)
        no_mode = self.authorize(response_mode=None, response_type="code")
        self.check("name/email scope without form_post -> 400 with Apple's text",
                   no_mode.status == 400 and FORM_POST_REQUIRED in no_mode.text and "Location" not in no_mode.headers,
                   no_mode.text)
        query = self.authorize(scope="", response_mode=None, response_type="code", state="s1")
        location = query.headers.get("Location", "")
        self.check("no scope: 302 with code and state in the query", query.status == 302
                   and location.startswith(self.REDIRECT + "&code=c") and location.endswith("&state=s1"), location)
        denied = dict(parse_form_post(self.authorize(scope="name email deny").text).fields)
        self.check("deny -> error=user_cancelled_authorize&state", denied == {
            "error": "user_cancelled_authorize", "state": 'st a&b=c/é"<>'}, denied)

        secret = self.secret(SERVICES_ID)
        form = [("client_id", SERVICES_ID), ("client_secret", secret), ("code", code),
                ("grant_type", "authorization_code"), ("redirect_uri", self.REDIRECT)]
        reply = self.token(form)
        body = reply.json() if reply.status == 200 else {}
        self.check("web code exchange 200", reply.status == 200 and reply.headers.get("Cache-Control") == "no-store",
                   (reply.status, reply.body))
        self.check("token response members", list(body) == ["access_token", "token_type", "expires_in",
                                                            "refresh_token", "id_token"]
                   and body["token_type"] == "Bearer" and body["expires_in"] == 3600, body)
        verified = client_verify_jws(body.get("id_token", ""), jwks)
        self.check("token id_token verifies", verified is not None)
        header, claims = verified if verified else ({}, {})
        self.check("token id_token header", header == {"kid": "mockApple1", "alg": "RS256"}, header)
        now = time.time()
        self.check("token id_token claims", claims.get("iss") == base and claims.get("aud") == SERVICES_ID
                   and claims.get("sub") == USER_SUB and claims.get("exp") - claims.get("iat") == 86400
                   and abs(claims.get("iat") - now) < 60 and claims.get("at_hash") == client_half_hash(body["access_token"])
                   and claims.get("email") == USER_EMAIL and claims.get("email_verified") == "true"
                   and claims.get("is_private_email") == "true" and claims.get("nonce_supported") is True
                   and claims.get("nonce") == "n-0S6_WzA2Mj" and claims.get("real_user_status") == 2
                   and isinstance(claims.get("auth_time"), int), claims)
        self.web_refresh = body.get("refresh_token")

        reuse = self.token(form)
        self.check("code reuse -> invalid_grant 'The code has already been used.'", reuse.status == 400
                   and reuse.json() == {"error": "invalid_grant", "error_description": "The code has already been used."},
                   reuse.body)

        code = self.web_code()
        mismatch = self.token([("client_id", "com.example.app"), ("client_secret", self.secret("com.example.app")),
                               ("code", code), ("grant_type", "authorization_code"), ("redirect_uri", self.REDIRECT)])
        self.check("web code with a bundle id -> client_id mismatch", mismatch.status == 400 and mismatch.json() == {
            "error": "invalid_grant",
            "error_description": "client_id mismatch. The code was not issued to com.example.app."}, mismatch.body)
        missing_redirect = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("code", code),
                                       ("grant_type", "authorization_code")])
        self.expect_invalid_client("web code without redirect_uri -> invalid_client", missing_redirect)
        fine = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("code", code),
                           ("grant_type", "authorization_code"), ("redirect_uri", self.REDIRECT)])
        self.check("failed exchanges do not use the code up", fine.status == 200, fine.body)

        unknown = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("code", "cnope"),
                              ("grant_type", "authorization_code"), ("redirect_uri", self.REDIRECT)])
        self.check("unknown code -> invalid_grant", unknown.status == 400 and unknown.json()["error"] == "invalid_grant")
        grant = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("grant_type", "password")])
        self.check("other grant types -> unsupported_grant_type", grant.status == 400
                   and grant.json() == {"error": "unsupported_grant_type"}, grant.body)
        basic = http("POST", base + "/auth/token", form=[("client_id", SERVICES_ID), ("code", code),
                                                         ("grant_type", "authorization_code")],
                     headers={"Authorization": "Basic " + base64.b64encode(("%s:%s" % (SERVICES_ID, secret)).encode()).decode()})
        self.expect_invalid_client("HTTP Basic client auth -> invalid_client", basic)

        plain = self.web_code(scope="name", nonce=None)
        reply = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("code", plain),
                            ("grant_type", "authorization_code"), ("redirect_uri", self.REDIRECT)])
        verified = client_verify_jws(reply.json().get("id_token", ""), jwks) if reply.status == 200 else None
        claims = verified[1] if verified else {}
        self.check("no email scope, no nonce: id_token without email and nonce", verified is not None
                   and "email" not in claims and "nonce" not in claims and claims.get("nonce_supported") is True, claims)

    # -- native flow --

    def native_flow(self):
        jwks = self.jwks()
        reply = self.native(nonce="b1d2e3", first=True)
        body = reply.json()
        self.check("/_native members", reply.status == 200
                   and list(body) == ["identity_token", "authorization_code", "user"], body)
        self.check("/_native user is the first-login JSON string", body.get("user")
                   == '{"name":{"firstName":"Ada","lastName":"Lovelace"},"email":"ada@privaterelay.appleid.com"}')
        verified = client_verify_jws(body["identity_token"], jwks)
        claims = verified[1] if verified else {}
        self.check("identity token verifies with claims", verified is not None and claims.get("aud") == "com.example.app"
                   and claims.get("c_hash") == client_half_hash(body["authorization_code"])
                   and claims.get("nonce") == "b1d2e3" and claims.get("email_verified") == "true"
                   and claims.get("is_private_email") == "true" and claims.get("real_user_status") == 2
                   and claims.get("sub") == USER_SUB and claims.get("iss") == self.base, claims)
        later = self.native().json()
        self.check("no first=1 -> no user", "user" not in later, later)

        secret = self.secret("com.example.app")
        reply = self.token([("client_id", "com.example.app"), ("client_secret", secret),
                            ("code", body["authorization_code"]), ("grant_type", "authorization_code")])
        tokens = reply.json()
        verified = client_verify_jws(tokens.get("id_token", ""), jwks)
        claims = verified[1] if verified else {}
        self.check("native code exchange without redirect_uri", reply.status == 200 and "refresh_token" in tokens
                   and claims.get("aud") == "com.example.app" and claims.get("nonce") == "b1d2e3"
                   and claims.get("at_hash") == client_half_hash(tokens["access_token"]), (reply.body, claims))

        with_redirect = self.token([("client_id", "com.example.app"), ("client_secret", secret),
                                    ("code", later["authorization_code"]), ("grant_type", "authorization_code"),
                                    ("redirect_uri", self.REDIRECT)])
        self.expect_invalid_client("native code with redirect_uri -> invalid_client", with_redirect)
        web_id = self.token([("client_id", SERVICES_ID), ("client_secret", self.secret(SERVICES_ID)),
                             ("code", later["authorization_code"]), ("grant_type", "authorization_code")])
        self.check("native code with the Services ID -> client_id mismatch", web_id.status == 400 and web_id.json() == {
            "error": "invalid_grant",
            "error_description": "client_id mismatch. The code was not issued to com.example.web."}, web_id.body)
        watch = self.native(client_id="com.example.watch").json()
        reply = self.token([("client_id", "com.example.watch"), ("client_secret", self.secret("com.example.watch")),
                            ("code", watch["authorization_code"]), ("grant_type", "authorization_code")])
        self.check("second bundle id works", reply.status == 200, reply.body)
        other = self.native(client_id=SERVICES_ID)
        self.check("/_native refuses the Services ID", other.status == 400)

    # -- refresh and revoke --

    def refresh_revoke(self):
        jwks = self.jwks()
        secret = self.secret(SERVICES_ID)
        refresh = self.web_refresh
        for attempt in (1, 2):
            reply = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("grant_type", "refresh_token"),
                                ("refresh_token", refresh)])
            body = reply.json()
            verified = client_verify_jws(body.get("id_token", ""), jwks)
            claims = verified[1] if verified else {}
            self.check("refresh %d: access_token + id_token, no refresh_token" % attempt, reply.status == 200
                       and list(body) == ["access_token", "token_type", "expires_in", "id_token"]
                       and reply.headers.get("Cache-Control") == "no-store"
                       and claims.get("at_hash") == client_half_hash(body["access_token"]) and "nonce" not in claims,
                       (reply.body, claims))
        stats = http("GET", self.base + "/_stats").json()
        self.check("refresh calls counted per token", stats["refresh_calls"].get(refresh) == 2, stats["refresh_calls"])

        junk = http("POST", self.base + "/auth/revoke", form=[("client_id", SERVICES_ID), ("client_secret", secret),
                                                               ("token", "junk"), ("token_type_hint", "refresh_token")])
        self.check("revoke junk -> 200 empty", junk.status == 200 and junk.body == b"", junk.body)
        bad = http("POST", self.base + "/auth/revoke", form=[("client_id", SERVICES_ID), ("client_secret", "x.y.z"),
                                                              ("token", refresh)])
        self.expect_invalid_client("revoke with a bad client_secret -> invalid_client", bad)
        done = http("POST", self.base + "/auth/revoke", form=[("client_id", SERVICES_ID), ("client_secret", secret),
                                                               ("token", refresh), ("token_type_hint", "refresh_token")])
        self.check("revoke a refresh token -> 200", done.status == 200 and done.body == b"")
        after = self.token([("client_id", SERVICES_ID), ("client_secret", secret), ("grant_type", "refresh_token"),
                            ("refresh_token", refresh)])
        self.check("revoked refresh token -> invalid_grant", after.status == 400
                   and after.json()["error"] == "invalid_grant", after.body)
        twice = http("POST", self.base + "/auth/revoke", form=[("client_id", SERVICES_ID), ("client_secret", secret),
                                                                ("token", refresh)])
        self.check("revoking again -> 200", twice.status == 200)
        fields = dict(parse_form_post(self.authorize().text).fields)
        self.check("after a revoke the next consent sends user again", "user" in fields, list(fields))
        self.second_team()

    def second_team(self):
        """Another developer's ids take its own key, and never this team's tokens."""
        minter = ClientSecretMinter(SECOND_CLIENT_KEY_PEM, SECOND_TEAM_ID, SECOND_KEY_ID)
        try:
            secret = minter.mint("com.second.web", self.base)
        finally:
            minter.close()
        refresh = self.token([("client_id", SERVICES_ID), ("client_secret", self.secret(SERVICES_ID)),
                              ("code", self.web_code()), ("grant_type", "authorization_code"),
                              ("redirect_uri", self.REDIRECT)]).json()["refresh_token"]
        foreign = self.token([("client_id", "com.second.web"), ("client_secret", secret),
                              ("grant_type", "refresh_token"), ("refresh_token", refresh)])
        self.check("another team's client with its own key: this team's refresh token -> invalid_grant",
                   foreign.status == 400 and foreign.json() == {
                       "error": "invalid_grant",
                       "error_description": "client_id mismatch. The token was not issued to com.second.web."},
                   foreign.body)
        mixed = self.token([("client_id", "com.second.web"), ("client_secret", self.secret("com.second.web")),
                            ("grant_type", "refresh_token"), ("refresh_token", refresh)])
        self.expect_invalid_client("another team's client with this team's key -> invalid_client", mixed)

    # -- client_secret rules --

    def client_secrets(self):
        code = self.web_code()
        before = http("GET", self.base + "/_stats").json()["invalid_client"]

        def attempt(secret, client_id=SERVICES_ID):
            return self.token([("client_id", client_id), ("client_secret", secret), ("code", code),
                               ("grant_type", "authorization_code"), ("redirect_uri", self.REDIRECT)])

        now = int(time.time())
        cases = [
            ("DER-encoded signature", self.secret(SERVICES_ID, der=True)),
            ("flipped signature bit", self.secret(SERVICES_ID, flip=True)),
            ("alg HS256", self.secret(SERVICES_ID, header={"alg": "HS256"})),
            ("wrong kid", self.secret(SERVICES_ID, header={"kid": "KEY0000000"})),
            ("no kid", self.secret(SERVICES_ID, header={"kid": None})),
            ("wrong iss", self.secret(SERVICES_ID, claims={"iss": "TEAM000000"})),
            ("aud https://appleid.apple.com", self.secret(SERVICES_ID, claims={"aud": "https://appleid.apple.com"})),
            ("sub is another client", self.secret("com.example.app")),
            ("expired", self.secret(SERVICES_ID, claims={"iat": now - 7200, "exp": now - 1})),
            ("exp - iat over six months", self.secret(SERVICES_ID, claims={"exp": now + 15777001})),
            ("iat 5 minutes ahead", self.secret(SERVICES_ID, claims={"iat": now + 300})),
            ("no exp", self.secret(SERVICES_ID, claims={"exp": None})),
            ("two segments", self.secret(SERVICES_ID).rsplit(".", 1)[0]),
            ("alg none", client_b64(b'{"alg":"none","kid":"KEY1234567"}') + "."
             + self.secret(SERVICES_ID).split(".")[1] + "."),
        ]
        for name, secret in cases:
            self.expect_invalid_client("client_secret %s -> invalid_client" % name, attempt(secret))
        self.expect_invalid_client("unknown client_id -> invalid_client", attempt(self.secret("com.other"), "com.other"))
        after = http("GET", self.base + "/_stats").json()
        self.check("invalid_client counted", after["invalid_client"] - before == len(cases) + 1,
                   (before, after["invalid_client"]))
        self.check("last_invalid_client says why", "client_id" in after["last_invalid_client"], after["last_invalid_client"])
        edge = self.secret(SERVICES_ID, claims={"iat": now + 30, "exp": now + 30 + 15777000})
        self.check("iat 30 s ahead and exactly six months is accepted", attempt(edge).status == 200)

    # -- keys --

    def rotation(self):
        base = self.base
        start = http("GET", base + "/_stats").json()["keys"]
        self.check("one key published at start", [k["kid"] for k in self.jwks()["keys"]] == ["mockApple1"])
        old_token = self.native().json()["identity_token"]
        state = http("POST", base + "/_rotate?publish=later").json()
        self.check("rotate later: signs with the new key at once", state == {
            "current": "mockApple2", "published": ["mockApple1"], "pending_publish": True}, state)
        token = self.native().json()["identity_token"]
        header = json.loads(client_unb64(token.split(".")[0]))
        jwks = self.jwks()
        self.check("new kid in tokens, old set still served", header["kid"] == "mockApple2"
                   and [k["kid"] for k in jwks["keys"]] == ["mockApple1"])
        self.check("so the token does not verify yet", client_verify_jws(token, jwks) is None)
        http("POST", base + "/_publish")
        jwks = self.jwks()
        self.check("after /_publish only the new key is served", [k["kid"] for k in jwks["keys"]] == ["mockApple2"])
        self.check("and the token verifies", client_verify_jws(token, jwks) is not None)
        self.check("tokens from the old key no longer verify", client_verify_jws(old_token, jwks) is None)
        state = http("POST", base + "/_rotate?publish=both").json()
        jwks = self.jwks()
        self.check("rotate both: old key first, new key second", state["current"] == "mockApple1"
                   and [k["kid"] for k in jwks["keys"]] == ["mockApple2", "mockApple1"], jwks)
        token = self.native().json()["identity_token"]
        self.check("kid lookup (not keys[0]) verifies", client_verify_jws(token, jwks) is not None)
        state = http("POST", base + "/_rotate").json()
        self.check("rotate (publish=now): only the new key at once", state == {
            "current": "mockApple2", "published": ["mockApple2"], "pending_publish": False}, state)
        http("POST", base + "/_fail_keys?count=1")
        failed = http("GET", base + "/auth/keys")
        recovered = http("GET", base + "/auth/keys")
        self.check("/_fail_keys: next fetch 503, then 200", failed.status == 503 and recovered.status == 200)
        self.check("/auth/keys fetches counted", http("GET", base + "/_stats").json()["keys"] - start == 6)

    # -- /_sign and /_notify --

    def helpers(self):
        base = self.base
        jwks = self.jwks()
        current = jwks["keys"][0]["kid"]
        reply = http("POST", base + "/_sign", json_body={"claims": {"z": 1, "a": "x", "exp": 1}, "header": {"typ": "JWT"}})
        token = reply.text
        verified = client_verify_jws(token, jwks)
        self.check("/_sign current key, claims order kept, header override", reply.status == 200
                   and reply.headers.get("Content-Type") == "application/jwt" and verified is not None
                   and list(verified[1]) == ["z", "a", "exp"] and verified[0] == {"kid": current, "alg": "RS256", "typ": "JWT"},
                   (reply.status, token))
        old = http("POST", base + "/_sign", json_body={"claims": {"a": 1}, "key": "old", "header": {"kid": None}}).text
        old_header = json.loads(client_unb64(old.split(".")[0]))
        self.check("/_sign old key, kid removed by null", old_header == {"alg": "RS256"})
        n = int.from_bytes(client_unb64(RSA_KEYS[0].jwk()["n"]), "big") if current != "mockApple1" else \
            int.from_bytes(client_unb64(RSA_KEYS[1].jwk()["n"]), "big")
        parts = old.split(".")
        self.check("/_sign old key signature is by the other key",
                   client_rs256_verify((parts[0] + "." + parts[1]).encode(), client_unb64(parts[2]), n, 65537))
        none = http("POST", base + "/_sign", json_body={"claims": {"a": 1}, "key": "none"}).text
        self.check("/_sign key none -> alg none, empty signature", none.endswith(".")
                   and json.loads(client_unb64(none.split(".")[0])) == {"alg": "none"}, none)
        templated = http("POST", base + "/_sign", json_body={"template": "id_token",
                                                             "claims": {"aud": "com.other", "email": None}}).text
        claims = client_verify_jws(templated, jwks)[1]
        self.check("/_sign template id_token with overrides", claims.get("aud") == "com.other" and "email" not in claims
                   and claims.get("iss") == base and claims.get("sub") == USER_SUB, claims)

        receiver = Receiver()
        try:
            reply = http("POST", base + "/_notify", json_body={"url": receiver.url, "aud": "com.example.app",
                                                               "type": "consent-revoked", "sub": USER_SUB})
            result = reply.json()
            self.check("/_notify returns the gateway status and jti", reply.status == 200 and result["status"] == 200
                       and result["jti"], result)
            path, content_type, body = receiver.received[-1]
            payload = json.loads(body)["payload"]
            verified = client_verify_jws(payload, jwks)
            claims = verified[1] if verified else {}
            self.check("notification POST is JSON {payload}", path == "/apple/notifications"
                       and content_type == "application/json" and list(json.loads(body)) == ["payload"])
            self.check("notification JWS verifies, claims in Apple's order", verified is not None
                       and verified[0] == {"kid": current, "alg": "RS256"}
                       and list(claims) == ["iss", "aud", "exp", "iat", "jti", "events"]
                       and claims["exp"] - claims["iat"] == 86400 and claims["jti"] == result["jti"]
                       and claims["aud"] == "com.example.app" and claims["iss"] == base, claims)
            events = json.loads(claims.get("events", "{}")) if isinstance(claims.get("events"), str) else None
            self.check("events is a JSON string with type, sub, event_time in ms", events is not None
                       and list(events) == ["type", "sub", "event_time"] and events["type"] == "consent-revoked"
                       and events["sub"] == USER_SUB and abs(events["event_time"] - claims["iat"] * 1000) < 2000, events)
            receiver.status = 202
            result = http("POST", base + "/_notify", json_body={"url": receiver.url, "aud": "com.example.app",
                                                                "type": "email-disabled", "sub": USER_SUB}).json()
            claims = client_verify_jws(json.loads(receiver.received[-1][2])["payload"], jwks)[1]
            events = json.loads(claims["events"])
            self.check("email event: email + is_private_email, status passed through", result["status"] == 202
                       and events == {"type": "email-disabled", "sub": USER_SUB, "email": USER_EMAIL,
                                      "is_private_email": "true", "event_time": events["event_time"]}
                       and list(events) == ["type", "sub", "email", "is_private_email", "event_time"], events)
            gone = http("POST", base + "/_notify", json_body={"url": "http://127.0.0.1:9/x", "aud": "a",
                                                              "type": "account-delete", "sub": "s"})
            self.check("/_notify to a dead URL -> 502", gone.status == 502)
        finally:
            receiver.close()

    def stats_reset(self):
        stats = http("GET", self.base + "/_stats").json()
        self.check("stats counters", stats["authorize"] >= 10 and stats["token_code"] >= 20
                   and stats["token_refresh"] == 5 and stats["revoke"] == 4 and stats["keys"] >= 10, stats)
        http("POST", self.base + "/_reset")
        zero = http("GET", self.base + "/_stats").json()
        self.check("reset zeroes stats and restores the key", all(zero[key] == 0 for key in STAT_KEYS)
                   and zero["refresh_calls"] == {} and [k["kid"] for k in self.jwks()["keys"]] == ["mockApple1"], zero)

    def subprocess_protocol(self):
        self.child_protocol(__file__, "/auth/keys", ("SIGTERM", "stdin EOF"))

    def run(self):
        server = make_server("127.0.0.1", 0)
        server.quiet = True
        self.base = server.state.base_url
        self.minter = ClientSecretMinter()
        self.web_refresh = ""
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        thread.start()
        try:
            self.section("known answers", self.known_answers)
            self.section("web flow", self.web)
            self.section("native flow", self.native_flow)
            self.section("refresh and revoke", self.refresh_revoke)
            self.section("client_secret", self.client_secrets)
            self.section("key rotation", self.rotation)
            self.section("sign and notify", self.helpers)
            self.section("stats", self.stats_reset)
            self.section("subprocess", self.subprocess_protocol)
        finally:
            server.shutdown()
            server.server_close()
            self.minter.close()
        print("%d passed, %d failed" % (self.passes, self.failures))
        return 0 if self.failures == 0 else 1


# --- Entry point ------------------------------------------------------------------------


def main(argv):
    args = parse_arguments(argv, "Mock of Sign in with Apple's server API for tests.")
    if args.selftest:
        return SelfTest().run()
    return serve(lambda: make_server(args.host, args.port, args.verbose), args.exit_on_stdin_eof)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
