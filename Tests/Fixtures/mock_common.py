"""What the loopback mock servers in this directory (mock_provider.py, mock_apple.py) share:
RS256 signing, base64url and JSON encoding, the HTTP server and request plumbing, the
command line and serving loop, and the pieces of their self-tests' independent client.

Not run on its own. Each mock imports it from its own directory, so a mock still runs as
`python3 path/to/mock_x.py` from any working directory. Python 3 standard library only.
"""

import argparse
import base64
import hashlib
import hmac
import html
import ipaddress
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import traceback
import urllib.error
import urllib.parse
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 1 << 20
NO_STORE = (("Cache-Control", "no-store"), ("Pragma", "no-cache"))

# --- Encoding and signing -----------------------------------------------------------------


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def json_bytes(value, ensure_ascii=True):
    """Compact JSON. Apple sends non-ASCII as UTF-8 (ensure_ascii=False); the provider escapes it."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=ensure_ascii).encode("utf-8")


def append_query(uri, pairs):
    separator = "" if uri.endswith(("?", "&")) else ("&" if "?" in uri else "?")
    return uri + separator + urllib.parse.urlencode(pairs)


RSA_E = 65537
# DER prefix of DigestInfo{ sha256, NULL params } (RFC 8017 section 9.2, note 1).
SHA256_DIGEST_INFO_PREFIX = bytes.fromhex("3031300d060960864801650304020105000420")


class RsaKey:
    """A fixed RSA test key with public exponent 65537, given as hex chunks of n and d."""

    def __init__(self, kid, n_hex, d_hex):
        self.kid = kid
        self.n = int("".join(n_hex), 16)
        self.d = int("".join(d_hex), 16)
        self.size = (self.n.bit_length() + 7) // 8

    def sign(self, message):
        """RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017 section 8.2.1), textbook: EM^d mod n."""
        t = SHA256_DIGEST_INFO_PREFIX + hashlib.sha256(message).digest()
        em = b"\x00\x01" + b"\xff" * (self.size - len(t) - 3) + b"\x00" + t
        return pow(int.from_bytes(em, "big"), self.d, self.n).to_bytes(self.size, "big")

    def jwk(self):
        # Apple's member order, which the provider's JWKS shares: kty, kid, use, alg, n, e.
        return {"kty": "RSA", "kid": self.kid, "use": "sig", "alg": "RS256",
                "n": b64url(self.n.to_bytes(self.size, "big")), "e": "AQAB"}


def compact_jws(header, claims, key, ensure_ascii=True):
    """header.claims.signature, each base64url; members stay in the dicts' order because tests
    compare bytes. `key` None leaves the signature empty (alg none)."""
    signing_input = b64url(json_bytes(header, ensure_ascii)) + "." + b64url(json_bytes(claims, ensure_ascii))
    signature = "" if key is None else b64url(key.sign(signing_input.encode("ascii")))
    return signing_input + "." + signature


# --- HTTP ---------------------------------------------------------------------------------


def mgf1(seed, length, digest=hashlib.sha256):
    """RFC 8017 B.2.1."""
    out = b""
    for counter in range((length + digest().digest_size - 1) // digest().digest_size):
        out += digest(seed + counter.to_bytes(4, "big")).digest()
    return out[:length]


def rsa_oaep256_encrypt(message, n, e):
    """RFC 8017 7.1.1 RSAES-OAEP-ENCRYPT with SHA-256 and MGF1-SHA-256, empty label."""
    k = (n.bit_length() + 7) // 8
    h_len = 32
    if len(message) > k - 2 * h_len - 2:
        raise ValueError("message too long")
    block = hashlib.sha256(b"").digest() + b"\x00" * (k - len(message) - 2 * h_len - 2) + b"\x01" + message
    seed = os.urandom(h_len)
    masked_block = bytes(a ^ b for a, b in zip(block, mgf1(seed, k - h_len - 1)))
    masked_seed = bytes(a ^ b for a, b in zip(seed, mgf1(masked_block, h_len)))
    return pow(int.from_bytes(b"\x00" + masked_seed + masked_block, "big"), e, n).to_bytes(k, "big")


def rsa_oaep_decrypt(ciphertext, key, digest):
    """RFC 8017 7.1.2 RSAES-OAEP-DECRYPT with `digest` for the hash and MGF1, empty label;
    raises ValueError on any decoding error."""
    h_len, k = digest().digest_size, key.size
    if len(ciphertext) != k:
        raise ValueError("wrong ciphertext length")
    encoded = pow(int.from_bytes(ciphertext, "big"), key.d, key.n).to_bytes(k, "big")
    masked_seed, masked_block = encoded[1:1 + h_len], encoded[1 + h_len:]
    seed = bytes(a ^ b for a, b in zip(masked_seed, mgf1(masked_block, h_len, digest)))
    block = bytes(a ^ b for a, b in zip(masked_block, mgf1(seed, k - h_len - 1, digest)))
    rest = block[h_len:].lstrip(b"\x00")
    if encoded[0] != 0 or block[:h_len] != digest(b"").digest() or rest[:1] != b"\x01":
        raise ValueError("decryption error")
    return rest[1:]


def open_compact_jwe(token, key):
    """The (header, plaintext) of a compact JWE to `key`: RSA-OAEP or RSA-OAEP-256 key
    transport, A128CBC-HS256 or A256CBC-HS512 content (AES-CBC from the openssl command line;
    the standard library has no AES-GCM, so the GCM encodings are refused). Raises ValueError."""
    parts = token.split(".")
    if len(parts) != 5:
        raise ValueError("a compact JWE has five parts")
    header = json.loads(client_unb64(parts[0]))
    digests = {"RSA-OAEP": hashlib.sha1, "RSA-OAEP-256": hashlib.sha256}
    contents = {"A128CBC-HS256": ("aes-128-cbc", hashlib.sha256), "A256CBC-HS512": ("aes-256-cbc", hashlib.sha512)}
    if not isinstance(header, dict) or header.get("alg") not in digests or header.get("enc") not in contents:
        raise ValueError("unsupported JWE algorithms")
    cipher, mac_digest = contents[header["enc"]]
    content_key = rsa_oaep_decrypt(client_unb64(parts[1]), key, digests[header["alg"]])
    half = len(content_key) // 2
    iv, ciphertext, tag = client_unb64(parts[2]), client_unb64(parts[3]), client_unb64(parts[4])
    aad = parts[0].encode("ascii")
    mac = hmac.new(content_key[:half], aad + iv + ciphertext + (len(aad) * 8).to_bytes(8, "big"), mac_digest).digest()[:half]
    if half not in (16, 32) or len(iv) != 16 or not hmac.compare_digest(mac, tag):
        raise ValueError("the JWE does not authenticate")
    plaintext = subprocess.run(["openssl", "enc", "-d", "-" + cipher, "-K", content_key[half:].hex(), "-iv", iv.hex()],
                               input=ciphertext, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=True).stdout
    return header, plaintext


def compact_jwe(plaintext, n, e, kid=None):
    """RFC 7516 compact JWE: RSA-OAEP-256 key transport, A128CBC-HS256 content (RFC 7518
    5.2.3). AES-CBC comes from the openssl command line, the standard library having none."""
    header = {"alg": "RSA-OAEP-256", "enc": "A128CBC-HS256", "cty": "JWT"}
    if kid:
        header["kid"] = kid
    protected = b64url(json_bytes(header))
    key, iv = os.urandom(32), os.urandom(16)
    ciphertext = subprocess.run(
        ["openssl", "enc", "-aes-128-cbc", "-K", key[16:].hex(), "-iv", iv.hex()],
        input=plaintext, stdout=subprocess.PIPE, check=True).stdout
    aad = protected.encode("ascii")
    tag = hmac.new(key[:16], aad + iv + ciphertext + (len(aad) * 8).to_bytes(8, "big"), hashlib.sha256).digest()[:16]
    return ".".join([protected, b64url(rsa_oaep256_encrypt(key, n, e)), b64url(iv), b64url(ciphertext), b64url(tag)])


class MockState:
    """What every mock's state starts from. Subclasses keep everything they remember here,
    with `stats` counters, and every access goes through `lock`."""

    def __init__(self, host):
        self.lock = threading.RLock()
        self.host = host
        self.port = 0

    @property
    def base_url(self):
        host = "[" + self.host + "]" if ":" in self.host else self.host
        return "http://%s:%d" % (host, self.port)

    def count(self, *keys):
        with self.lock:
            for key in keys:
                self.stats[key] += 1


class BadRequest(Exception):
    pass


class MockServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False   # idle keep-alive connections must not delay shutdown
    request_queue_size = 128

    def __init__(self, address, handler, state, verbose):
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.state = state
        self.verbose = verbose
        super().__init__(address, handler)


def speak_tls(server, certificate, key, refused):
    """Makes `server` answer HTTPS with the PEM `certificate` and `key`. Each handshake runs in
    its connection's own thread, so one stalled client cannot hold up the accepting loop; a
    handshake that fails (a client refusing the certificate) calls `refused` and ends the
    connection before any request is read."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)
    plain = server.finish_request

    def finish_request(request, client_address):
        request.settimeout(10)
        try:
            secured = context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError):
            refused()
            return
        try:
            plain(secured, client_address)
        finally:
            secured.close()

    server.finish_request = finish_request


def make_mock_server(host, port, handler, state, verbose):
    server = MockServer((host, port), handler, state, verbose)
    state.port = server.server_address[1]  # port 0 asks the kernel; URLs need the real one
    return server


class MockHandler(BaseHTTPRequestHandler):
    """Routing, body reading and response writing. Subclasses set `ROUTES` (path -> (method
    name, allowed methods)), `server_version` and `log_name`."""

    protocol_version = "HTTP/1.1"
    sys_version = ""
    timeout = 30
    ROUTES = {}
    log_name = "mock"
    json_content_type = "application/json; charset=utf-8"
    json_ascii = True

    # -- plumbing --

    def version_string(self):
        return self.server_version

    def log_message(self, format, *args):
        if self.server.verbose:
            sys.stderr.write("%s: %s - %s\n" % (self.log_name, self.address_string(), format % args))

    def debug(self, text):
        if self.server.verbose:
            sys.stderr.write(self.log_name + ": " + text + "\n")

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_DELETE(self):
        self.dispatch("DELETE")

    @property
    def state(self):
        return self.server.state

    def find_route(self, path):
        return self.ROUTES.get(path)

    def dispatch(self, method):
        try:
            self.method = method
            split = urllib.parse.urlsplit(self.path)
            self.req_path = split.path or "/"
            self.query = urllib.parse.parse_qsl(split.query, keep_blank_values=True)
            try:
                self.body = self.read_body()
            except (ValueError, OSError) as error:
                self.close_connection = True
                return self.send_text(400, "Bad request body: %s\n" % error)
            route = self.find_route(self.req_path)
            if route is None:
                return self.send_text(404, "Not Found\n")
            name, methods = route
            if method not in methods:
                return self.send_text(405, "Method Not Allowed\n", [("Allow", ", ".join(methods))])
            getattr(self, name)()
        except Exception:  # noqa: BLE001 - a mock must answer, and say why on stderr
            traceback.print_exc(file=sys.stderr)
            self.close_connection = True
            try:
                self.send_text(500, "Internal Server Error\n")
            except OSError:
                pass

    def read_body(self):
        if (self.headers.get("Transfer-Encoding") or "").lower() == "chunked":
            body = b""
            while True:
                size = int(self.rfile.readline(1024).split(b";")[0].strip(), 16)
                if size == 0:
                    while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                        pass
                    return body
                body += self.rfile.read(size)
                self.rfile.readline(1024)
                if len(body) > MAX_BODY:
                    raise ValueError("body too large")
        length = self.headers.get("Content-Length")
        if length is None:
            return b""
        length = int(length)
        if length < 0 or length > MAX_BODY:
            raise ValueError("bad Content-Length")
        return self.rfile.read(length)

    def form_params(self):
        """The body as (name, value) pairs when it is form-urlencoded, else None."""
        content_type = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/x-www-form-urlencoded":
            return None
        try:
            text = self.body.decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest("body is not UTF-8")
        return urllib.parse.parse_qsl(text, keep_blank_values=True)

    def send(self, status, body=b"", content_type=None, headers=()):
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def send_text(self, status, text, headers=()):
        self.send(status, text.encode("utf-8"), "text/plain; charset=utf-8", headers)

    def send_json(self, status, value, headers=()):
        self.send(status, json_bytes(value, self.json_ascii), self.json_content_type, headers)

    @staticmethod
    def single_values(pairs):
        """{name: value} and the set of names that occur more than once (RFC 6749 section 3.1)."""
        values, duplicates = {}, set()
        for name, value in pairs:
            if name in values:
                duplicates.add(name)
            else:
                values[name] = value
        return values, duplicates

    def respond_to_client(self, redirect_uri, response_mode, pairs):
        """The authorization response: a 302 (query or fragment) or a form_post page."""
        pairs = [(name, value) for name, value in pairs if value is not None]
        if response_mode == "form_post":
            inputs = "".join(
                '<input type="hidden" name="%s" value="%s"/>\n' % (html.escape(name, quote=True), html.escape(value, quote=True))
                for name, value in pairs
            )
            page = (
                "<!DOCTYPE html>\n<html>\n<head><title>Submit This Form</title></head>\n"
                '<body onload="javascript:document.forms[0].submit()">\n'
                '<form method="post" action="%s">\n%s'
                '<noscript><button type="submit">Continue</button></noscript>\n'
                "</form>\n</body>\n</html>\n"
            ) % (html.escape(redirect_uri, quote=True), inputs)
            return self.send(200, page.encode("utf-8"), "text/html; charset=utf-8", NO_STORE)
        if response_mode == "fragment":
            location = redirect_uri + "#" + urllib.parse.urlencode(pairs)
        else:
            location = append_query(redirect_uri, pairs)
        return self.send(302, b"", None, [("Location", location)] + list(NO_STORE))


# --- Entry point --------------------------------------------------------------------------


def parse_arguments(argv, description, add_options=None):
    """The options every mock takes, with `add_options(parser)` for its own in between.
    Outside --selftest, --host must be loopback: a mock must never be reachable from elsewhere."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port (default 0: any free port)")
    if add_options is not None:
        add_options(parser)
    parser.add_argument("--exit-on-stdin-eof", action="store_true",
                        help="also exit when stdin closes (the launching test process died)")
    parser.add_argument("--verbose", action="store_true", help="log requests to stderr")
    parser.add_argument("--selftest", action="store_true", help="run the built-in client against a fresh server")
    args = parser.parse_args(argv)
    if not args.selftest:
        args.host = "127.0.0.1" if args.host == "localhost" else args.host
        try:
            loopback = ipaddress.ip_address(args.host).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            parser.error("--host must be a loopback address")
    return args


def serve(make_server, exit_on_stdin_eof):
    """Prints "PORT <n>" as the only stdout line, then serves until SIGTERM or SIGINT (or
    stdin EOF); returns the exit status, 0."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda signum, frame: stop.set())
    signal.signal(signal.SIGINT, lambda signum, frame: stop.set())

    server = make_server()
    # A short poll interval keeps SIGTERM-to-exit near 50 ms; test teardown waits for it.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    sys.stdout.write("PORT %d\n" % server.state.port)
    sys.stdout.flush()

    if exit_on_stdin_eof:
        def watch_stdin():
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            except OSError:
                pass
            stop.set()
        threading.Thread(target=watch_stdin, daemon=True).start()

    while not stop.wait(1.0):
        pass
    server.shutdown()
    server.server_close()
    return 0


# --- Self-test: an independent little client ---------------------------------------------
# Written apart from the server code above, so a shared mistake cannot pass both sides.


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


# Never through a proxy: everything the mocks talk to is on loopback.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect)


class Response:
    def __init__(self, status, headers, body):
        self.status, self.headers, self.body = status, headers, body

    @property
    def text(self):
        return self.body.decode("utf-8")

    def json(self):
        return json.loads(self.body)

    def form(self):
        return dict(urllib.parse.parse_qsl(self.text, keep_blank_values=True))


def http(method, url, form=None, json_body=None, headers=None):
    data = None
    headers = dict(headers or {})
    if form is not None:
        data = urllib.parse.urlencode(form).encode("ascii")
        headers.setdefault("Content-Type", "application/x-www-form-urlencoded")
    elif json_body is not None:
        data = json.dumps(json_body).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    elif method == "POST":
        data = b""
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    try:
        with OPENER.open(request, timeout=30) as reply:
            return Response(reply.status, reply.headers, reply.read())
    except urllib.error.HTTPError as error:
        return Response(error.code, error.headers, error.read())


def client_b64(data):
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def client_unb64(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def client_rs256_verify(signing_input, signature, n, e):
    """Independent PKCS#1 v1.5 check: s^e mod n must be exactly 00 01 FF.. 00 DigestInfo(sha256)."""
    k = (n.bit_length() + 7) // 8
    if len(signature) != k:
        return False
    em = pow(int.from_bytes(signature, "big"), e, n).to_bytes(k, "big")
    digest_info = bytes([0x30, 0x31, 0x30, 0x0D, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01,
                         0x05, 0x00, 0x04, 0x20]) + hashlib.sha256(signing_input).digest()
    padding = em[2:k - len(digest_info) - 1]
    return (em[:2] == b"\x00\x01" and set(padding) == {0xFF} and len(padding) >= 8
            and em[k - len(digest_info) - 1] == 0 and em[k - len(digest_info):] == digest_info)


class SelfTestBase:
    def __init__(self):
        self.failures = 0
        self.passes = 0

    def check(self, name, condition, detail=""):
        if condition:
            self.passes += 1
            print("ok   " + name)
        else:
            self.failures += 1
            print("FAIL " + name + ((" -- " + str(detail)) if detail != "" else ""))
        return condition

    def section(self, name, function):
        try:
            function()
        except Exception:  # noqa: BLE001
            self.failures += 1
            print("FAIL %s raised:\n%s" % (name, traceback.format_exc()))

    def child_protocol(self, script, probe_path, stop_by):
        """Runs `script` as the Swift launchers do and checks the PORT line and a clean exit 0
        for each way of stopping it in `stop_by` ("SIGTERM", "stdin EOF")."""
        for how in stop_by:
            arguments = [sys.executable, script, "--port", "0"]
            if how == "stdin EOF":
                arguments.append("--exit-on-stdin-eof")
            child = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.PIPE)
            try:
                line = child.stdout.readline().decode()
                self.check("child prints 'PORT <n>'", re.fullmatch(r"PORT [1-9][0-9]*\n", line) is not None, line)
                port = int(line.split()[1])
                probe = http("GET", "http://127.0.0.1:%d%s" % (port, probe_path))
                self.check("child serves", probe.status == 200)
                if how == "SIGTERM":
                    child.send_signal(signal.SIGTERM)
                else:
                    child.stdin.close()
                status = child.wait(timeout=10)
                rest = child.stdout.read()
                self.check("%s -> exit 0, nothing more on stdout" % how, status == 0 and rest == b"", (status, rest))
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
                for stream in (child.stdin, child.stdout, child.stderr):
                    if not stream.closed:
                        stream.close()
