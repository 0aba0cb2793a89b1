#!/usr/bin/env python3
"""A PyPI simple index (PEP 503 HTML and PEP 691 JSON) over a folder of wheels, for the
fetch-cuda --source pypi tests. Binds 127.0.0.1 on a free port and writes the port to a file.

Paths (PROJECT is the normalised name):
  /simple/PROJECT/           JSON when the client's Accept asks for it, else HTML
  /html/simple/PROJECT/      HTML only (an index that predates PEP 691)
  /redirect/simple/PROJECT/  301 to /simple/PROJECT/ (links must resolve against the final URL)
  /bad/simple/PROJECT/       like /simple, but nvidia-cuda-crt's sha256 is wrong
  /old/simple/PROJECT/       lists each wheel under another version (13.0.48) only
  /files/NAME                the wheel itself
Every request is logged as "METHOD PATH ACCEPT -> STATUS TYPE".
"""
import argparse
import hashlib
import http.server
import json
import os
import re
import sys

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


def normalise(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_project(filename):
    return normalise(filename.split("-")[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheels", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()

    files = {}
    for name in sorted(os.listdir(args.wheels)):
        if name.endswith(".whl"):
            path = os.path.join(args.wheels, name)
            h = hashlib.sha256()
            with open(path, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    h.update(chunk)
            files[name] = (path, h.hexdigest(), os.path.getsize(path))
    log = open(args.log, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def note(self, status, ctype):
            log.write("%s %s %s -> %d %s\n" % (self.command, self.path,
                                                 self.headers.get("Accept", "-"), status, ctype))

        def send(self, status, body, ctype):
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)
            self.note(status, ctype)

        def listing(self, mode, project):
            out = []
            for name, (_, sha, size) in files.items():
                if wheel_project(name) != project:
                    continue
                shown = name
                if mode == "old":
                    parts = name.split("-")
                    parts[1] = "13.0.48"
                    shown = "-".join(parts)
                if mode == "bad" and project == "nvidia-cuda-crt":
                    sha = "0" * 64
                out.append((shown, name, sha, size))
            return out

        def page(self, mode, project):
            entries = self.listing(mode, project)
            if not entries:
                return self.send(404, b"no such project\n", "text/plain")
            accept = self.headers.get("Accept", "")
            if mode != "html" and JSON_TYPE in accept:
                doc = {"meta": {"api-version": "1.1"}, "name": project,
                       "files": [{"filename": shown, "url": "../../files/" + real,
                                  "hashes": {"sha256": sha}, "size": size,
                                  "yanked": False} for shown, real, sha, size in entries]}
                return self.send(200, json.dumps(doc).encode(), JSON_TYPE)
            links = "".join('<a href="../../files/%s#sha256=%s">%s</a><br/>\n' % (real, sha, shown)
                            for shown, real, sha, size in entries)
            body = ("<!DOCTYPE html><html><body><h1>Links for %s</h1>\n%s</body></html>\n"
                    % (project, links)).encode()
            self.send(200, body, "text/html; charset=utf-8")

        def do_GET(self):
            path = self.path.split("?")[0]
            m = re.fullmatch(r"/(?:(html|redirect|bad|old)/)?simple/([^/]+)/?", path)
            if m and m.group(1) == "redirect":
                self.send_response(301)
                self.send_header("Location", "/simple/%s/" % m.group(2))
                self.send_header("Content-Length", "0")
                self.end_headers()
                self.note(301, "-")
                return
            if m:
                return self.page(m.group(1) or "json", normalise(m.group(2)))
            m = re.fullmatch(r"/(?:[a-z-]+/)?files/([^/]+)", path)
            if m and m.group(1) in files:
                fpath, _, size = files[m.group(1)]
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.send_header("Content-Length", str(size))
                self.end_headers()
                with open(fpath, "rb") as f:
                    while True:
                        chunk = f.read(1 << 20)
                        if not chunk:
                            break
                        self.wfile.write(chunk)
                self.note(200, "wheel")
                return
            self.send(404, b"not found\n", "text/plain")

        do_HEAD = do_GET

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
