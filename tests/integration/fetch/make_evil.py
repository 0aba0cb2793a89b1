#!/usr/bin/env python3
"""Writes redist-shaped mirrors whose cuda_nvcc archive attacks the machine that unpacks it, one
mirror per trick, each with a manifest carrying the archives' real sha256 (so only the
unpacker's own rules can stop them) and a second manifest, redistrib_9.9.9-badhash.json, whose
sha256 for it is wrong (the attack then runs on bytes that will fail their hash).

Usage: make_evil.py OUT_DIR [escapes|bombs]; prints the trick names, one per line;
OUT_DIR/<trick>/redistrib_9.9.9.json is each manifest.
  escapes  entries that try to write outside the folder they are unpacked into (the default)
  bombs    archives of normal size that unpack to far more than any real one (bytes, entries)
"""
import hashlib
import io
import json
import lzma
import os
import sys
import tarfile

TOP = "cuda_nvcc-linux-x86_64-9.9.9-archive"


def member(name, data=b"x\n", kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    return info, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


TRICKS = {
    "dotdot": [member(f"{TOP}/bin/../../../escaped-dotdot")],
    "absolute": [member("/tmp/sagebuild-escaped-absolute")],
    "symlink": [member(f"{TOP}/bin/evil", kind=tarfile.SYMTYPE, link="../../../../etc")],
    "symlink-abs": [member(f"{TOP}/bin/evil", kind=tarfile.SYMTYPE, link="/etc")],
    "through-symlink": [member(f"{TOP}/lib", kind=tarfile.SYMTYPE, link="."),
                        member(f"{TOP}/lib/inner", kind=tarfile.SYMTYPE, link="x"),
                        member(f"{TOP}/lib/escaped-through")],
    "hardlink": [member(f"{TOP}/bin/passwd", kind=tarfile.LNKTYPE, link="/etc/passwd")],
    "hardlink-dotdot": [member(f"{TOP}/bin/h", kind=tarfile.LNKTYPE, link=f"{TOP}/../../outside")],
    "device": [member(f"{TOP}/bin/null", kind=tarfile.CHRTYPE)],
    # A 6000-byte name: refused, and the message shows only the start of it.
    "long-name": [member(f"{TOP}/bin/" + "n" * 6000)],
    # A symlink whose target stays inside the tree where it is, hard-linked to a shallower
    # folder: link() copies the symlink, whose "../../.." now climbs above the tree, and the
    # next entry is written through the copy.
    "hardlink-to-symlink": [member(f"{TOP}/a/b/c/", kind=tarfile.DIRTYPE),
                            member(f"{TOP}/a/b/c/up", kind=tarfile.SYMTYPE, link="../../.."),
                            member(f"{TOP}/x", kind=tarfile.LNKTYPE, link=f"{TOP}/a/b/c/up"),
                            member(f"{TOP}/x/outside")],
    # The same copy made by a hard link to a hard link of the symlink.
    "hardlink-chain": [member(f"{TOP}/a/b/c/up", kind=tarfile.SYMTYPE, link="../../.."),
                       member(f"{TOP}/a/y", kind=tarfile.LNKTYPE, link=f"{TOP}/a/b/c/up"),
                       member(f"{TOP}/x", kind=tarfile.LNKTYPE, link=f"{TOP}/a/y"),
                       member(f"{TOP}/x/outside")],
    # A folder made through the copy, then a file in it (mkdir -p follows symlinks).
    "mkdir-through-copy": [member(f"{TOP}/a/b/c/up", kind=tarfile.SYMTYPE, link="../../.."),
                           member(f"{TOP}/x", kind=tarfile.LNKTYPE, link=f"{TOP}/a/b/c/up"),
                           member(f"{TOP}/x/outside/", kind=tarfile.DIRTYPE),
                           member(f"{TOP}/x/outside/f")],
}


class Repeated(io.RawIOBase):
    """size bytes of one value, without holding them in memory."""

    def __init__(self, size, byte=b"A"):
        self.left = size
        self.block = byte * (1 << 20)

    def readable(self):
        return True

    def readinto(self, buf):
        n = min(len(buf), self.left, len(self.block))
        buf[:n] = self.block[:n]
        self.left -= n
        return n


def big(name, size):
    info = tarfile.TarInfo(name)
    info.size = size
    info.mode = 0o644
    return info, io.BufferedReader(Repeated(size))


# Far beyond the budget (64 MiB for a small archive; 16384 entries): never a real archive.
BOMBS = {
    "bomb-bytes": [big(f"{TOP}/lib/fill.bin", 96 << 20)],
    "bomb-bytes-split": [big(f"{TOP}/lib/fill{i}.bin", 12 << 20) for i in range(8)],
    "bomb-entries": [member(f"{TOP}/e/{i}", b"") for i in range(20000)],
}


def archive(members):
    buf = io.BytesIO()
    # Incompressible padding at the end: a client that unpacks while downloading has made
    # everything before it while the last bytes (and so the hash) are still to come.
    padding = member(f"{TOP}/zz-padding", os.urandom(64 << 10))
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in [member(TOP + "/", kind=tarfile.DIRTYPE),
                           member(f"{TOP}/bin/nvcc", b"#!/bin/sh\n")] + members + [padding]:
            tar.addfile(info, data)
    return lzma.compress(buf.getvalue(), preset=1)


def good(comp):
    buf = io.BytesIO()
    top = f"{comp}-linux-x86_64-9.9.9-archive"
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for info, data in [member(top + "/", kind=tarfile.DIRTYPE),
                           member(f"{top}/include/{comp}.h", b"/* ok */\n")]:
            tar.addfile(info, data)
    return lzma.compress(buf.getvalue())


def write_mirror(out, name, nvcc_blob):
    root = os.path.join(out, name)
    doc = {"release_date": "2026-01-01", "release_label": "9.9.9", "release_product": "cuda"}
    for comp, blob in [("cuda_nvcc", nvcc_blob), ("cuda_cudart", good("cuda_cudart")),
                       ("cuda_cccl", good("cuda_cccl"))]:
        rel = f"{comp}/linux-x86_64/{comp}-linux-x86_64-9.9.9-archive.tar.xz"
        os.makedirs(os.path.dirname(os.path.join(root, rel)), exist_ok=True)
        with open(os.path.join(root, rel), "wb") as f:
            f.write(blob)
        doc[comp] = {"name": comp, "version": "9.9.9", "linux-x86_64": {
            "relative_path": rel, "sha256": hashlib.sha256(blob).hexdigest(),
            "size": str(len(blob))}}
    with open(os.path.join(root, "redistrib_9.9.9.json"), "w") as f:
        json.dump(doc, f)
    doc["cuda_nvcc"]["linux-x86_64"]["sha256"] = "0" * 64
    with open(os.path.join(root, "redistrib_9.9.9-badhash.json"), "w") as f:
        json.dump(doc, f)


def main():
    out = sys.argv[1]
    kind = sys.argv[2] if len(sys.argv) > 2 else "escapes"
    for name, members in (BOMBS if kind == "bombs" else TRICKS).items():
        write_mirror(out, name, archive(members))
        print(name)


if __name__ == "__main__":
    main()
