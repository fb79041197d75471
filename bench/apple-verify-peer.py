"""Python peers for bench/apple-verify: the verification half of
`POST /auth/apple/native` (backend mode), done with PyJWT or joserfc.

Per request it does what Gatehouse does for a verification-only call:
parse the JSON body, check the app's key and secret (constant time), pick
the JWKS key by the token's `kid`, verify the RS256 signature, check `iss`,
`aud` (one of the allowed client ids), `exp`/`iat` with 60 s leeway and a
non-empty `sub`, and answer `{"id_token", "user": {"id", "email",
"email_verified", "raw"}, "provider": "apple"}`. Failures are 400/401 JSON,
so wrk's non-2xx count catches them. Gatehouse additionally looks up a
remembered first-login name in its store; the peers have no store.

The JWKS is fetched once per worker at import and the key objects are kept.

Configuration comes from the environment, so any WSGI or ASGI server can load
the module (`app` is WSGI, `asgi_app` is ASGI):

  PEER_LIB        pyjwt | joserfc
  PEER_ISSUER     expected iss, e.g. http://127.0.0.1:PORT
  PEER_JWKS_URL   JWKS to fetch at start
  PEER_AUDIENCES  comma-separated allowed aud values
  PEER_APP_KEY, PEER_APP_SECRET   the credentials requests must carry

`python3 apple-verify-peer.py --check TOKEN` verifies one token with the
configured library and prints the answer (used as a sanity check).
"""

import base64
import hmac
import json
import os
import sys
import urllib.request

LIB = os.environ.get("PEER_LIB", "pyjwt")
ISSUER = os.environ.get("PEER_ISSUER", "")
JWKS_URL = os.environ.get("PEER_JWKS_URL", "")
AUDIENCES = [a for a in os.environ.get("PEER_AUDIENCES", "").split(",") if a]
APP_KEY = os.environ.get("PEER_APP_KEY", "")
APP_SECRET = os.environ.get("PEER_APP_SECRET", "")
LEEWAY = 60


class Refused(Exception):
    def __init__(self, status, error, description):
        super().__init__(description)
        self.status = status
        self.error = error
        self.description = description


def fetch_jwks():
    # Loopback only: the mock's JWKS. No proxy, whatever the environment says.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(JWKS_URL, timeout=10) as reply:
        return json.loads(reply.read())


def token_kid(token):
    """The `kid` of a compact JWS's header, read without PyJWT: its
    get_unverified_header decodes the whole token and costs about half as
    much again as the verification itself."""
    encoded = token.split(".", 1)[0]
    try:
        header = json.loads(base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
    except ValueError:
        raise Refused(401, "invalid_token", "malformed header") from None
    return header.get("kid") if isinstance(header, dict) else None


def make_pyjwt_verifier(jwks):
    import jwt

    # The cryptography key objects, not PyJWK wrappers: slightly faster.
    keys = {}
    for jwk in jwks["keys"]:
        if jwk.get("kty") == "RSA" and jwk.get("kid"):
            keys[jwk["kid"]] = jwt.PyJWK(jwk, algorithm="RS256").key
    decoder = jwt.PyJWT(options={"require": ["iss", "aud", "exp", "iat", "sub"]})

    def verify(token):
        key = keys.get(token_kid(token))
        if key is None:
            raise Refused(401, "invalid_token", "unknown kid")
        try:
            return decoder.decode(
                token, key, algorithms=["RS256"], audience=AUDIENCES, issuer=ISSUER, leeway=LEEWAY
            )
        except jwt.PyJWTError as error:
            raise Refused(401, "invalid_token", str(error)) from None

    return verify


def make_joserfc_verifier(jwks):
    from joserfc import jwt
    from joserfc.errors import JoseError
    from joserfc.jwk import KeySet

    keyset = KeySet.import_key_set(jwks)
    registry = jwt.JWTClaimsRegistry(
        leeway=LEEWAY,
        iss={"essential": True, "value": ISSUER},
        aud={"essential": True, "values": AUDIENCES},
        exp={"essential": True},
        iat={"essential": True},
        sub={"essential": True},
    )

    def verify(token):
        try:
            decoded = jwt.decode(token, keyset, algorithms=["RS256"])
            registry.validate(decoded.claims)
            return decoded.claims
        except (JoseError, ValueError) as error:
            raise Refused(401, "invalid_token", str(error) or type(error).__name__) from None

    return verify


if LIB == "pyjwt":
    _verify = make_pyjwt_verifier(fetch_jwks()) if JWKS_URL else None
elif LIB == "joserfc":
    _verify = make_joserfc_verifier(fetch_jwks()) if JWKS_URL else None
else:
    raise SystemExit(f"PEER_LIB must be pyjwt or joserfc, not {LIB!r}")


def handle(body):
    """Returns (status, JSON bytes) for one request body."""
    try:
        try:
            fields = json.loads(body)
        except ValueError:
            raise Refused(400, "invalid_request", "the body is not JSON") from None
        if not isinstance(fields, dict):
            raise Refused(400, "invalid_request", "the body is not a JSON object")
        key, secret = fields.get("key"), fields.get("secret")
        if not isinstance(key, str) or not isinstance(secret, str):
            raise Refused(400, "invalid_request", "send key and secret")
        if not (hmac.compare_digest(key.encode(), APP_KEY.encode())
                and hmac.compare_digest(secret.encode(), APP_SECRET.encode())):
            raise Refused(401, "invalid_client", "invalid credentials")
        token = fields.get("identity_token")
        if not isinstance(token, str):
            raise Refused(400, "invalid_request", "identity_token is required")
        claims = _verify(token)
        if not claims.get("sub"):
            raise Refused(401, "invalid_token", "no subject")
        user = {"id": claims["sub"]}
        email = claims.get("email")
        if email:
            user["email"] = email
            verified = claims.get("email_verified")
            user["email_verified"] = verified is True or verified == "true"
        user["raw"] = claims
        answer = {"id_token": token, "user": user, "provider": "apple"}
        return 200, json.dumps(answer, separators=(",", ":")).encode()
    except Refused as refused:
        problem = {"error": refused.error, "error_description": refused.description}
        return refused.status, json.dumps(problem).encode()


_REASONS = {200: "200 OK", 400: "400 Bad Request", 401: "401 Unauthorized", 404: "404 Not Found"}


def app(environ, start_response):
    """WSGI: POST /auth/apple/native, plus GET /healthz for readiness probes."""
    path = environ.get("PATH_INFO", "")
    if path == "/healthz":
        status, payload = 200, b'{"status":"ok"}'
    elif path == "/auth/apple/native" and environ.get("REQUEST_METHOD") == "POST":
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        status, payload = handle(environ["wsgi.input"].read(length) if length > 0 else b"")
    else:
        status, payload = 404, b'{"error":"not_found"}'
    start_response(_REASONS[status], [
        ("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
    return [payload]


async def asgi_app(scope, receive, send):
    """ASGI twin of `app`, for uvicorn."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    path = scope["path"]
    if path == "/healthz":
        status, payload = 200, b'{"status":"ok"}'
    elif path == "/auth/apple/native" and scope["method"] == "POST":
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        status, payload = handle(b"".join(chunks))
    else:
        status, payload = 404, b'{"error":"not_found"}'
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--check":
        body = json.dumps({"key": APP_KEY, "secret": APP_SECRET, "identity_token": sys.argv[2]})
        status, payload = handle(body.encode())
        print(status, payload.decode())
        sys.exit(0 if status == 200 else 1)
    sys.exit(__doc__)
