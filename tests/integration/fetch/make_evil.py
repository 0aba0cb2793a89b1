#!/usr/bin/env python3
"""Writes redist-shaped mirrors whose cuda_nvcc archive tries to escape the folder it is
unpacked into, one mirror per trick, each with a manifest carrying the archives' real sha256
(so only the unpacker's own rules can stop them). Usage: make_evil.py OUT_DIR; prints the
trick names, one per line; OUT_DIR/<trick>/redistrib_9.9.9.json is each manifest."""
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
}


def archive(members):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in [member(TOP + "/", kind=tarfile.DIRTYPE),
                           member(f"{TOP}/bin/nvcc", b"#!/bin/sh\n")] + members:
            tar.addfile(info, data)
    return lzma.compress(buf.getvalue())


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


def main():
    out = sys.argv[1]
    for name, members in TRICKS.items():
        write_mirror(out, name, archive(members))
        print(name)


if __name__ == "__main__":
    main()
