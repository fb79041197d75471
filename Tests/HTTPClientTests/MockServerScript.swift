/// Python source of the local mock server, passed to `python3 -c` so the
/// test target needs no resource files.
///
/// Prints its port on the first stdout line and exits when its stdin
/// closes, so a crashed test run never leaves servers behind.
let mockServerScript = #"""
import base64, gzip, json, os, ssl, sys, threading, time
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

stats_lock = threading.Lock()
stats = {"connections": 0, "drops": 0}

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def setup(self):
        super().setup()
        with stats_lock:
            stats["connections"] += 1

    def reply(self, status, body=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        path, _, query = self.path.partition("?")
        parts = path.strip("/").split("/")
        if parts[0] == "echo":
            payload = {
                "method": self.command,
                "path": path,
                "query": query,
                "headers": [[k, v] for k, v in self.headers.items()],
                "body": base64.b64encode(body).decode(),
            }
            self.reply(200, json.dumps(payload).encode(),
                       [("Content-Type", "application/json"), ("X-Echo-Method", self.command)])
        elif parts[0] == "status":
            code = int(parts[1])
            self.reply(code, ("status %d" % code).encode(), [("Content-Type", "text/plain")])
        elif parts[0] == "headers":
            self.reply(200, b"ok", [("X-Single", "  one  "), ("X-Multi", "a"), ("X-Multi", "b"),
                                    ("Set-Cookie", "a=1; Path=/"), ("Set-Cookie", "b=2; Path=/")])
        elif parts[0] == "hang":
            time.sleep(60)
        elif parts[0] == "big":
            self.reply(200, b"x" * int(parts[1]))
        elif parts[0] == "stream":
            # Chunked, no Content-Length: only the write callback can stop it.
            remaining = int(parts[1])
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            try:
                while remaining > 0:
                    chunk = b"y" * min(1024, remaining)
                    remaining -= len(chunk)
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.write(b"0\r\n\r\n")
            except OSError:
                pass
        elif parts[0] == "gzip":
            self.reply(200, gzip.compress(b"hello gzip " * 200),
                       [("Content-Encoding", "gzip"), ("Content-Type", "text/plain")])
        elif parts[0] == "redirect":
            self.reply(302, b"", [("Location", "/echo?redirected=1")])
        elif parts[0] == "drop":
            # Reads the request, then closes the connection without a byte of
            # answer: what a server dying mid-request looks like.
            with stats_lock:
                stats["drops"] += 1
            self.close_connection = True
        elif parts[0] == "stats":
            with stats_lock:
                data = json.dumps(stats).encode()
            self.reply(200, data, [("Content-Type", "application/json")])
        else:
            self.reply(404, b"no route")

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = do_OPTIONS = handle_any

def watch_stdin():
    sys.stdin.buffer.read()
    os._exit(0)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
if len(sys.argv) >= 3:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    server.socket = context.wrap_socket(server.socket, server_side=True)
threading.Thread(target=watch_stdin, daemon=True).start()
print(server.server_address[1], flush=True)
server.serve_forever()
"""#
