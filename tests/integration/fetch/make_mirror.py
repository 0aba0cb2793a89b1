#!/usr/bin/env python3
"""Builds a redist-shaped CUDA mirror (manifest + one tar.xz per component) from an installed
toolkit, so fetch-cuda's integration tests and benchmark have real archives with no internet.

Archive layout follows NVIDIA's redist archives (as the manifests in manifests/ list them): one
top-level folder `<comp>-<platform>-<version>-archive/`, Linux `lib/` (not lib64), libnvvm under
`nvvm/`, crt headers and link stubs in cuda_crt, CCCL under include/cccl. Which file belongs to
which component comes from the wheels' RECORD files when the toolkit was assembled from NVIDIA's
wheels (as on the CI image), else from path rules.

The result is cached: `--out DIR` gets `DIR/<key>/` where key hashes this script and the toolkit's
nvcc, and a finished tree is never rebuilt. Prints the mirror folder on stdout.
"""
import argparse
import fcntl
import hashlib
import io
import json
import lzma
import os
import platform
import re
import shutil
import sys
import tarfile
from concurrent.futures import ProcessPoolExecutor

COMPONENTS = ["cuda_nvcc", "cuda_crt", "libnvvm", "cuda_cudart", "cuda_cccl"]
NAMES = {"cuda_nvcc": "CUDA NVCC", "cuda_crt": "CUDA Application Compiler (crt)",
         "libnvvm": "CUDA NVVM", "cuda_cudart": "CUDA Runtime (cudart)",
         "cuda_cccl": "CXX Core Compute Libraries"}
WHEELS = {"cuda_nvcc": "nvidia_cuda_nvcc", "cuda_crt": "nvidia_cuda_crt", "libnvvm": "nvidia_nvvm",
          "cuda_cudart": "nvidia_cuda_runtime", "cuda_cccl": "nvidia_cuda_cccl"}


def redist_path(comp, rel):
    """Where a toolkit-relative file goes inside the component's archive, or None to leave out."""
    if rel.startswith(".metadata/"):
        return None
    if comp == "cuda_nvcc" and rel.startswith("bin/crt/"):
        return None  # cuda_crt carries the link stubs from 13.0 on
    if comp == "libnvvm":
        if rel.startswith("lib/libnvvm"):
            return "nvvm/lib64/" + os.path.basename(rel)
        if rel == "include/nvvm.h":
            return "nvvm/include/nvvm.h"
    return rel


def files_from_records(root, comp):
    dist = os.path.join(root, "dist-info")
    if not os.path.isdir(dist):
        return None
    prefix = WHEELS[comp] + "-"
    for d in sorted(os.listdir(dist)):
        if d.startswith(prefix) and d.endswith(".dist-info"):
            version = d[len(prefix):-len(".dist-info")]
            rels = []
            with open(os.path.join(dist, d, "RECORD")) as f:
                for line in f:
                    path = line.split(",")[0]
                    m = re.match(r"nvidia/cu\d+/(.*)", path)
                    if m:
                        rels.append(m.group(1))
            if comp == "cuda_crt":  # the wheels keep the link stubs in nvcc's wheel
                rels += ["bin/crt/" + n for n in os.listdir(os.path.join(root, "bin/crt"))]
            lic = os.path.join(dist, d, "licenses", "License.txt")
            return version, rels, lic if os.path.exists(lic) else None
    return None


def files_from_rules(root, comp, nvcc_version):
    """For a runfile-style toolkit without wheel RECORDs: the pieces each component is known for."""
    def walk(sub):
        top = os.path.join(root, sub)
        out = []
        for dp, dns, fns in os.walk(top):
            for n in fns + [d for d in dns if os.path.islink(os.path.join(dp, d))]:
                out.append(os.path.relpath(os.path.join(dp, n), root))
        return out
    inc = os.path.join(root, "include")
    if comp == "cuda_nvcc":
        rels = ["bin/" + n for n in ("nvcc", "nvcc.profile", "ptxas", "nvlink", "fatbinary",
                                     "cudafe++", "bin2c") if os.path.exists(os.path.join(root, "bin", n))]
        rels.append("include/fatbinary_section.h")
    elif comp == "cuda_crt":
        rels = walk("include/crt") + walk("bin/crt")
    elif comp == "libnvvm":
        rels = walk("nvvm")
        rels += ["lib/" + n for n in os.listdir(os.path.join(root, "lib")) if n.startswith("libnvvm")]
    elif comp == "cuda_cccl":
        rels = walk("include/cccl") + walk("include/nv")
    else:
        keep = re.compile(r"^(cuda|builtin_|channel_|common_|cooperative_|device_|driver_|host_|"
                          r"library_types|math_|mma|sm_|surface_|texture_|vector_)")
        skip = re.compile(r"^(cuda_profiler|cudaProfiler|cudnn|cuda_gl|cudaGL|cudaEGL|cudaVDPAU)")
        rels = [os.path.relpath(p, root) for p in
                (os.path.join(inc, n) for n in os.listdir(inc))
                if os.path.isfile(p) and keep.match(os.path.basename(p))
                and not skip.match(os.path.basename(p))]
        rels += walk("include/cooperative_groups")
        rels += ["lib/" + n for n in os.listdir(os.path.join(root, "lib"))
                 if n.startswith(("libcudart", "libcudadevrt"))]
    return nvcc_version, rels, None


def add_file(tar, src, arcname):
    st = os.lstat(src)
    info = tar.gettarinfo(src, arcname)
    info.uid = info.gid = 0
    info.uname = info.gname = "root"
    info.mtime = int(st.st_mtime)
    if info.isreg():
        with open(src, "rb") as f:
            tar.addfile(info, f)
    else:
        tar.addfile(info)


def build_component(args):
    root, comp, version, rels, lic, plat, out = args
    top = f"{comp}-{plat}-{version}-archive"
    rel_path = f"{comp}/{plat}/{top}.tar.xz"
    dest = os.path.join(out, rel_path)
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    entries = {}
    for rel in rels:
        src = os.path.join(root, rel)
        if not os.path.lexists(src):
            continue
        target = redist_path(comp, rel)
        if target:
            entries[target] = src
    # The redist archives carry the development symlinks (libcudart.so -> libcudart.so.13)
    # that the wheels leave out; -lcudart needs them.
    links = {}
    for t in list(entries):
        m = re.match(r"(.*/lib[^/]+\.so)\.\d+$", t)
        if m and m.group(1) not in entries:
            links[m.group(1)] = os.path.basename(t)
    dirs = set()
    for t in entries:
        parts = t.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]))
    tmp = dest + ".tmp"
    # One xz block, preset 6, like `tar -cJf`: the decoder cannot split it across threads, as
    # with NVIDIA's archives, so the benchmark measures what users really get.
    with lzma.open(tmp, "wb", preset=6) as xzf, tarfile.open(fileobj=xzf, mode="w",
                                                             format=tarfile.GNU_FORMAT) as tar:
        d = tarfile.TarInfo(top)
        d.type, d.mode = tarfile.DIRTYPE, 0o755
        tar.addfile(d)
        for name in sorted(dirs):
            d = tarfile.TarInfo(f"{top}/{name}")
            d.type, d.mode = tarfile.DIRTYPE, 0o755
            tar.addfile(d)
        for name in sorted(entries):
            add_file(tar, entries[name], f"{top}/{name}")
        for name in sorted(links):
            link = tarfile.TarInfo(f"{top}/{name}")
            link.type, link.linkname, link.mode = tarfile.SYMTYPE, links[name], 0o777
            tar.addfile(link)
        if lic:
            add_file(tar, lic, f"{top}/LICENSE")
    os.replace(tmp, dest)
    h = hashlib.sha256()
    md5 = hashlib.md5()
    with open(dest, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
            md5.update(chunk)
    return comp, {"name": NAMES[comp], "license": "CUDA Toolkit",
                  "license_path": f"{comp}/LICENSE.txt", "version": version,
                  plat: {"relative_path": rel_path, "sha256": h.hexdigest(),
                         "md5": md5.hexdigest(), "size": str(os.path.getsize(dest))}}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cuda-root", default="/usr/local/cuda")
    ap.add_argument("--out", required=True, help="cache folder; the mirror goes in a subfolder")
    ap.add_argument("--label", default="13.0.9",
                    help="release_label; newer than any bundled 13.0.x so --cuda 13.0 picks it")
    args = ap.parse_args()
    root = os.path.realpath(args.cuda_root)
    nvcc = os.path.join(root, "bin", "nvcc")
    if not os.path.exists(nvcc):
        print(f"no toolkit at {root}", file=sys.stderr)
        return 77
    machine = platform.machine()
    plat = {"x86_64": "linux-x86_64", "aarch64": "linux-sbsa"}.get(machine, "linux-" + machine)
    key = hashlib.sha256()
    with open(__file__, "rb") as f:
        key.update(f.read())
    st = os.stat(nvcc)
    key.update(f"{root} {st.st_size} {st.st_mtime} {args.label} {plat}".encode())
    out = os.path.join(os.path.abspath(args.out), key.hexdigest()[:16])
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, ".lock"), "w") as lockf:
        fcntl.flock(lockf, fcntl.LOCK_EX)
        manifest = os.path.join(out, f"redistrib_{args.label}.json")
        if os.path.exists(manifest):
            print(out)
            return 0
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        m = re.search(r"release (\d+\.\d+)", os.popen(f"'{nvcc}' --version").read())
        nvcc_version = (m.group(1) + ".0") if m else "0.0.0"
        jobs = []
        for comp in COMPONENTS:
            found = files_from_records(root, comp) or files_from_rules(root, comp, nvcc_version)
            version, rels, lic = found
            jobs.append((root, comp, version, rels, lic, plat, out))
        doc = {"release_date": "2026-01-01", "release_label": args.label, "release_product": "cuda"}
        # Largest first, so two workers finish together.
        order = {"libnvvm": 0, "cuda_nvcc": 1}
        jobs.sort(key=lambda j: order.get(j[1], 2))
        with ProcessPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            for comp, entry in pool.map(build_component, jobs):
                doc[comp] = entry
        doc = {k: doc[k] for k in ["release_date", "release_label", "release_product"] + COMPONENTS}
        tmp = manifest + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=4)
        os.replace(tmp, manifest)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
