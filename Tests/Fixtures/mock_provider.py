#!/usr/bin/env python3
"""Mock OAuth 2.0 / OpenID Connect and OAuth 1.0a provider for Gatehouse's integration tests.

Real providers are unreachable from test machines, so this one speaks their wire formats
on loopback instead: RFC 6749 (authorization code grant, refresh), RFC 7636 (PKCE),
RFC 7009 (revocation), OpenID Connect Core and Discovery (RS256 id_token, JWKS), and
RFC 5849 (OAuth 1.0a, HMAC-SHA1). Python 3 standard library only; all state is in memory.

    python3 mock_provider.py [--host 127.0.0.1] [--port 0] [--token-format json|form]
                             [--issuer-path ""] [--exit-on-stdin-eof] [--verbose]
    python3 mock_provider.py --selftest

The first and only stdout line is "PORT <n>"; the server then runs until SIGTERM or SIGINT
and exits 0. See README.md next to this file for the endpoints.
"""

import base64
import hashlib
import hmac
import html
import json
import os
import re
import secrets
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

# Explicitly, because -I and PYTHONSAFEPATH leave the script's directory off sys.path.
sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from mock_common import (  # noqa: E402
    NO_STORE, RSA_E, BadRequest, MockHandler, MockState, RsaKey, SelfTestBase, append_query, b64url,
    client_b64, client_rs256_verify, client_unb64, compact_jwe, compact_jws, http, json_bytes, make_mock_server, open_compact_jwe,
    parse_arguments, serve, speak_tls,
)

# --- Registered clients (test constants) -------------------------------------------------

OAUTH2_CLIENTS = {"client-1": "secret-1"}
OAUTH1_CONSUMERS = {"ck-1": "cs-1"}

OAUTH2_SUBJECT = "12345"
XIAOMI_PREFIX = b"&&&START&&&"   # what Xiaomi's token endpoint puts before its JSON
OAUTH2_PROFILE = {"id": 12345, "login": "octo", "name": "Octo Cat", "email": "octo@example.com"}
OAUTH1_ACCOUNT = {"id": 42, "screen_name": "octo", "name": "Octo One"}

CODE_LIFETIME = 600             # authorization codes: 10 minutes
ID_TOKEN_LIFETIME = 600
DEFAULT_ACCESS_TOKEN_LIFETIME = 3600
OAUTH1_TIMESTAMP_WINDOW = 600   # oauth_timestamp accepted within +-600 s
OAUTH1_REQUEST_TOKEN_LIFETIME = 600

# --- Fixed 2048-bit RSA test key (generated once with `openssl genrsa 2048`; test data) ---

RSA_KEY = RsaKey("mock-rsa-1", (
    "b915906b76c05407bf901d3c15fe27ffe72ff7b268a5126dd66828a2849da715",
    "4035ca5577af5e7ce8df825ec1fdf14d3d9d5c7c7c9a318d9ef86b537ac344a1",
    "4e9738e33453a77ed66da696e4b279f69373516ecd7b732f420c2eff25f083dd",
    "0333e8745a4418fb326c1c561c418bc7123aa219c146b0cc246f4606f3992676",
    "7311a89b018574b84eb842e53c9d0c065ddfaf393744cac3e0c8a9249f323007",
    "be976726495ffa6ad2c4a4c4070256b016652ffc9013dcaa71b4023def45b02b",
    "0645dba4c5d05f89cce3a769ed08ba2e2d0bb4a2620ca30feb351ffbde4cbdcc",
    "e4e21dd13feec09a0539b6a99fa16f00e145855b6f0447ed80213f62c29c1f17",
), (
    "6067730a0698b72c320386b6bd5ddcc7d64b8de147d07380f2a4de45887df581",
    "84288073741bcc4393a897e773742a33e95c05c871be7f011d4497e2ab96fa30",
    "6b1729726ed703ef7511382c7082e634212977c9170eae38775691442526da08",
    "4c9ac50195e2d280450b3ad73f7084b5f430c62e5415d610ff0956985859f545",
    "ea634dd6a0d5fa29870bff458d9ad3e3c27c399b74205b8b560323f14a4a9f61",
    "a51dcd626efe0709a836c20c881f5544b4e3762df91f8f26ef6093a936d5fa84",
    "b6ba1960e377fc6e02826d412773ba6b2ccb727eddebaff15f9b2c835f501b31",
    "0eb21ce9fd88b4489cebf57a1e4f87dd26a017407e18042fe1ba737d9b99cb1",
))

PKCE_VERIFIER = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")
# The kid of the encryption key the JWKS publishes with /_config?request_encryption=.
ENCRYPTION_KID = "mock-enc-1"
# What /_config?id_token_fault= may spoil in the next id_tokens, one fault at a time.
ID_TOKEN_FAULTS = ("", "signature", "audience", "expired", "nonce", "kid")
# A kid the JWKS never publishes, however often it is fetched.
UNKNOWN_KID = "mock-rsa-unknown"
# What /_config?token_fault= and ?user_fault= do to the token endpoint and the profile
# (/oauth2/user): answer 500 echoing what was sent, as some providers' error pages do, or
# hold every answer SLOW_SECONDS first.
ENDPOINT_FAULTS = ("", "500", "slow")
SLOW_SECONDS = 3


# --- Encoding helpers -------------------------------------------------------------------


def form_bytes(pairs):
    """application/x-www-form-urlencoded, spaces as '+', as providers' form bodies are."""
    return urllib.parse.urlencode(pairs).encode("ascii")


def make_jws(claims, kid=RSA_KEY.kid):
    return compact_jws({"alg": "RS256", "kid": kid, "typ": "JWT"}, claims, RSA_KEY)


def tampered(token):
    """The token with one bit of its signature flipped: still well-formed, no longer valid."""
    signing_input, _, signature = token.rpartition(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[-1] ^= 0x01
    return signing_input + "." + b64url(bytes(raw))


_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def oauth_encode(text):
    """RFC 5849 section 3.6: UTF-8, then every byte outside ALPHA DIGIT - . _ ~ as %XX (upper hex)."""
    return "".join(chr(b) if b in _UNRESERVED else "%%%02X" % b for b in text.encode("utf-8"))


def oauth1_base_string(method, base_uri, params):
    """RFC 5849 section 3.4.1: METHOD & base-uri & normalized-parameters, each encoded once more."""
    encoded = sorted((oauth_encode(name), oauth_encode(value)) for name, value in params)
    normalized = "&".join(name + "=" + value for name, value in encoded)
    return "&".join([oauth_encode(method.upper()), oauth_encode(base_uri), oauth_encode(normalized)])


def oauth1_signature(base_string, consumer_secret, token_secret):
    """RFC 5849 section 3.4.2: HMAC-SHA1 keyed by encode(consumer secret) & encode(token secret)."""
    key = oauth_encode(consumer_secret) + "&" + oauth_encode(token_secret)
    digest = hmac.new(key.encode("ascii"), base_string.encode("ascii"), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def oauth1_base_uri(scheme, host_header, path):
    """RFC 5849 section 3.4.1.2: lower-case scheme and host, default port omitted, no query."""
    scheme = scheme.lower()
    host = host_header.strip().lower()
    port = None
    if host.startswith("["):
        end = host.find("]")
        if end != -1 and host[end + 1:end + 2] == ":":
            host, port = host[:end + 1], host[end + 2:]
    elif host.count(":") == 1:
        host, port = host.split(":")
    if port is not None and port != "" and int(port) != {"http": 80, "https": 443}.get(scheme):
        host = host + ":" + str(int(port))
    return scheme + "://" + host + (path or "/")


_OAUTH_HEADER_PARAM = re.compile(r'\s*([^\s=,]+)\s*=\s*"([^"]*)"\s*(?:,|$)')


def parse_oauth_header(value):
    """`OAuth realm="x", oauth_consumer_key="..."` -> [(name, value)], realm dropped. None if not OAuth."""
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() != "oauth":
        return None
    params = []
    position = 0
    rest = rest.strip()
    while position < len(rest):
        match = _OAUTH_HEADER_PARAM.match(rest, position)
        if not match:
            raise ValueError("malformed OAuth Authorization header")
        name = urllib.parse.unquote(match.group(1))
        if name != "realm":
            params.append((name, urllib.parse.unquote(match.group(2))))
        position = match.end()
    return params


def scope_words(scope):
    return (scope or "").replace(",", " ").split()


def new_token(prefix):
    return prefix + secrets.token_urlsafe(24)


def new_oauth1_secret():
    """Standard base64 of 22 bytes: always ends in "==" and often holds + or /, so clients must
    form-decode it from the response and percent-encode it in the HMAC key."""
    return base64.b64encode(secrets.token_bytes(22)).decode("ascii")


# --- State ------------------------------------------------------------------------------

STAT_KEYS = (
    "authorize", "token", "refresh", "revoke", "user", "discovery", "jwks",
    "oauth1", "oauth1_request_token", "oauth1_authorize", "oauth1_access_token", "oauth1_account", "oauth1_keyed", "par",
    "tls_refused",
)


class ProviderState(MockState):
    """Everything the provider remembers. Every access goes through `lock`."""

    def __init__(self, token_format, host, issuer_path):
        super().__init__(host)
        self.issuer_path = issuer_path
        self.startup_config = {
            "token_format": token_format,
            "access_token_lifetime": DEFAULT_ACCESS_TOKEN_LIFETIME,
            "rotate_refresh_tokens": True,
            "id_token_alg": "RS256",
            "id_token_fault": "",
            "token_fault": "",
            "user_fault": "",
        }
        self.tls = False
        self.reset()

    def reset(self):
        with self.lock:
            self.config = dict(self.startup_config)
            self.stats = {key: 0 for key in STAT_KEYS}
            self.codes = {}          # code -> record
            self.client_keys = {}    # encrypt_to URL -> the key set fetched from it
            self.access_tokens = {}  # token -> record
            self.refresh_tokens = {} # token -> record
            self.o1_request = {}     # request token -> record
            self.o1_access = {}      # access token -> record
            self.o1_nonces = set()   # (consumer key, nonce)
            self.assertion_ids = set()  # jti of every client assertion accepted
            self.pushed = {}         # request_uri -> (authorize parameters, expiry)
            self.dpop_ids = set()    # jti of every DPoP proof accepted

    @property
    def base_url(self):
        url = MockState.base_url.fget(self)
        return "https" + url[len("http"):] if self.tls else url

    @property
    def issuer(self):
        return self.base_url + self.issuer_path

    def revoke_grant(self, grant):
        """Drops every token of one grant. Caller holds the lock."""
        for table in (self.access_tokens, self.refresh_tokens):
            for token in [t for t, record in table.items() if record["grant"] == grant]:
                del table[token]

    def issue_tokens(self, grant, client_id, scope, sub, jkt=None):
        """New access + refresh token for a grant; `jkt` binds the access token to a DPoP key.
        Caller holds the lock."""
        access = new_token("mat_")
        refresh = new_token("mrt_")
        lifetime = self.config["access_token_lifetime"]
        self.access_tokens[access] = {
            "grant": grant, "client_id": client_id, "scope": scope, "sub": sub,
            "expires": time.time() + lifetime, "jkt": jkt,
        }
        self.refresh_tokens[refresh] = {"grant": grant, "client_id": client_id, "scope": scope, "sub": sub}
        return access, refresh, lifetime


# --- HTTP -------------------------------------------------------------------------------


class ProviderHandler(MockHandler):
    server_version = "MockProvider/1.0"
    log_name = "mock_provider"

    def do_PATCH(self):
        self.dispatch("PATCH")

    ROUTES = {
        "/oauth2/authorize": ("handle_authorize", ("GET", "POST")),
        "/oauth2/par": ("handle_par", ("POST",)),
        "/oauth2/token": ("handle_token", ("GET", "POST")),
        "/oauth2/revoke": ("handle_revoke", ("POST",)),
        "/oauth2/user": ("handle_user", ("GET",)),
        "/oauth2/userinfo": ("handle_userinfo", ("GET", "POST")),
        "/oauth2/userinfo.jwt": ("handle_signed_userinfo", ("GET",)),
        "/oauth2/metadata": ("handle_metadata", ("GET",)),
        "/oauth2/graphql": ("handle_graphql", ("POST",)),
        "/oauth2/jwks": ("handle_jwks", ("GET",)),
        "/oauth1/request_token": ("handle_o1_request_token", ("POST",)),
        "/oauth1/authorize": ("handle_o1_authorize", ("GET",)),
        "/oauth1/access_token": ("handle_o1_access_token", ("POST",)),
        "/oauth1/account": ("handle_o1_account", ("GET",)),
        "/oauth1/keyed": ("handle_o1_keyed", ("GET",)),
        "/_stats": ("handle_stats", ("GET",)),
        "/_reset": ("handle_reset", ("POST",)),
        "/_config": ("handle_config", ("GET", "POST")),
    }

    def find_route(self, path):
        route = self.ROUTES.get(path)
        if route is None and self.is_discovery_path(path):
            route = ("handle_discovery", ("GET",))
        return route

    def is_discovery_path(self, path):
        well_known = "/.well-known/openid-configuration"
        issuer_path = self.state.issuer_path
        return path in (issuer_path + well_known, well_known + issuer_path)

    # -- OAuth 2 authorization endpoint --

    def handle_authorize(self):
        self.state.count("authorize")
        pairs = self.query
        if self.method == "POST":
            try:
                pairs = self.form_params() or []
            except BadRequest as error:
                return self.send_text(400, "Bad request: %s\n" % error)
        params, duplicates = self.single_values(pairs)
        if "request_uri" in params:
            # RFC 9126 section 4: the parameters pushed earlier, once, by the same client.
            with self.state.lock:
                pushed, expires = self.state.pushed.pop(params["request_uri"], (None, 0))
            if pushed is None or expires < time.time() or pushed.get("client_id") != params.get("client_id"):
                return self.send_text(400, "Error 400: invalid_request_uri\n\nThe request_uri is unknown, used or expired.\n")
            params, duplicates = dict(pushed), set()
        if "request" in params:
            outcome = self.request_object(params)
            if isinstance(outcome, str):
                return self.send_text(400, "Error 400: invalid_request_object\n\n%s\n" % outcome)
            params, duplicates = outcome, set()

        # Problems with the client or its redirect URI are shown to the user, never redirected.
        client_id = params.get("client_id")
        if not client_id or "client_id" in duplicates or client_id not in OAUTH2_CLIENTS:
            return self.send_text(400, "Error 400: invalid_client\n\nThe OAuth client was not found.\n")
        redirect_uri = params.get("redirect_uri")
        if not redirect_uri or "redirect_uri" in duplicates:
            return self.send_text(400, "Error 400: invalid_request\n\nMissing required parameter: redirect_uri\n")
        parsed = urllib.parse.urlsplit(redirect_uri)
        if not parsed.scheme or parsed.fragment or "#" in redirect_uri:
            return self.send_text(400, "Error 400: invalid_request\n\nInvalid redirect_uri: %s\n" % redirect_uri)

        state = params.get("state")
        response_mode = params.get("response_mode") or "query"
        if response_mode not in ("query", "fragment", "form_post"):
            response_mode = "query"
            return self.respond_to_client(redirect_uri, response_mode, [
                ("error", "invalid_request"), ("error_description", "Unsupported response_mode"), ("state", state)])

        def fail(error, description):
            return self.respond_to_client(redirect_uri, response_mode, [
                ("error", error), ("error_description", description), ("state", state)])

        if duplicates:
            return fail("invalid_request", "Duplicate parameter: " + sorted(duplicates)[0])
        response_type = params.get("response_type")
        if not response_type:
            return fail("invalid_request", "Missing required parameter: response_type")
        if response_type != "code":
            return fail("unsupported_response_type", "Only response_type=code is supported")
        challenge = params.get("code_challenge")
        method = params.get("code_challenge_method")
        if challenge is None and method is not None:
            return fail("invalid_request", "code_challenge_method without code_challenge")
        if challenge is not None:
            method = method or "plain"
            if method not in ("S256", "plain"):
                return fail("invalid_request", "Transform algorithm not supported")
            if not PKCE_VERIFIER.match(challenge):
                return fail("invalid_request", "Invalid code_challenge")
        scope = params.get("scope", "")
        if "deny" in scope_words(scope):
            return fail("access_denied", "The user denied access")

        code = secrets.token_urlsafe(32)
        with self.state.lock:
            self.state.codes[code] = {
                "client_id": client_id,
                "redirect_uri": redirect_uri,
                "scope": scope,
                "challenge": challenge,
                "method": method,
                "nonce": params.get("nonce"),
                "expires": time.time() + CODE_LIFETIME,
                "used": False,
                "grant": None,
            }
        # pCloud and Kommo name, in the callback, the host whose token endpoint redeems the code;
        # ShareFile names it in two parts, a subdomain and a control plane. Here both name the
        # mock itself: its whole address, then the two halves of its IP address.
        host = urllib.parse.urlsplit(self.state.base_url).netloc
        address = urllib.parse.urlsplit(self.state.base_url).hostname.split(".")
        halves = [("subdomain", ".".join(address[:2])), ("apicp", ".".join(address[2:]))]
        return self.respond_to_client(redirect_uri, response_mode, [("code", code), ("state", state), ("hostname", host)] + halves)

    # -- OAuth 2 token endpoint --

    def token_response(self, fields, lifetime, token_format):
        """Success body in the configured format: JSON, form like GitHub's default, JSON
        wrapped in "data" like Douyin's ("wrapped"), or JSON after Xiaomi's &&&START&&&
        ("prefixed")."""
        if token_format == "form":
            return self.send(200, form_bytes(fields), "application/x-www-form-urlencoded; charset=utf-8", NO_STORE)
        document = {}
        for name, value in fields:
            document[name] = lifetime if name == "expires_in" else value
        if token_format == "wrapped":
            return self.send_json(200, {"data": document, "message": "success"}, NO_STORE)
        if token_format == "prefixed":
            return self.send_prefixed(200, document, NO_STORE)
        return self.send_json(200, document, NO_STORE)

    def send_prefixed(self, status, document, headers):
        body = XIAOMI_PREFIX + json.dumps(document).encode("utf-8")
        return self.send(status, body, "application/json;charset=UTF-8", headers)

    def oauth2_error(self, status, error, description, basic=False):
        headers = list(NO_STORE)
        if status == 401:
            headers.append(("WWW-Authenticate", 'Basic realm="mock"'))
        with self.state.lock:
            token_format = self.state.config["token_format"]
        if token_format == "form":
            body = form_bytes([("error", error), ("error_description", description)])
            return self.send(status, body, "application/x-www-form-urlencoded; charset=utf-8", headers)
        if token_format == "wrapped":
            return self.send_json(status, {"data": {"error": error, "error_description": description}, "message": "error"}, headers)
        if token_format == "prefixed":
            return self.send_prefixed(status, {"error": error, "error_description": description}, headers)
        return self.send_json(status, {"error": error, "error_description": description}, headers)

    def authenticate_client(self, params):
        """RFC 6749 section 2.3.1: client_secret_basic (form-urlencoded id:secret) or client_secret_post;
        or RFC 7523 section 2.2: a client assertion (private_key_jwt).
        Returns (client_id, None) or (None, (status, error, description, used_basic))."""
        if "client_assertion" in params or "client_assertion_type" in params:
            if self.headers.get("Authorization") or "client_secret" in params:
                return None, (400, "invalid_request", "More than one client authentication method", False)
            return self.authenticate_assertion(params)
        authorization = self.headers.get("Authorization")
        basic = None
        if authorization:
            scheme, _, credentials = authorization.strip().partition(" ")
            if scheme.lower() != "basic":
                return None, (401, "invalid_client", "Unsupported client authentication scheme", True)
            try:
                decoded = base64.b64decode(credentials.strip(), validate=True).decode("utf-8")
            except (ValueError, UnicodeDecodeError):
                return None, (401, "invalid_client", "Malformed Basic credentials", True)
            raw_id, separator, raw_secret = decoded.partition(":")
            if not separator:
                return None, (401, "invalid_client", "Malformed Basic credentials", True)
            basic = (urllib.parse.unquote_plus(raw_id), urllib.parse.unquote_plus(raw_secret))
        form_id = params.get("client_id")
        form_secret = params.get("client_secret")
        if basic is not None:
            if form_secret is not None:
                return None, (400, "invalid_request", "More than one client authentication method", True)
            if form_id is not None and form_id != basic[0]:
                return None, (400, "invalid_request", "client_id does not match the Authorization header", True)
            client_id, secret = basic
        else:
            if form_id is None or form_secret is None:
                return None, (401, "invalid_client", "Client authentication failed", False)
            client_id, secret = form_id, form_secret
        expected = OAUTH2_CLIENTS.get(client_id)
        if expected is None or not hmac.compare_digest(expected.encode("utf-8"), secret.encode("utf-8")):
            return None, (401, "invalid_client", "Client authentication failed", basic is not None)
        return client_id, None

    def request_object(self, params):
        """RFC 9101: the authorize parameters from a JWT the client signed (HS256 or HS512 keyed
        by its secret, as Duo takes them, or RS256 with the key registered by
        /_config?client_key_n=): iss and client_id the client named outside, aud this issuer,
        at most five minutes to live. Parameters outside it are ignored, as section 5 says.
        With /_config?request_encryption=<alg>, the object must come encrypted (RFC 9101 section
        6.1) to the encryption key the JWKS then publishes.
        Returns the parameters, or why the object was refused."""
        request = params["request"]
        with self.state.lock:
            encryption = self.state.config.get("request_encryption")
        if encryption:
            try:
                header, plaintext = open_compact_jwe(request, RSA_KEY)
                request = plaintext.decode("ascii")
            except (ValueError, UnicodeDecodeError, subprocess.CalledProcessError):
                return "The request object must be encrypted to this provider's key"
            if header.get("alg") != encryption or header.get("kid") != ENCRYPTION_KID or header.get("cty") != "JWT":
                return "The request object's encryption header is not the registered one"
        parts = request.split(".")
        try:
            header = json.loads(client_unb64(parts[0]))
            claims = json.loads(client_unb64(parts[1]))
            signature = client_unb64(parts[2])
        except (IndexError, ValueError):
            return "Malformed request object"
        if len(parts) != 3 or not isinstance(header, dict) or not isinstance(claims, dict):
            return "Malformed request object"
        client_id = params.get("client_id")
        if client_id not in OAUTH2_CLIENTS or claims.get("client_id") != client_id or claims.get("iss") != client_id:
            return "The request object is not from the client named outside it"
        if claims.get("aud") != self.state.issuer:
            return "The request object's audience is not this issuer"
        expires, now = claims.get("exp"), time.time()
        if not isinstance(expires, int) or expires <= now or expires - now > 300:
            return "The request object has expired or lives too long"
        signing_input = (parts[0] + "." + parts[1]).encode("ascii")
        digests = {"HS256": hashlib.sha256, "HS512": hashlib.sha512}
        if header.get("alg") in digests:
            expected = hmac.new(OAUTH2_CLIENTS[client_id].encode("utf-8"), signing_input, digests[header["alg"]]).digest()
            valid = hmac.compare_digest(expected, signature)
        elif header.get("alg") == "RS256":
            with self.state.lock:
                modulus = self.state.config.get("client_key_n")
            valid = modulus is not None and client_rs256_verify(signing_input, signature, int(modulus, 16), RSA_E)
        else:
            return "The request object must be signed with HS256, HS512 or RS256"
        if not valid:
            return "The request object's signature does not verify"
        return {name: value for name, value in claims.items() if isinstance(value, str)}

    def authenticate_assertion(self, params):
        """private_key_jwt against the RSA key registered with /_config?client_key_n=<hex modulus>
        (RS256), or client_secret_jwt keyed by the client's secret (HS256): iss and sub the client,
        aud this endpoint's URL, at most five minutes to live, each jti once."""
        def refuse(description):
            return None, (401, "invalid_client", description, False)
        if params.get("client_assertion_type") != "urn:ietf:params:oauth:client-assertion-type:jwt-bearer":
            return None, (400, "invalid_request", "Unsupported client_assertion_type", False)
        parts = params.get("client_assertion", "").split(".")
        try:
            header = json.loads(client_unb64(parts[0]))
            claims = json.loads(client_unb64(parts[1]))
            signature = client_unb64(parts[2])
        except (IndexError, ValueError):
            return refuse("Malformed client assertion")
        if len(parts) != 3 or not isinstance(header, dict) or not isinstance(claims, dict) or header.get("alg") not in ("RS256", "HS256", "HS512"):
            return refuse("The client assertion must be an RS256, HS256 or HS512 JWT")
        client_id = claims.get("iss")
        with self.state.lock:
            modulus = self.state.config.get("client_key_n")
        if client_id not in OAUTH2_CLIENTS or claims.get("sub") != client_id or (header["alg"] == "RS256" and not modulus):
            return refuse("Unknown client or no registered key")
        if params.get("client_id", client_id) != client_id:
            return None, (400, "invalid_request", "client_id does not match the assertion", False)
        if claims.get("aud") != self.state.base_url + self.req_path:
            return refuse("The assertion's audience is not this endpoint")
        expires, now = claims.get("exp"), time.time()
        if not isinstance(expires, int) or expires <= now or expires - now > 300:
            return refuse("The assertion has expired or lives too long")
        signing_input = (parts[0] + "." + parts[1]).encode("ascii")
        if header["alg"] in ("HS256", "HS512"):
            digest = hashlib.sha512 if header["alg"] == "HS512" else hashlib.sha256
            expected = hmac.new(OAUTH2_CLIENTS[client_id].encode("utf-8"), signing_input, digest).digest()
            valid = hmac.compare_digest(expected, signature)
        else:
            valid = client_rs256_verify(signing_input, signature, int(modulus, 16), RSA_E)
        if not valid:
            return refuse("The assertion's signature does not verify")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            return refuse("The assertion has no jti")
        with self.state.lock:
            replayed = jti in self.state.assertion_ids
            self.state.assertion_ids.add(jti)
        if replayed:
            return refuse("The assertion's jti was used before")
        return client_id, None

    def read_client_form(self):
        """(params, duplicate names) of a form-encoded /token or /revoke request, or None after
        the 400 has been sent. In the "wrapped" token format the body must be a JSON object of
        strings instead, as providers of that kind (Square, Douyin) take."""
        with self.state.lock:
            token_format = self.state.config["token_format"]
        # Xiaomi's token endpoint is a GET with the parameters in the query; the others POST.
        if (self.method == "GET") != (token_format == "prefixed" and self.req_path == "/oauth2/token"):
            return self.oauth2_error(405, "invalid_request", "Use POST" if self.method == "GET" else "Use GET")
        if token_format == "prefixed" and self.req_path == "/oauth2/token":
            return self.single_values(self.query)
        if token_format == "wrapped":
            content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
            if content_type != "application/json":
                return self.oauth2_error(400, "invalid_request", "Content-Type must be application/json")
            try:
                document = json.loads(self.body.decode("utf-8"))
            except (UnicodeDecodeError, ValueError):
                return self.oauth2_error(400, "invalid_request", "The body is not JSON")
            if not isinstance(document, dict) or not all(isinstance(value, str) for value in document.values()):
                return self.oauth2_error(400, "invalid_request", "The body must be an object of strings")
            return document, set()
        try:
            pairs = self.form_params()
        except BadRequest as error:
            return self.oauth2_error(400, "invalid_request", str(error))
        if pairs is None:
            return self.oauth2_error(400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded")
        return self.single_values(pairs)

    def client_request(self):
        """(params, client_id) of an authenticated form request from a client, or (None, None)
        after the error has been sent: revocation and pushed authorization requests."""
        form = self.read_client_form()
        if form is None:
            return None, None
        params, duplicates = form
        return params, self.authenticated_client(params, duplicates)

    def authenticated_client(self, params, duplicates):
        """The client_id, or None after the error has been sent. Duplicates are refused before
        client authentication is even looked at."""
        if duplicates:
            return self.oauth2_error(400, "invalid_request", "Duplicate parameter: " + sorted(duplicates)[0])
        client_id, failure = self.authenticate_client(params)
        if failure:
            return self.oauth2_error(failure[0], failure[1], failure[2], failure[3])
        return client_id

    def endpoint_fault(self, endpoint):
        """True once the fault /_config set for `endpoint` has answered instead of it."""
        with self.state.lock:
            fault = self.state.config[endpoint + "_fault"]
        if fault == "slow":
            time.sleep(SLOW_SECONDS)
        elif fault == "500":
            self.send_json(500, {"error": "server_error", "request": self.path,
                                 "authorization": self.headers.get("Authorization", ""),
                                 "body": self.body.decode("utf-8", "replace")})
            return True
        return False

    def handle_token(self):
        self.state.count("token")
        if self.endpoint_fault("token"):
            return
        form = self.read_client_form()
        if form is None:
            return
        params, duplicates = form
        # Counted before the checks below, so a refresh that fails them still shows up.
        if params.get("grant_type") == "refresh_token":
            self.state.count("refresh")
        client_id = self.authenticated_client(params, duplicates)
        if client_id is None:
            return
        self.dpop_jkt, failure = self.dpop_check()
        if failure:
            return self.dpop_refusal(400, failure)
        grant_type = params.get("grant_type")
        if not grant_type:
            return self.oauth2_error(400, "invalid_request", "Missing required parameter: grant_type")
        if grant_type == "authorization_code":
            return self.grant_authorization_code(client_id, params)
        if grant_type == "refresh_token":
            return self.grant_refresh_token(client_id, params)
        return self.oauth2_error(400, "unsupported_grant_type", "Unsupported grant_type: " + grant_type)

    def grant_authorization_code(self, client_id, params):
        code = params.get("code")
        if not code:
            return self.oauth2_error(400, "invalid_request", "Missing required parameter: code")
        now = time.time()
        with self.state.lock:
            outcome = self.redeem_code(code, client_id, params.get("redirect_uri"), params.get("code_verifier"), now)
            token_format = self.state.config["token_format"]
            id_token_alg = self.state.config["id_token_alg"]
            fault = self.state.config["id_token_fault"]
            issuer = self.state.issuer
        if isinstance(outcome, str):
            return self.oauth2_error(400, "invalid_grant", outcome)
        record, access, refresh, lifetime = outcome
        fields = [
            ("access_token", access),
            ("token_type", "DPoP" if self.dpop_jkt else "bearer"),
            ("expires_in", str(lifetime)),
            ("refresh_token", refresh),
            ("scope", record["scope"]),
        ]
        if token_format == "form":
            fields = [fields[0], fields[1], fields[4], fields[2], fields[3]]
        if "openid" in scope_words(record["scope"]):
            id_token = self.id_token(client_id, record["nonce"], issuer, int(now), id_token_alg, fault)
            fields.append(("id_token", id_token))
        # Salesforce's answer names the org's own API host; here it is the mock itself.
        fields.append(("instance_url", self.state.base_url))
        if token_format != "form":
            # Teamwork's answer names the site's API host only inside a nested object.
            fields.append(("installation", {"id": 7, "apiEndPoint": self.state.base_url + "/"}))
        return self.token_response(fields, lifetime, token_format)

    def id_token(self, client_id, nonce, issuer, issued, alg, fault):
        """The id_token of a code grant: RS256 with the mock's key, or MACed with the client
        secret (OpenID Connect Core 10.1) for HS256/HS512; `fault` spoils exactly one thing."""
        claims = {"iss": issuer, "sub": OAUTH2_SUBJECT, "aud": client_id,
                  "exp": issued + ID_TOKEN_LIFETIME, "iat": issued}
        if fault == "audience":
            claims["aud"] = "another-client"
        elif fault == "expired":
            # Well past any clock-skew leeway a client may allow.
            claims["iat"], claims["exp"] = issued - 2 * ID_TOKEN_LIFETIME, issued - ID_TOKEN_LIFETIME
        if nonce is not None or fault == "nonce":
            claims["nonce"] = "other-" + secrets.token_urlsafe(12) if fault == "nonce" else nonce
        claims["email"] = OAUTH2_PROFILE["email"]
        claims["email_verified"] = True
        if alg in ("HS256", "HS512"):
            digest = hashlib.sha512 if alg == "HS512" else hashlib.sha256
            signing_input = b64url(json_bytes({"alg": alg, "typ": "JWT"})) + "." + b64url(json_bytes(claims))
            mac = hmac.new(OAUTH2_CLIENTS[client_id].encode("utf-8"), signing_input.encode("ascii"), digest).digest()
            token = signing_input + "." + b64url(mac)
        else:
            token = make_jws(claims, kid=UNKNOWN_KID if fault == "kid" else RSA_KEY.kid)
        if fault == "signature":
            token = tampered(token)
        return token if alg in ("HS256", "HS512") else self.encrypted(token)

    def redeem_code(self, code, client_id, redirect_uri, verifier, now):
        """Checks and consumes an authorization code. Caller holds the lock.
        Returns an invalid_grant description, or (code record, access, refresh, lifetime)."""
        record = self.state.codes.get(code)
        if record is None:
            return "Invalid authorization code"
        if record["used"]:
            # RFC 6749 section 4.1.2: a reused code revokes the tokens it already produced.
            self.state.revoke_grant(record["grant"])
            return "Authorization code already used"
        if record["expires"] < now:
            return "Authorization code expired"
        if record["client_id"] != client_id:
            return "Authorization code was issued to another client"
        if redirect_uri != record["redirect_uri"]:
            return "redirect_uri does not match the authorization request"
        if record["challenge"] is not None:
            if verifier is None:
                return "Missing code_verifier"
            if not PKCE_VERIFIER.match(verifier):
                return "Invalid code_verifier"
            if record["method"] == "S256":
                computed = b64url(hashlib.sha256(verifier.encode("ascii")).digest())
            else:
                computed = verifier
            if not hmac.compare_digest(computed.encode("ascii"), record["challenge"].encode("ascii")):
                return "code_verifier does not match code_challenge"
        elif verifier is not None:
            return "code_verifier sent but the authorization request had no code_challenge"
        # Only a successful exchange consumes the code.
        record["used"] = True
        record["grant"] = secrets.token_hex(8)
        access, refresh, lifetime = self.state.issue_tokens(
            record["grant"], client_id, record["scope"], OAUTH2_SUBJECT, self.dpop_jkt)
        return record, access, refresh, lifetime

    def grant_refresh_token(self, client_id, params):
        token = params.get("refresh_token")
        if not token:
            return self.oauth2_error(400, "invalid_request", "Missing required parameter: refresh_token")
        requested = params.get("scope")
        failure = None
        with self.state.lock:
            record = self.state.refresh_tokens.get(token)
            if record is None:
                failure = ("invalid_grant", "Invalid refresh token")
            elif record["client_id"] != client_id:
                failure = ("invalid_grant", "Refresh token was issued to another client")
            elif requested is not None and not set(scope_words(requested)) <= set(scope_words(record["scope"])):
                failure = ("invalid_scope", "Requested scope exceeds the original grant")
            else:
                scope = record["scope"] if requested is None else requested
                access, refresh, lifetime = self.state.issue_tokens(record["grant"], client_id, scope, record["sub"], self.dpop_jkt)
                if self.state.config["rotate_refresh_tokens"]:
                    del self.state.refresh_tokens[token]
                else:
                    del self.state.refresh_tokens[refresh]
                    refresh = token
            token_format = self.state.config["token_format"]
        if failure:
            return self.oauth2_error(400, failure[0], failure[1])
        fields = [
            ("access_token", access),
            ("token_type", "DPoP" if self.dpop_jkt else "bearer"),
            ("expires_in", str(lifetime)),
            ("refresh_token", refresh),
            ("scope", scope),
        ]
        if token_format == "form":
            fields = [fields[0], fields[1], fields[4], fields[2], fields[3]]
        return self.token_response(fields, lifetime, token_format)

    # -- OAuth 2 revocation, user info --

    def handle_revoke(self):
        self.state.count("revoke")
        params, client_id = self.client_request()
        if client_id is None:
            return
        token = params.get("token")
        if not token:
            return self.oauth2_error(400, "invalid_request", "Missing required parameter: token")
        foreign = False
        with self.state.lock:
            access = self.state.access_tokens.get(token)
            refresh = self.state.refresh_tokens.get(token)
            record = access or refresh
            if record is not None and record["client_id"] != client_id:
                foreign = True
            else:
                if access is not None:
                    del self.state.access_tokens[token]
                if refresh is not None:
                    # RFC 7009 section 2.1: revoking a refresh token also ends its access tokens.
                    self.state.revoke_grant(refresh["grant"])
        if foreign:
            return self.oauth2_error(400, "unauthorized_client", "Token was issued to another client")
        # Unknown or already revoked tokens also get 200 (RFC 7009 section 2.2).
        return self.send(200, b"", None, NO_STORE)

    def dpop_check(self, access_token=None):
        """RFC 9449: (key thumbprint, None) for a valid DPoP proof on this request, (None, None)
        without one, (None, (error, description)) for a bad one. RS256 proofs only; with
        /_config?dpop_nonce=... every proof sent to the token endpoint must carry that nonce
        (the API, a resource server, asks for none)."""
        proof = self.headers.get("DPoP")
        if proof is None:
            return None, None
        def bad(description):
            return None, ("invalid_dpop_proof", description)
        parts = proof.split(".")
        try:
            header = json.loads(client_unb64(parts[0]))
            claims = json.loads(client_unb64(parts[1]))
            signature = client_unb64(parts[2])
            jwk = header["jwk"]
            n, e = (int.from_bytes(client_unb64(jwk[name]), "big") for name in ("n", "e"))
        except (IndexError, KeyError, TypeError, ValueError):
            return bad("Malformed DPoP proof")
        if len(parts) != 3 or header.get("typ") != "dpop+jwt" or header.get("alg") != "RS256" or jwk.get("kty") != "RSA":
            return bad("The proof must be an RS256 dpop+jwt carrying an RSA jwk")
        if not client_rs256_verify((parts[0] + "." + parts[1]).encode("ascii"), signature, n, e):
            return bad("The proof's signature does not verify")
        if claims.get("htm") != self.method or claims.get("htu") != self.state.base_url + self.req_path:
            return bad("The proof is for another method or URL")
        if not isinstance(claims.get("iat"), int) or abs(time.time() - claims["iat"]) > 60:
            return bad("The proof is too old or from the future")
        if access_token is not None and claims.get("ath") != b64url(hashlib.sha256(access_token.encode("utf-8")).digest()):
            return bad("The proof is not for this access token")
        with self.state.lock:
            nonce = self.state.config.get("dpop_nonce") if access_token is None else None
            if nonce and claims.get("nonce") != nonce:
                return None, ("use_dpop_nonce", "Authorization server requires nonce in DPoP proof")
            jti = claims.get("jti")
            if not isinstance(jti, str) or jti in self.state.dpop_ids:
                return bad("The proof's jti is missing or was used before")
            self.state.dpop_ids.add(jti)
        members = json.dumps({"e": jwk["e"], "kty": "RSA", "n": jwk["n"]}, separators=(",", ":"), sort_keys=True)
        return b64url(hashlib.sha256(members.encode("ascii")).digest()), None

    def dpop_refusal(self, status, failure):
        error, description = failure
        with self.state.lock:
            nonce = self.state.config.get("dpop_nonce")
        headers = [("DPoP-Nonce", nonce)] if error == "use_dpop_nonce" and nonce else []
        return self.send_json(status, {"error": error, "error_description": description}, headers + list(NO_STORE))

    def bearer_record(self, scheme_name="bearer"):
        """The record of a valid bearer token, else None after the 401 has been sent.
        Mailchimp's metadata endpoint takes the same token under the scheme "OAuth"."""
        authorization = self.headers.get("Authorization") or ""
        scheme, _, token = authorization.strip().partition(" ")
        token = token.strip()
        if scheme.lower() not in (scheme_name, "dpop") or not token:
            self.send_json(
                401, {"error": "invalid_token", "error_description": "Missing bearer token"},
                [("WWW-Authenticate", 'Bearer realm="mock"')],
            )
            return None
        with self.state.lock:
            record = self.state.access_tokens.get(token)
            if record is not None and record["expires"] < time.time():
                record = None
        if record is not None and (record.get("jkt") is not None or scheme.lower() == "dpop"):
            # A key-bound token is good only under the DPoP scheme, with a proof from its key.
            jkt, failure = self.dpop_check(access_token=token)
            if failure or jkt is None or jkt != record.get("jkt") or scheme.lower() != "dpop":
                record = None
        if record is None:
            self.send_json(
                401, {"error": "invalid_token", "error_description": "The access token is invalid, expired or revoked"},
                [("WWW-Authenticate", 'Bearer realm="mock", error="invalid_token", '
                  'error_description="The access token is invalid, expired or revoked"')],
            )
            return None
        return record

    def handle_user(self):
        self.state.count("user")
        if self.endpoint_fault("user"):
            return
        if self.bearer_record() is None:
            return
        profile = dict(OAUTH2_PROFILE)
        profile["avatar_url"] = self.state.base_url + "/a.png"
        return self.send_json(200, profile, [("Cache-Control", "no-store")])

    def handle_metadata(self):
        """Mailchimp's login metadata: the account's data centre and the API host it serves
        (here the mock itself), for a token sent as "Authorization: OAuth <token>"."""
        self.state.count("user")
        if self.bearer_record("oauth") is None:
            return
        return self.send_json(200, {
            "dc": "us1", "role": "owner", "accountname": "Octo Shop", "user_id": OAUTH2_PROFILE["id"],
            "login": {"email": OAUTH2_PROFILE["email"], "login_id": OAUTH2_PROFILE["id"], "login_name": OAUTH2_PROFILE["login"],
                      "login_email": OAUTH2_PROFILE["email"]},
            "login_url": "https://login.mailchimp.com", "api_endpoint": self.state.base_url,
        }, [("Cache-Control", "no-store")])

    def handle_userinfo(self):
        self.state.count("user")
        if self.bearer_record() is None:
            return
        return self.send_json(200, {
            "sub": OAUTH2_SUBJECT,
            "name": OAUTH2_PROFILE["name"],
            "preferred_username": OAUTH2_PROFILE["login"],
            "email": OAUTH2_PROFILE["email"],
            "email_verified": True,
            "picture": self.state.base_url + "/a.png",
        }, [("Cache-Control", "no-store")])

    def handle_par(self):
        """RFC 9126 pushed authorization request: the client authenticates as at the token
        endpoint and gets a one-time request_uri, good for a minute, for /oauth2/authorize."""
        self.state.count("par")
        params, client_id = self.client_request()
        if client_id is None:
            return
        if "request_uri" in params:
            return self.oauth2_error(400, "invalid_request", "request_uri must not be pushed")
        credentials = ("client_secret", "client_assertion", "client_assertion_type")
        stored = {name: value for name, value in params.items() if name not in credentials}
        stored["client_id"] = client_id
        request_uri = "urn:ietf:params:oauth:request_uri:" + secrets.token_urlsafe(24)
        with self.state.lock:
            self.state.pushed[request_uri] = (stored, time.time() + 60)
        return self.send_json(201, {"request_uri": request_uri, "expires_in": 60}, NO_STORE)

    def handle_signed_userinfo(self):
        """OpenID Connect Core 5.3.2's signed UserInfo answer, FranceConnect's only form: the
        claims as an RS256 JWT with iss and aud, Content-Type application/jwt. `?tamper=1`
        changes a claim after signing."""
        self.state.count("user")
        record = self.bearer_record()
        if record is None:
            return
        claims = {"iss": self.state.issuer, "aud": record["client_id"], "sub": OAUTH2_SUBJECT,
                  "given_name": "Octo", "family_name": "One", "email": OAUTH2_PROFILE["email"]}
        token = make_jws(claims)
        if dict(self.query).get("tamper") == "1":
            header, _, signature = token.split(".")
            token = header + "." + b64url(json_bytes(dict(claims, sub="someone-else"))) + "." + signature
        return self.send(200, self.encrypted(token).encode("ascii"), "application/jwt", NO_STORE)

    def encrypted(self, token):
        """The signed token as itsme sends it to a client that registered an encryption key:
        a JWE to the RSA "enc" key of the JWKS at /_config?encrypt_to=<url>. Like itsme, the
        mock caches that key set, here until encrypt_to is set again. Unchanged when none is set."""
        with self.state.lock:
            url = self.state.config.get("encrypt_to")
            keys = self.state.client_keys.get(url)
        if not url:
            return token
        if keys is None:
            keys = http("GET", url).json().get("keys", [])
            with self.state.lock:
                self.state.client_keys[url] = keys
        key = next((k for k in keys if k.get("use") == "enc" and k.get("kty") == "RSA"), None)
        if key is None:
            return token
        n = int.from_bytes(client_unb64(key["n"]), "big")
        e = int.from_bytes(client_unb64(key["e"]), "big")
        return compact_jwe(token.encode("ascii"), n, e, key.get("kid"))

    def handle_graphql(self):
        """A GraphQL-shaped profile API: POST {"query": "..."} as JSON, answer {"data": {"me": ...}}."""
        self.state.count("user")
        if self.bearer_record() is None:
            return
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        try:
            document = json.loads(self.body.decode("utf-8")) if content_type == "application/json" else None
        except (UnicodeDecodeError, ValueError):
            document = None
        if not isinstance(document, dict) or "me" not in str(document.get("query", "")):
            return self.send_json(400, {"errors": [{"message": "POST a JSON body with a query for me"}]})
        return self.send_json(200, {"data": {"me": {
            "id": OAUTH2_SUBJECT, "name": OAUTH2_PROFILE["name"], "email": OAUTH2_PROFILE["email"],
        }}}, [("Cache-Control", "no-store")])

    # -- OpenID discovery --

    def handle_discovery(self):
        self.state.count("discovery")
        base = self.state.base_url
        return self.send_json(200, {
            "issuer": self.state.issuer,
            "authorization_endpoint": base + "/oauth2/authorize",
            "token_endpoint": base + "/oauth2/token",
            "userinfo_endpoint": base + "/oauth2/userinfo",
            "jwks_uri": base + "/oauth2/jwks",
            "revocation_endpoint": base + "/oauth2/revoke",
            "response_types_supported": ["code"],
            "response_modes_supported": ["query", "fragment", "form_post"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256", "plain"],
            "claims_supported": ["iss", "sub", "aud", "exp", "iat", "nonce", "email", "email_verified",
                                 "name", "preferred_username", "picture"],
        }, [("Cache-Control", "public, max-age=3600")])

    def handle_jwks(self):
        self.state.count("jwks")
        keys = [RSA_KEY.jwk()]
        with self.state.lock:
            encryption = self.state.config.get("request_encryption")
        if encryption:
            # The signing key's modulus serves as the encryption key too: a mock's shortcut, which
            # a real provider would not take.
            keys.append(dict(RSA_KEY.jwk(), kid=ENCRYPTION_KID, use="enc", alg=encryption))
        return self.send_json(200, {"keys": keys}, [("Cache-Control", "public, max-age=3600")])

    # -- OAuth 1.0a --

    def oauth1_error(self, status, problem, extra=()):
        headers = []
        if status == 401:
            headers.append(("WWW-Authenticate", 'OAuth realm="%s/"' % self.state.base_url))
        body = form_bytes([("oauth_problem", problem)] + list(extra))
        return self.send(status, body, "application/x-www-form-urlencoded", headers)

    def oauth1_verify(self, required, token_table):
        """Checks an RFC 5849 signed request. Returns (protocol params, token record or None),
        or None after sending the error. `token_table` is None (no token), "request" or "access"."""
        all_params = []
        authorization = self.headers.get("Authorization")
        if authorization:
            try:
                header_params = parse_oauth_header(authorization)
            except ValueError:
                self.oauth1_error(400, "parameter_rejected")
                return None
            if header_params is not None:
                all_params += header_params
        all_params += self.query
        try:
            body_params = self.form_params() if self.method == "POST" else None
        except BadRequest:
            body_params = None
        all_params += body_params or []

        protocol = {}
        for name, value in all_params:
            if name.startswith("oauth_"):
                if name in protocol:
                    self.oauth1_error(400, "parameter_rejected", [("oauth_parameters_rejected", name)])
                    return None
                protocol[name] = value
        needed = ["oauth_consumer_key", "oauth_signature_method", "oauth_signature", "oauth_timestamp", "oauth_nonce"]
        absent = [name for name in needed + list(required) if not protocol.get(name)]
        if absent:
            self.oauth1_error(400, "parameter_absent", [("oauth_parameters_absent", "&".join(absent))])
            return None
        if protocol.get("oauth_version", "1.0") != "1.0":
            self.oauth1_error(400, "version_rejected", [("oauth_acceptable_versions", "1.0-1.0")])
            return None
        if protocol["oauth_signature_method"] != "HMAC-SHA1":
            self.oauth1_error(400, "signature_method_rejected")
            return None
        consumer_key = protocol["oauth_consumer_key"]
        consumer_secret = OAUTH1_CONSUMERS.get(consumer_key)
        if consumer_secret is None:
            self.oauth1_error(401, "consumer_key_unknown")
            return None
        now = int(time.time())
        timestamp = protocol["oauth_timestamp"]
        if not timestamp.isdigit() or abs(int(timestamp) - now) > OAUTH1_TIMESTAMP_WINDOW:
            self.oauth1_error(401, "timestamp_refused", [
                ("oauth_acceptable_timestamps", "%d-%d" % (now - OAUTH1_TIMESTAMP_WINDOW, now + OAUTH1_TIMESTAMP_WINDOW))])
            return None

        record = None
        token_secret = ""
        if token_table is not None:
            table = self.state.o1_request if token_table == "request" else self.state.o1_access
            with self.state.lock:
                record = table.get(protocol["oauth_token"])
                record = dict(record) if record is not None else None
            if record is None or record["consumer"] != consumer_key:
                self.oauth1_error(401, "token_rejected")
                return None
            if record.get("used"):
                self.oauth1_error(401, "token_used")
                return None
            if record.get("expires", now + 1) < now:
                self.oauth1_error(401, "token_expired")
                return None
            token_secret = record["secret"]

        signed = [(name, value) for name, value in all_params if name != "oauth_signature"]
        host = self.headers.get("Host") or "%s:%d" % (self.state.host, self.state.port)
        base_uri = oauth1_base_uri("http", host, self.req_path)
        base_string = oauth1_base_string(self.method, base_uri, signed)
        expected = oauth1_signature(base_string, consumer_secret, token_secret)
        if not hmac.compare_digest(expected.encode("ascii"), protocol["oauth_signature"].encode("utf-8", "replace")):
            self.debug("signature_invalid; expected %s over base string %s" % (expected, base_string))
            self.oauth1_error(401, "signature_invalid")
            return None
        nonce_key = (consumer_key, protocol["oauth_nonce"])
        with self.state.lock:
            replayed = nonce_key in self.state.o1_nonces
            self.state.o1_nonces.add(nonce_key)
        if replayed:
            self.oauth1_error(401, "nonce_used")
            return None
        return protocol, record

    def handle_o1_request_token(self):
        self.state.count("oauth1", "oauth1_request_token")
        verified = self.oauth1_verify(["oauth_callback"], None)
        if verified is None:
            return
        protocol, _ = verified
        callback = protocol["oauth_callback"]
        parsed = urllib.parse.urlsplit(callback)
        if callback != "oob" and not (parsed.scheme and (parsed.netloc or parsed.scheme not in ("http", "https"))):
            return self.oauth1_error(400, "parameter_rejected", [("oauth_parameters_rejected", "oauth_callback")])
        token = new_token("mrq_")
        secret = new_oauth1_secret()
        with self.state.lock:
            self.state.o1_request[token] = {
                "consumer": protocol["oauth_consumer_key"], "secret": secret, "callback": callback,
                "verifier": None, "used": False, "expires": time.time() + OAUTH1_REQUEST_TOKEN_LIFETIME,
            }
        body = form_bytes([("oauth_token", token), ("oauth_token_secret", secret), ("oauth_callback_confirmed", "true")])
        return self.send(200, body, "application/x-www-form-urlencoded")

    def handle_o1_authorize(self):
        self.state.count("oauth1", "oauth1_authorize")
        params, _ = self.single_values(self.query)
        token = params.get("oauth_token")
        with self.state.lock:
            record = self.state.o1_request.get(token) if token else None
            if record is None or record["used"] or record["expires"] < time.time():
                record = None
            elif "deny" in params:
                callback, verifier = record["callback"], None
                del self.state.o1_request[token]
            else:
                if record["verifier"] is None:
                    record["verifier"] = secrets.token_urlsafe(16)
                callback, verifier = record["callback"], record["verifier"]
        if record is None:
            return self.send_text(400, "Error 400: the request token is invalid or expired.\n")
        if verifier is None:  # the user pressed "Cancel": Twitter-style denied=<token>
            if callback == "oob":
                return self.send_text(200, "Access denied.\n")
            return self.send(302, b"", None, [("Location", append_query(callback, [("denied", token)]))])
        if callback == "oob":
            page = "<!DOCTYPE html>\n<html><body><p>Your PIN: <code id=\"oauth_pin\">%s</code></p></body></html>\n" % html.escape(verifier)
            return self.send(200, page.encode("utf-8"), "text/html; charset=utf-8")
        location = append_query(callback, [("oauth_token", token), ("oauth_verifier", verifier)])
        return self.send(302, b"", None, [("Location", location)])

    def handle_o1_access_token(self):
        self.state.count("oauth1", "oauth1_access_token")
        verified = self.oauth1_verify(["oauth_token", "oauth_verifier"], "request")
        if verified is None:
            return
        protocol, _ = verified
        token = protocol["oauth_token"]
        problem = None
        with self.state.lock:
            record = self.state.o1_request.get(token)
            if record is None or record["used"]:
                problem = "token_used"
            elif record["verifier"] is None or not hmac.compare_digest(
                    record["verifier"].encode("utf-8"), protocol["oauth_verifier"].encode("utf-8")):
                problem = "verifier_invalid"
            else:
                record["used"] = True  # request tokens are single use
                access = new_token("mac_")
                secret = new_oauth1_secret()
                self.state.o1_access[access] = {"consumer": record["consumer"], "secret": secret}
        if problem:
            return self.oauth1_error(401, problem)
        body = form_bytes([
            ("oauth_token", access), ("oauth_token_secret", secret),
            ("user_id", str(OAUTH1_ACCOUNT["id"])), ("screen_name", OAUTH1_ACCOUNT["screen_name"]),
        ])
        return self.send(200, body, "application/x-www-form-urlencoded")

    def handle_o1_account(self):
        self.state.count("oauth1", "oauth1_account")
        verified = self.oauth1_verify(["oauth_token"], "access")
        if verified is None:
            return
        return self.send_json(200, OAUTH1_ACCOUNT)

    def handle_o1_keyed(self):
        """Zotero's way: after an OAuth 1.0a login the token secret is an API key, sent alone
        in a header; a call that is also signed is refused, so signing cannot pass unnoticed."""
        self.state.count("oauth1", "oauth1_keyed")
        if self.headers.get("Authorization") is not None:
            return self.send_json(400, {"error": "this API takes an API key, not an OAuth signature"})
        key = (self.headers.get("Api-Key") or "").encode("utf-8")
        with self.state.lock:
            known = any(hmac.compare_digest(key, record["secret"].encode("utf-8")) for record in self.state.o1_access.values())
        if not key or not known:
            return self.send_json(403, {"error": "invalid key"})
        return self.send_json(200, OAUTH1_ACCOUNT)

    # -- test controls --

    def handle_stats(self):
        with self.state.lock:
            stats = dict(self.state.stats)
        return self.send_json(200, stats, [("Cache-Control", "no-store")])

    def handle_reset(self):
        self.state.reset()
        return self.send_json(200, {"reset": True})

    def handle_config(self):
        pairs = list(self.query)
        if self.method == "POST":
            try:
                pairs += self.form_params() or []
            except BadRequest as error:
                return self.send_json(400, {"error": str(error)})
        params, _ = self.single_values(pairs)
        updates = {}
        if "token_format" in params:
            if params["token_format"] not in ("json", "form", "wrapped", "prefixed"):
                return self.send_json(400, {"error": "token_format must be json, form, wrapped or prefixed"})
            updates["token_format"] = params["token_format"]
        if "access_token_lifetime" in params:
            if not params["access_token_lifetime"].lstrip("-").isdigit():
                return self.send_json(400, {"error": "access_token_lifetime must be an integer"})
            updates["access_token_lifetime"] = int(params["access_token_lifetime"])
        if "dpop_nonce" in params:
            updates["dpop_nonce"] = params["dpop_nonce"]
        if "client_key_n" in params:
            if not re.fullmatch(r"[0-9A-Fa-f]{256,1024}", params["client_key_n"]):
                return self.send_json(400, {"error": "client_key_n must be an RSA modulus in hex"})
            updates["client_key_n"] = params["client_key_n"]
        if "id_token_alg" in params:
            if params["id_token_alg"] not in ("RS256", "HS256", "HS512"):
                return self.send_json(400, {"error": "id_token_alg must be RS256, HS256 or HS512"})
            updates["id_token_alg"] = params["id_token_alg"]
        if "id_token_fault" in params:
            if params["id_token_fault"] not in ID_TOKEN_FAULTS:
                faults = ", ".join(ID_TOKEN_FAULTS[1:])
                return self.send_json(400, {"error": "id_token_fault must be one of " + faults + ", or empty"})
            updates["id_token_fault"] = params["id_token_fault"]
        for endpoint in ("token", "user"):
            name = endpoint + "_fault"
            if name in params:
                if params[name] not in ENDPOINT_FAULTS:
                    return self.send_json(400, {"error": name + " must be 500, slow, or empty"})
                updates[name] = params[name]
        if "encrypt_to" in params:
            if params["encrypt_to"] and not params["encrypt_to"].startswith("http://127.0.0.1:"):
                return self.send_json(400, {"error": "encrypt_to must be a loopback JWKS URL, or empty"})
            updates["encrypt_to"] = params["encrypt_to"]
            with self.state.lock:
                self.state.client_keys = {}
        if "request_encryption" in params:
            if params["request_encryption"] not in ("", "RSA-OAEP", "RSA-OAEP-256"):
                return self.send_json(400, {"error": "request_encryption must be RSA-OAEP, RSA-OAEP-256 or empty"})
            updates["request_encryption"] = params["request_encryption"]
        if "rotate_refresh_tokens" in params:
            if params["rotate_refresh_tokens"] not in ("true", "false"):
                return self.send_json(400, {"error": "rotate_refresh_tokens must be true or false"})
            updates["rotate_refresh_tokens"] = params["rotate_refresh_tokens"] == "true"
        with self.state.lock:
            self.state.config.update(updates)
            config = dict(self.state.config)
        return self.send_json(200, config, [("Cache-Control", "no-store")])


def make_server(host, port, token_format, issuer_path, verbose=False, tls=None):
    """`tls` is (certificate path, key path) to serve HTTPS instead of HTTP."""
    state = ProviderState(token_format, host, issuer_path)
    server = make_mock_server(host, port, ProviderHandler, state, verbose)
    if tls is not None:
        state.tls = True
        speak_tls(server, tls[0], tls[1], lambda: state.count("tls_refused"))
    return server


# --- Self-test: an independent little client ---------------------------------------------


def client_oauth1_sign(method, url, consumer_secret, token_secret, oauth_params, other_params):
    """Client-side RFC 5849 signing, written apart from the server's verifier."""
    def enc(text):
        return urllib.parse.quote(text, safe="~-._")
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    everything = list(oauth_params.items()) + list(other_params) + query
    normalized = "&".join("%s=%s" % pair for pair in sorted((enc(k), enc(v)) for k, v in everything))
    base_url = "%s://%s%s" % (parts.scheme, parts.netloc.lower(), parts.path)
    text = "%s&%s&%s" % (method, enc(base_url), enc(normalized))
    key = "%s&%s" % (enc(consumer_secret), enc(token_secret))
    return base64.b64encode(hmac.new(key.encode(), text.encode(), hashlib.sha1).digest()).decode()


def client_oauth1_request(method, url, consumer_key, consumer_secret, token="", token_secret="",
                          extra_oauth=None, body=None, tamper=False, nonce=None, timestamp=None, in_body=False):
    oauth = {
        "oauth_consumer_key": consumer_key,
        "oauth_nonce": nonce or secrets.token_hex(12),
        "oauth_signature_method": "HMAC-SHA1",
        "oauth_timestamp": str(timestamp if timestamp is not None else int(time.time())),
        "oauth_version": "1.0",
    }
    if token:
        oauth["oauth_token"] = token
    oauth.update(extra_oauth or {})
    body = list(body or [])
    signature = client_oauth1_sign(method, url, consumer_secret, token_secret, oauth, body)
    if tamper:
        signature = ("A" if signature[0] != "A" else "B") + signature[1:]
    oauth["oauth_signature"] = signature
    if in_body:
        return http(method, url, form=list(oauth.items()) + body)
    header = "OAuth realm=\"mock\", " + ", ".join(
        '%s="%s"' % (urllib.parse.quote(k, safe="~"), urllib.parse.quote(v, safe="~")) for k, v in oauth.items())
    return http(method, url, headers={"Authorization": header}, form=body if method == "POST" else None)


class SelfTest(SelfTestBase):
    # -- known answers --

    def known_answers(self):
        # RFC 5849 section 3.4.1.1 example request and its signature base string.
        params = [("b5", "=%3D"), ("a3", "a"), ("c@", ""), ("a2", "r b")]
        params += [("oauth_consumer_key", "9djdj82h48djs9d2"), ("oauth_token", "kkk9d7dh3k39sjv7"),
                   ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "137131201"),
                   ("oauth_nonce", "7d8f3e4a")]
        params += urllib.parse.parse_qsl("c2&a3=2+q", keep_blank_values=True)
        expected = ("POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D"
                    "%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a"
                    "%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7")
        got = oauth1_base_string("post", oauth1_base_uri("HTTP", "EXAMPLE.com:80", "/request"), params)
        self.check("RFC 5849 3.4.1.1 signature base string", got == expected, got)
        self.check("base URI keeps non-default port, drops default",
                   oauth1_base_uri("http", "Example.COM:8080", "/r") == "http://example.com:8080/r"
                   and oauth1_base_uri("https", "example.com:443", "/") == "https://example.com/")
        self.check("percent-encoding per RFC 5849 3.6",
                   oauth_encode("a b+c~*/é") == "a%20b%2Bc~%2A%2F%C3%A9", oauth_encode("a b+c~*/é"))
        # Twitter's documented "Creating a signature" example, end to end.
        params = [("include_entities", "true"), ("status", "Hello Ladies + Gentlemen, a signed OAuth request!"),
                  ("oauth_consumer_key", "xvz1evFS4wEEPTGEFPHBog"),
                  ("oauth_nonce", "kYjzVBB8Y0ZFabxSWbWovY3uYSQ2pTgmZeNu2VS4cg"),
                  ("oauth_signature_method", "HMAC-SHA1"), ("oauth_timestamp", "1318622958"),
                  ("oauth_token", "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb"), ("oauth_version", "1.0")]
        base_string = oauth1_base_string("POST", "https://api.twitter.com/1.1/statuses/update.json", params)
        signature = oauth1_signature(base_string, "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
                                     "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE")
        self.check("Twitter HMAC-SHA1 example signature", signature == "hCtSmYh+iHYCEqBWrE7C7hYmtUk=", signature)
        self.check("RSA key pair is consistent", pow(pow(0x1234567, RSA_E, RSA_KEY.n), RSA_KEY.d, RSA_KEY.n) == 0x1234567)

    # -- OAuth 2 / OIDC --

    def oauth2(self, base):
        redirect = "http://app.example/cb"
        odd_state = 'st a&b=c/é"<>'

        discovery = http("GET", base + "/.well-known/openid-configuration")
        doc = discovery.json()
        self.check("discovery 200 and issuer", discovery.status == 200 and doc["issuer"] == base, doc.get("issuer"))
        self.check("discovery endpoints", doc["authorization_endpoint"] == base + "/oauth2/authorize"
                   and doc["token_endpoint"] == base + "/oauth2/token" and doc["jwks_uri"] == base + "/oauth2/jwks")
        jwks = http("GET", doc["jwks_uri"]).json()
        key = jwks["keys"][0]
        self.check("JWKS key fields", len(jwks["keys"]) == 1 and key["kty"] == "RSA" and key["kid"] == "mock-rsa-1"
                   and key["use"] == "sig" and key["alg"] == "RS256" and key["e"] == "AQAB", key)
        n = int.from_bytes(client_unb64(key["n"]), "big")
        e = int.from_bytes(client_unb64(key["e"]), "big")
        self.check("JWKS modulus is 2048 bits", n.bit_length() == 2048)

        # Full code flow: PKCE S256 + openid + nonce, client_secret_basic.
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
        authorize = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode({
            "response_type": "code", "client_id": "client-1", "redirect_uri": redirect,
            "scope": "openid email", "state": odd_state, "code_challenge": challenge,
            "code_challenge_method": "S256", "nonce": "n-0S6_WzA2Mj"}))
        location = authorize.headers.get("Location", "")
        parts = urllib.parse.urlsplit(location)
        query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
        self.check("authorize 302 to redirect_uri", authorize.status == 302
                   and location.startswith(redirect + "?code="), location)
        self.check("authorize returns code, state (echoed exactly), then the token host",
                   [name for name, _ in query] == ["code", "state", "hostname", "subdomain", "apicp"] and query[1][1] == odd_state
                   and query[2][1] == urllib.parse.urlsplit(base).netloc, query)
        code = dict(query).get("code", "")

        basic = "Basic " + base64.b64encode(b"client-1:secret-1").decode()
        token = http("POST", base + "/oauth2/token", headers={"Authorization": basic}, form=[
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("code_verifier", verifier)])
        body = token.json() if token.status == 200 else {}
        self.check("token 200 JSON", token.status == 200
                   and token.headers.get("Content-Type", "").startswith("application/json"), token.body)
        self.check("token Cache-Control no-store", token.headers.get("Cache-Control") == "no-store")
        self.check("token fields", list(body)[:5] == ["access_token", "token_type", "expires_in", "refresh_token", "scope"]
                   and body["token_type"] == "bearer" and body["expires_in"] == 3600 and body["scope"] == "openid email"
                   and "id_token" in body, body)

        id_token = body.get("id_token", "..")
        header_b64, claims_b64, signature_b64 = id_token.split(".")
        header = json.loads(client_unb64(header_b64))
        claims = json.loads(client_unb64(claims_b64))
        self.check("id_token header", header == {"alg": "RS256", "kid": "mock-rsa-1", "typ": "JWT"}, header)
        self.check("id_token RS256 signature verifies with the JWKS key",
                   client_rs256_verify((header_b64 + "." + claims_b64).encode(), client_unb64(signature_b64), n, e))
        forged = b64url(json_bytes(dict(claims, sub="666")))
        self.check("altered id_token claims fail verification",
                   not client_rs256_verify((header_b64 + "." + forged).encode(), client_unb64(signature_b64), n, e))
        now = time.time()
        self.check("id_token claims", claims["iss"] == base and claims["sub"] == "12345" and claims["aud"] == "client-1"
                   and claims["nonce"] == "n-0S6_WzA2Mj" and claims["email"] == "octo@example.com"
                   and claims["email_verified"] is True and abs(claims["iat"] - now) < 60
                   and claims["exp"] - claims["iat"] == 600, claims)

        access = body["access_token"]
        user = http("GET", base + "/oauth2/user", headers={"Authorization": "Bearer " + access})
        self.check("user profile", user.status == 200 and user.json() == {
            "id": 12345, "login": "octo", "name": "Octo Cat", "email": "octo@example.com",
            "avatar_url": base + "/a.png"}, user.body)
        info = http("GET", base + "/oauth2/userinfo", headers={"Authorization": "Bearer " + access})
        self.check("OIDC userinfo sub", info.status == 200 and info.json()["sub"] == "12345", info.body)

        # Reusing the code fails and revokes what it produced.
        again = http("POST", base + "/oauth2/token", headers={"Authorization": basic}, form=[
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("code_verifier", verifier)])
        self.check("code reuse -> 400 invalid_grant", again.status == 400 and again.json()["error"] == "invalid_grant",
                   again.body)
        revoked = http("GET", base + "/oauth2/user", headers={"Authorization": "Bearer " + access})
        self.check("code reuse revoked the first access token", revoked.status == 401)
        refresh_after_reuse = http("POST", base + "/oauth2/token", headers={"Authorization": basic}, form=[
            ("grant_type", "refresh_token"), ("refresh_token", body["refresh_token"])])
        self.check("code reuse revoked the refresh token", refresh_after_reuse.status == 400)

        # PKCE failures; a failed attempt does not burn the code.
        def new_code(extra=None, scope="email"):
            params = {"response_type": "code", "client_id": "client-1", "redirect_uri": redirect, "scope": scope}
            params.update(extra or {})
            reply = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode(params))
            return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(reply.headers["Location"]).query))["code"]

        code = new_code({"code_challenge": challenge, "code_challenge_method": "S256"})
        post_auth = [("client_id", "client-1"), ("client_secret", "secret-1")]
        bad = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("code_verifier", "x" * 43)])
        self.check("bad code_verifier -> 400 invalid_grant", bad.status == 400 and bad.json()["error"] == "invalid_grant",
                   bad.body)
        missing = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)])
        self.check("missing code_verifier -> invalid_grant", missing.status == 400
                   and missing.json()["error"] == "invalid_grant")
        wrong_redirect = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect + "/x"),
            ("code_verifier", verifier)])
        self.check("redirect_uri mismatch -> invalid_grant", wrong_redirect.status == 400
                   and wrong_redirect.json()["error"] == "invalid_grant")
        good = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("code_verifier", verifier)])
        self.check("client_secret_post + S256 after failed attempts -> 200, no id_token without openid",
                   good.status == 200 and "id_token" not in good.json(), good.body)

        code = new_code({"code_challenge": "p" * 50, "code_challenge_method": "plain"})
        plain = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("code_verifier", "p" * 50)])
        self.check("PKCE plain", plain.status == 200, plain.body)

        # Client authentication failures.
        code = new_code()
        wrong_secret = http("POST", base + "/oauth2/token",
                            headers={"Authorization": "Basic " + base64.b64encode(b"client-1:nope").decode()},
                            form=[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)])
        self.check("wrong secret -> 401 invalid_client + WWW-Authenticate", wrong_secret.status == 401
                   and wrong_secret.json()["error"] == "invalid_client"
                   and wrong_secret.headers.get("WWW-Authenticate", "").startswith("Basic"), wrong_secret.body)
        unsupported = http("POST", base + "/oauth2/token", form=post_auth + [("grant_type", "password")])
        self.check("unknown grant_type -> unsupported_grant_type", unsupported.status == 400
                   and unsupported.json()["error"] == "unsupported_grant_type")
        # Basic credentials are form-urlencoded before base64 (RFC 6749 2.3.1).
        encoded_basic = "Basic " + base64.b64encode(b"client%2D1:secret%2D1").decode()
        ok = http("POST", base + "/oauth2/token", headers={"Authorization": encoded_basic},
                  form=[("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)])
        self.check("Basic with form-urlencoded id/secret", ok.status == 200, ok.body)

        # Refresh (rotating) and revocation.
        first = ok.json()
        refreshed = http("POST", base + "/oauth2/token", headers={"Authorization": basic}, form=[
            ("grant_type", "refresh_token"), ("refresh_token", first["refresh_token"])])
        second = refreshed.json() if refreshed.status == 200 else {}
        self.check("refresh -> new access token", refreshed.status == 200
                   and second["access_token"] != first["access_token"] and second["token_type"] == "bearer", refreshed.body)
        self.check("refreshed access token works", http("GET", base + "/oauth2/user", headers={
            "Authorization": "Bearer " + second["access_token"]}).status == 200)
        stale = http("POST", base + "/oauth2/token", headers={"Authorization": basic}, form=[
            ("grant_type", "refresh_token"), ("refresh_token", first["refresh_token"])])
        self.check("rotated-out refresh token -> invalid_grant", stale.status == 400
                   and stale.json()["error"] == "invalid_grant")
        revoke = http("POST", base + "/oauth2/revoke", headers={"Authorization": basic}, form=[
            ("token", second["access_token"]), ("token_type_hint", "access_token")])
        self.check("revoke -> 200 empty", revoke.status == 200 and revoke.body == b"")
        after = http("GET", base + "/oauth2/user", headers={"Authorization": "Bearer " + second["access_token"]})
        self.check("revoked token -> 401 Bearer invalid_token", after.status == 401
                   and 'error="invalid_token"' in after.headers.get("WWW-Authenticate", "")
                   and after.json()["error"] == "invalid_token", after.headers)
        missing_token = http("GET", base + "/oauth2/user")
        self.check("missing token -> 401 Bearer challenge", missing_token.status == 401
                   and missing_token.headers.get("WWW-Authenticate", "").startswith("Bearer"))
        http("POST", base + "/oauth2/revoke", form=post_auth + [("token", second["refresh_token"])])
        dead = http("POST", base + "/oauth2/token", headers={"Authorization": basic}, form=[
            ("grant_type", "refresh_token"), ("refresh_token", second["refresh_token"])])
        self.check("revoked refresh token -> invalid_grant", dead.status == 400)

        # Deny, unknown client, missing redirect_uri, form_post.
        deny = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode({
            "response_type": "code", "client_id": "client-1", "redirect_uri": redirect + "?x=1",
            "scope": "openid deny", "state": "s1"}))
        self.check("deny -> access_denied redirect", deny.status == 302 and deny.headers.get("Location") ==
                   redirect + "?x=1&error=access_denied&error_description=The+user+denied+access&state=s1",
                   deny.headers.get("Location"))
        unknown = http("GET", base + "/oauth2/authorize?response_type=code&client_id=nobody&redirect_uri="
                       + urllib.parse.quote(redirect, safe=""))
        self.check("unknown client -> 400 page, no redirect", unknown.status == 400
                   and "Location" not in unknown.headers
                   and unknown.headers.get("Content-Type", "").startswith("text/plain"))
        no_redirect = http("GET", base + "/oauth2/authorize?response_type=code&client_id=client-1")
        self.check("missing redirect_uri -> 400", no_redirect.status == 400 and "Location" not in no_redirect.headers)
        form_post = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode({
            "response_type": "code", "client_id": "client-1", "redirect_uri": redirect + "?a=1&b=2",
            "response_mode": "form_post", "state": odd_state}))
        page = form_post.text
        self.check("form_post -> 200 auto-submitting form, escaped", form_post.status == 200
                   and 'action="http://app.example/cb?a=1&amp;b=2"' in page
                   and 'name="state" value="st a&amp;b=c/é&quot;&lt;&gt;"' in page
                   and 'name="code" value="' in page and "document.forms[0].submit()" in page, page)

        # Form-encoded token responses (GitHub's default), switched at run time.
        switched = http("GET", base + "/_config?token_format=form")
        self.check("/_config switches to form", switched.status == 200 and switched.json()["token_format"] == "form")
        code = new_code(scope="repo,gist")
        form_token = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)])
        fields = urllib.parse.parse_qsl(form_token.text)
        self.check("form token response", form_token.status == 200
                   and form_token.headers.get("Content-Type", "").startswith("application/x-www-form-urlencoded")
                   and [k for k, _ in fields][:3] == ["access_token", "token_type", "scope"]
                   and dict(fields)["token_type"] == "bearer" and "&scope=repo%2Cgist&" in form_token.text,
                   form_token.text)
        form_refresh = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "refresh_token"), ("refresh_token", dict(fields).get("refresh_token", ""))])
        self.check("form refresh response", form_refresh.status == 200 and "access_token" in form_refresh.form())
        form_error = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", "bogus"), ("redirect_uri", redirect)])
        self.check("form error response", form_error.status == 400
                   and form_error.form().get("error") == "invalid_grant", form_error.text)
        http("GET", base + "/_config?token_format=json")

        # RFC 9101 request objects, made here with the client's own HMAC code.
        def request_object(claims, secret=b"secret-1", alg="HS256"):
            signing_input = client_b64(json.dumps({"alg": alg}).encode()) + "." + client_b64(json.dumps(claims).encode())
            digest = hashlib.sha512 if alg == "HS512" else hashlib.sha256
            return signing_input + "." + client_b64(hmac.new(secret, signing_input.encode("ascii"), digest).digest())
        claims = {"iss": "client-1", "client_id": "client-1", "aud": base, "exp": int(time.time()) + 120,
                  "response_type": "code", "redirect_uri": redirect, "state": "from-object", "scope": "openid"}
        outside = {"client_id": "client-1", "response_type": "code", "redirect_uri": redirect + "?ignored=1"}
        signed = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode(dict(outside, request=request_object(claims))))
        landed = urllib.parse.urlsplit(signed.headers.get("Location", ""))
        self.check("request object: its own redirect_uri and state, the outside ones ignored", signed.status == 302
                   and landed.path == "/cb" and "ignored" not in landed.query
                   and dict(urllib.parse.parse_qsl(landed.query)).get("state") == "from-object", signed.headers.get("Location"))
        hs512 = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode(
            dict(outside, request=request_object(claims, alg="HS512"))))
        self.check("request object: HS512 accepted", hs512.status == 302, hs512.body)
        for name, token in [("another secret", request_object(claims, secret=b"wrong")),
                            ("another audience", request_object(dict(claims, aud="https://elsewhere.example"))),
                            ("expired", request_object(dict(claims, exp=int(time.time()) - 1))),
                            ("another client", request_object(dict(claims, client_id="client-2")))]:
            refused = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode(dict(outside, request=token)))
            self.check("request object refused: " + name, refused.status == 400 and "invalid_request_object" in refused.text,
                       refused.text)
        # Encrypted to the key the JWKS publishes once request_encryption is configured.
        http("GET", base + "/_config?request_encryption=RSA-OAEP-256")
        published = [key for key in http("GET", base + "/oauth2/jwks").json()["keys"] if key.get("use") == "enc"]
        self.check("request encryption: the JWKS publishes an enc key", len(published) == 1 and published[0]["kid"] == ENCRYPTION_KID
                   and published[0]["alg"] == "RSA-OAEP-256", published)
        sealed = compact_jwe(request_object(claims).encode("ascii"), RSA_KEY.n, RSA_E, kid=ENCRYPTION_KID)
        opened = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode(dict(outside, request=sealed)))
        self.check("request encryption: an encrypted object is opened and accepted", opened.status == 302, opened.text)
        for name, token in [("plain", request_object(claims)), ("damaged", sealed[:-2] + ("AA" if not sealed.endswith("AA") else "BA"))]:
            refused = http("GET", base + "/oauth2/authorize?" + urllib.parse.urlencode(dict(outside, request=token)))
            self.check("request encryption: refused " + name, refused.status == 400 and "encrypted" in refused.text, refused.text)
        http("GET", base + "/_config?request_encryption=")

        # id_tokens MACed with the client secret (OpenID Connect Core 10.1).
        http("GET", base + "/_config?id_token_alg=HS256")
        maced = http("POST", base + "/oauth2/token", form=post_auth + [
            ("grant_type", "authorization_code"), ("code", new_code(scope="openid")), ("redirect_uri", redirect)])
        http("GET", base + "/_config?id_token_alg=RS256")
        parts = maced.json().get("id_token", "..").split(".")
        expected_mac = hmac.new(b"secret-1", (parts[0] + "." + parts[1]).encode("ascii"), hashlib.sha256).digest()
        self.check("HS256 id_token: header and MAC with the client secret", maced.status == 200
                   and json.loads(client_unb64(parts[0])) == {"alg": "HS256", "typ": "JWT"}
                   and client_unb64(parts[2]) == expected_mac, maced.body)

        self.id_token_faults(base, new_code, post_auth, redirect, n, e)

    def id_token_faults(self, base, new_code, post_auth, redirect, n, e):
        """Each /_config?id_token_fault= spoils its own part of the token and nothing else."""
        def token_with(fault):
            http("GET", base + "/_config?id_token_fault=" + fault)
            code = new_code({"nonce": "n-fault"}, scope="openid")
            reply = http("POST", base + "/oauth2/token", form=post_auth + [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect)])
            parts = reply.json().get("id_token", "..").split(".")
            header, claims = json.loads(client_unb64(parts[0])), json.loads(client_unb64(parts[1]))
            verifies = client_rs256_verify((parts[0] + "." + parts[1]).encode(), client_unb64(parts[2]), n, e)
            return header, claims, verifies

        now = time.time()
        header, claims, verifies = token_with("")
        self.check("no fault: a valid token", verifies and header["kid"] == "mock-rsa-1" and claims["aud"] == "client-1"
                   and claims["exp"] > now and claims["nonce"] == "n-fault", claims)
        header, claims, verifies = token_with("signature")
        self.check("fault signature: only the signature is wrong", not verifies and header["kid"] == "mock-rsa-1"
                   and claims["aud"] == "client-1" and claims["exp"] > now and claims["nonce"] == "n-fault", claims)
        header, claims, verifies = token_with("audience")
        self.check("fault audience: signed, for another client", verifies and claims["aud"] == "another-client"
                   and claims["exp"] > now and claims["nonce"] == "n-fault", claims)
        header, claims, verifies = token_with("expired")
        self.check("fault expired: signed, expired ten minutes ago", verifies and claims["aud"] == "client-1"
                   and claims["exp"] < now - 500 and claims["iat"] < claims["exp"]
                   and claims["nonce"] == "n-fault", claims)
        header, claims, verifies = token_with("nonce")
        self.check("fault nonce: signed, with another nonce", verifies and claims["aud"] == "client-1"
                   and claims["exp"] > now and claims.get("nonce", "n-fault") != "n-fault", claims)
        header, claims, verifies = token_with("kid")
        published = [key["kid"] for key in http("GET", base + "/oauth2/jwks").json()["keys"]]
        self.check("fault kid: signed by the key, named by a kid the JWKS lacks", verifies
                   and header["kid"] not in published and claims["aud"] == "client-1", (header, published))
        bad = http("GET", base + "/_config?id_token_fault=everything")
        cleared = http("GET", base + "/_config?id_token_fault=")
        self.check("id_token_fault: unknown values refused, empty clears", bad.status == 400
                   and cleared.json()["id_token_fault"] == "", bad.body)
        http("GET", base + "/_config?token_fault=500&user_fault=500")
        echoed = http("POST", base + "/oauth2/token", form={"grant_type": "refresh_token", "refresh_token": "rt-echo"})
        profile = http("GET", base + "/oauth2/user", headers={"Authorization": "Bearer at-echo"})
        self.check("token_fault and user_fault 500 echo what was sent", echoed.status == 500
                   and "rt-echo" in echoed.text and profile.status == 500 and "at-echo" in profile.text, echoed.body)
        http("GET", base + "/_config?user_fault=slow&token_fault=")
        began = time.time()
        held = http("GET", base + "/oauth2/user")
        self.check("user_fault slow holds the answer", time.time() - began >= SLOW_SECONDS and held.status == 401,
                   held.status)
        refused = http("GET", base + "/_config?user_fault=404")
        cleared = http("GET", base + "/_config?user_fault=")
        self.check("endpoint faults: unknown values refused, empty clears", refused.status == 400
                   and cleared.json()["user_fault"] == "", refused.body)

    # -- OAuth 1.0a --

    def oauth1(self, base):
        callback = "http://app.example/o1/cb?from=mock"
        request = client_oauth1_request("POST", base + "/oauth1/request_token", "ck-1", "cs-1",
                                        extra_oauth={"oauth_callback": callback})
        reply = request.form()
        self.check("request_token 200", request.status == 200 and reply.get("oauth_callback_confirmed") == "true"
                   and list(reply) == ["oauth_token", "oauth_token_secret", "oauth_callback_confirmed"], request.text)
        token, token_secret = reply["oauth_token"], reply["oauth_token_secret"]

        authorize = http("GET", base + "/oauth1/authorize?oauth_token=" + urllib.parse.quote(token))
        location = authorize.headers.get("Location", "")
        query = urllib.parse.parse_qsl(urllib.parse.urlsplit(location).query)
        self.check("authorize 302 to callback with token and verifier", authorize.status == 302
                   and location.startswith(callback + "&oauth_token=")
                   and [k for k, _ in query] == ["from", "oauth_token", "oauth_verifier"]
                   and dict(query)["oauth_token"] == token, location)
        verifier = dict(query).get("oauth_verifier", "")
        self.check("authorize unknown token -> 400",
                   http("GET", base + "/oauth1/authorize?oauth_token=nope").status == 400)

        wrong = client_oauth1_request("POST", base + "/oauth1/access_token", "ck-1", "cs-1", token, token_secret,
                                      extra_oauth={"oauth_verifier": "wrong"})
        self.check("wrong verifier -> 401", wrong.status == 401 and wrong.form().get("oauth_problem") == "verifier_invalid",
                   wrong.text)
        access = client_oauth1_request("POST", base + "/oauth1/access_token", "ck-1", "cs-1", token, token_secret,
                                       extra_oauth={"oauth_verifier": verifier})
        granted = access.form()
        self.check("access_token 200", access.status == 200 and granted.get("user_id") == "42"
                   and granted.get("screen_name") == "octo"
                   and list(granted) == ["oauth_token", "oauth_token_secret", "user_id", "screen_name"], access.text)
        reuse = client_oauth1_request("POST", base + "/oauth1/access_token", "ck-1", "cs-1", token, token_secret,
                                      extra_oauth={"oauth_verifier": verifier})
        self.check("request token is single use", reuse.status == 401 and reuse.form().get("oauth_problem") == "token_used",
                   reuse.text)

        account_url = base + "/oauth1/account?include_email=true&x=a%20b%2B"
        account = client_oauth1_request("GET", account_url, "ck-1", "cs-1",
                                        granted["oauth_token"], granted["oauth_token_secret"])
        self.check("account JSON", account.status == 200
                   and account.json() == {"id": 42, "screen_name": "octo", "name": "Octo One"}, account.body)

        tampered = client_oauth1_request("GET", account_url, "ck-1", "cs-1",
                                         granted["oauth_token"], granted["oauth_token_secret"], tamper=True)
        self.check("tampered signature -> 401 signature_invalid", tampered.status == 401
                   and tampered.text == "oauth_problem=signature_invalid"
                   and tampered.headers.get("WWW-Authenticate", "").startswith("OAuth realm="), tampered.text)
        wrong_secret = client_oauth1_request("GET", account_url, "ck-1", "cs-1",
                                             granted["oauth_token"], "not-the-secret")
        self.check("wrong token secret -> signature_invalid", wrong_secret.status == 401)
        nonce = secrets.token_hex(8)
        client_oauth1_request("GET", account_url, "ck-1", "cs-1", granted["oauth_token"],
                              granted["oauth_token_secret"], nonce=nonce)
        replay = client_oauth1_request("GET", account_url, "ck-1", "cs-1", granted["oauth_token"],
                                       granted["oauth_token_secret"], nonce=nonce)
        self.check("reused nonce -> 401 nonce_used", replay.status == 401
                   and replay.form().get("oauth_problem") == "nonce_used", replay.text)
        old = client_oauth1_request("GET", account_url, "ck-1", "cs-1", granted["oauth_token"],
                                    granted["oauth_token_secret"], timestamp=int(time.time()) - 700)
        self.check("stale timestamp -> 401 timestamp_refused", old.status == 401
                   and old.form().get("oauth_problem") == "timestamp_refused", old.text)
        unknown = client_oauth1_request("POST", base + "/oauth1/request_token", "ck-2", "cs-1",
                                        extra_oauth={"oauth_callback": callback})
        self.check("unknown consumer -> 401", unknown.status == 401)
        in_body = client_oauth1_request("POST", base + "/oauth1/request_token", "ck-1", "cs-1",
                                        extra_oauth={"oauth_callback": "oob"}, body=[("x_auth_mode", "a b")],
                                        in_body=True)
        self.check("parameters in the form body", in_body.status == 200, in_body.text)
        no_callback = client_oauth1_request("POST", base + "/oauth1/request_token", "ck-1", "cs-1")
        self.check("missing oauth_callback -> 400 parameter_absent", no_callback.status == 400
                   and no_callback.form().get("oauth_problem") == "parameter_absent", no_callback.text)

    def stats(self, base):
        stats = http("GET", base + "/_stats").json()
        self.check("stats counted", stats["authorize"] >= 8 and stats["token"] >= 10 and stats["refresh"] >= 3
                   and stats["revoke"] == 2 and stats["oauth1"] >= 10 and stats["oauth1_account"] >= 4, stats)
        reset = http("POST", base + "/_reset")
        zero = http("GET", base + "/_stats").json()
        self.check("reset zeroes stats", reset.status == 200 and set(zero.values()) == {0}
                   and set(zero) == set(STAT_KEYS), zero)

    def tls(self):
        """With --tls-cert, HTTPS only: a client trusting the certificate is answered, one that
        refuses it is counted in tls_refused and no request of its reaches a handler."""
        with tempfile.TemporaryDirectory() as directory:
            cert, key = os.path.join(directory, "cert.pem"), os.path.join(directory, "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                            "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                            "-keyout", key, "-out", cert], check=True, capture_output=True)
            server = make_server("127.0.0.1", 0, "json", "", tls=(cert, key))
            base = server.state.base_url
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True).start()
            try:
                trusting = ssl.create_default_context(cafile=cert)
                with urllib.request.urlopen(base + "/_stats", context=trusting, timeout=30) as reply:
                    before = json.loads(reply.read())
                try:
                    untrusting = ssl.create_default_context()
                    urllib.request.urlopen(base + "/oauth2/token", data=b"code=x", context=untrusting, timeout=30)
                    refused = False
                except urllib.error.URLError as error:
                    refused = isinstance(error.reason, ssl.SSLCertVerificationError)
                with urllib.request.urlopen(base + "/_stats", context=trusting, timeout=30) as reply:
                    after = json.loads(reply.read())
                self.check("tls: https base URL and issuer", base.startswith("https://127.0.0.1:"), base)
                self.check("tls: an untrusting client is refused before any request", refused
                           and before["tls_refused"] == 0 and after["tls_refused"] == 1 and after["token"] == 0, after)
            finally:
                server.shutdown()
                server.server_close()

    def subprocess_protocol(self):
        self.child_protocol(__file__, "/.well-known/openid-configuration", ("SIGTERM",))

    def run(self):
        server = make_server("127.0.0.1", 0, "json", "")
        base = server.state.base_url
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        thread.start()
        try:
            self.section("known answers", self.known_answers)
            self.section("oauth2", lambda: self.oauth2(base))
            self.section("oauth1", lambda: self.oauth1(base))
            self.section("stats", lambda: self.stats(base))
            self.section("tls", self.tls)
            self.section("subprocess", self.subprocess_protocol)
        finally:
            server.shutdown()
            server.server_close()
        print("%d passed, %d failed" % (self.passes, self.failures))
        return 0 if self.failures == 0 else 1


# --- Entry point ------------------------------------------------------------------------


def add_provider_options(parser):
    parser.add_argument("--token-format", choices=("json", "form"), default="json")
    parser.add_argument("--issuer-path", default="", help="path appended to the issuer URL, e.g. /tenant")
    parser.add_argument("--tls-cert", help="PEM certificate: serve HTTPS (needs --tls-key)")
    parser.add_argument("--tls-key", help="PEM private key of --tls-cert")


def main(argv):
    args = parse_arguments(argv, "Mock OAuth 2.0/OIDC + OAuth 1.0a provider for tests.", add_provider_options)
    if args.selftest:
        return SelfTest().run()
    issuer_path = args.issuer_path.strip()
    if issuer_path:
        issuer_path = "/" + issuer_path.strip("/")
    if (args.tls_cert is None) != (args.tls_key is None):
        sys.stderr.write("--tls-cert and --tls-key go together\n")
        return 2
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    return serve(lambda: make_server(args.host, args.port, args.token_format, issuer_path, args.verbose, tls),
                 args.exit_on_stdin_eof)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
