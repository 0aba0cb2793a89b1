#!/usr/bin/env python3
"""A small HTTP server for fetch-cuda's integration tests: serves one folder under several URL
prefixes, each behaving like a different kind of broken mirror.

  /ok/...        the files, with Range support (206) and directory listings (a folder's
                 index.html when it has one)
  /404/...       404 for everything
  /redirect/...  302 to the same path on a port where nothing listens (a dead mirror host)
  /corrupt/...   the right size, wrong bytes (one byte flipped every 4 KiB)
  /drop/...      the first full request of each file gets half the body, then the connection
                 is closed; Range requests are served normally, so a client can resume
  /stall/...     headers and 64 KiB of body, then silence until the client gives up
  /norange/...   ignores Range and always sends the whole file with 200
  /pause/...     all but the last 4 KiB at once, then 1.5 s of silence, then the rest (a client
                 that unpacks while it downloads has unpacked the start before the hash is known)
  /drip/...      headers, then 4 bytes a second for as long as the client stays (a mirror that
                 keeps a transfer alive without ever finishing it)
  /slow/...      the body at 256 KiB/s (a slow but honest mirror)
  /hang/...      accepts the request and never answers (headers included)

Binds 127.0.0.1 on a free port, writes the port to --port-file, and appends one line per
request to --log: "<path> <range or -> <status> <body bytes sent>". With --tls CERT KEY it
speaks HTTPS.
"""
import argparse
import html
import os
import socket
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MODES = ("ok", "404", "redirect", "corrupt", "drop", "stall", "norange", "pause", "drip", "slow",
         "hang")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def record(self, status, sent):
        with self.server.log_lock, open(self.server.log_path, "a") as f:
            f.write(f"{self.path} {self.headers.get('Range') or '-'} {status} {sent}\n")

    def do_GET(self):
        parts = self.path.split("?")[0].split("/", 2)
        mode = parts[1] if len(parts) > 1 else ""
        rel = parts[2] if len(parts) > 2 else ""
        if mode not in MODES or ".." in rel.split("/"):
            return self.plain(404, b"no such mirror\n")
        if mode == "404":
            return self.plain(404, b"not found\n")
        if mode == "redirect":
            target = f"http://127.0.0.1:{self.server.dead_port}/ok/{rel}"
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return self.record(302, 0)
        if mode == "hang":
            self.record(0, 0)
            while not self.server.stopping:
                time.sleep(0.2)
            self.close_connection = True
            return
        path = os.path.join(self.server.root, rel)
        if os.path.isdir(path) and os.path.isfile(os.path.join(path, "index.html")):
            path = os.path.join(path, "index.html")  # as static servers do (a PyPI simple page)
        if os.path.isdir(path):
            return self.listing(path)
        if not os.path.isfile(path):
            return self.plain(404, b"not found\n")
        with open(path, "rb") as f:
            data = f.read()
        if mode == "corrupt":
            b = bytearray(data)
            for i in range(0, len(b), 4096):
                b[i] ^= 0xFF
            data = bytes(b)
        rng = self.headers.get("Range")
        start = 0
        if rng and mode != "norange" and rng.startswith("bytes="):
            start = int(rng[6:].split("-")[0] or 0)
            if start >= len(data):
                return self.plain(416, b"")
            self.send_response(206)
            self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        else:
            self.send_response(200)
        body = data[start:]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        status = 206 if start else 200
        if mode == "drop" and start == 0:
            with self.server.log_lock:
                first = path not in self.server.dropped
                self.server.dropped.add(path)
            if first:
                half = len(body) // 2
                self.wfile.write(body[:half])
                self.wfile.flush()
                self.record(status, half)
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)
                return
        if mode in ("pause", "drip", "slow"):
            return self.paced(mode, status, body)
        if mode == "stall":
            chunk = min(len(body), 65536)
            self.wfile.write(body[:chunk])
            self.wfile.flush()
            self.record(status, chunk)
            try:
                while not self.server.stopping:
                    time.sleep(0.2)
            finally:
                self.close_connection = True
            return
        try:
            self.wfile.write(body)
            self.record(status, len(body))
        except (BrokenPipeError, ConnectionResetError):
            self.record(status, -1)

    def paced(self, mode, status, body):
        sent = 0
        try:
            if mode == "pause":
                head = max(0, len(body) - 4096)
                self.wfile.write(body[:head])
                self.wfile.flush()
                time.sleep(1.5)
                self.wfile.write(body[head:])
                sent = len(body)
            else:
                step, pause = (4, 1.0) if mode == "drip" else (16384, 1 / 16)
                while sent < len(body) and not self.server.stopping:
                    self.wfile.write(body[sent:sent + step])
                    self.wfile.flush()
                    sent += len(body[sent:sent + step])
                    time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            pass
        self.close_connection = True
        self.record(status, sent)

    def listing(self, path):
        names = sorted(os.listdir(path))
        page = "<html><body>\n" + "".join(
            f'<a href="{html.escape(n)}">{html.escape(n)}</a>\n' for n in names) + "</body></html>\n"
        self.plain(200, page.encode(), "text/html")

    def plain(self, status, body, ctype="text/plain"):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.record(status, len(body))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = ap.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    server.daemon_threads = True
    server.root = os.path.abspath(args.root)
    server.log_path = args.log
    server.log_lock = threading.Lock()
    server.dropped = set()
    server.stopping = False
    server.dead_port = free_port()  # nothing listens there
    open(args.log, "a").close()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stopping = True
    return 0


if __name__ == "__main__":
    sys.exit(main())
