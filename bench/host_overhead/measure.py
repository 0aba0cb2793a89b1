"""Host time per call of the drop-in `sageattention` package, measured on a machine without a
GPU: CPU torch tensors, the package's real Python, ctypes and torch tensor ops, and a C
stand-in for libsageattn that launches nothing (standin_sageattn.c with the library's own
kernels/src/mode_names.c, built here with cc).

    /tmp/torchvenv/bin/python bench/host_overhead/measure.py [--package share/python]
        [--calls 2000] [--repeats 25] [--profile] [--ops]

What it cannot see: CUDA itself (kernel launches, the caching allocator's device side, stream
and event calls cost more on a GPU machine), and the real library's own host time (the GPU
check's "raw ABI" figure). So read the numbers as the package's Python/ctypes/torch-dispatch
share of the per-call overhead, and --ops for the torch operations each call dispatches (each
of zero_, fill_, maximum, copy_ ... is a kernel launch or a copy on a GPU).

To run the package on CPU tensors it copies the package into a temporary folder with its
CUDA-tensor checks reading "cpu" (device.type, is_cuda: the same comparisons, same cost), and
replaces torch.cuda's device, stream, event and properties calls with plain functions; device
allocations land on the CPU (pin_memory dropped).
"""

import argparse
import contextlib
import cProfile
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")


def build_standin(out_dir):
    so = os.path.join(out_dir, "lib", "libsageattn.so")
    os.makedirs(os.path.dirname(so))
    subprocess.check_call([os.environ.get("CC", "cc"), "-O2", "-shared", "-fPIC",
                           "-I" + os.path.join(ROOT, "kernels", "include"),
                           os.path.join(HERE, "standin_sageattn.c"),
                           os.path.join(ROOT, "kernels", "src", "mode_names.c"), "-o", so])
    return so


def copy_package(src, out_dir):
    dst = os.path.join(out_dir, "py")
    shutil.copytree(os.path.join(src, "sageattention"), os.path.join(dst, "sageattention"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    path = os.path.join(dst, "sageattention", "_attention.py")
    with open(path) as f:
        text = f.read()
    patched = text.replace('t.device.type != "cuda"', 't.device.type != "cpu"')
    patched = patched.replace(".is_cuda", ".is_cpu")
    if patched == text:
        raise SystemExit("the package's CUDA-tensor check was not found in %s" % path)
    with open(path, "w") as f:
        f.write(patched)
    return dst


def fake_cuda(torch):
    """torch.cuda's calls the package makes, as plain functions on a machine without CUDA."""
    stream = types.SimpleNamespace(cuda_stream=0x5000)

    class Event:
        def record(self, stream=None):
            pass

        def query(self):
            return True

        def synchronize(self):
            pass

    real_empty, real_zeros = torch.empty, torch.zeros

    def on_cpu(kwargs):
        kwargs.pop("pin_memory", None)
        dev = kwargs.get("device")
        if dev is not None and torch.device(dev).type == "cuda":
            kwargs["device"] = "cpu"
        return kwargs

    props = types.SimpleNamespace(name="Stand-in GPU", major=9, minor=0, uuid=None)
    # CPU tensors answer -1; the package compares get_device() with the current device (0).
    torch.Tensor.get_device = lambda self: 0
    patches = {
        (torch, "empty"): lambda *a, **kw: real_empty(*a, **on_cpu(kw)),
        (torch, "zeros"): lambda *a, **kw: real_zeros(*a, **on_cpu(kw)),
        (torch.cuda, "current_device"): lambda: 0,
        (torch.cuda, "current_stream"): lambda device=None: stream,
        (torch.cuda, "is_current_stream_capturing"): lambda: False,
        (torch.cuda, "Event"): Event,
        (torch.cuda, "get_device_properties"): lambda index=None: props,
        (torch._C, "_cuda_getCurrentRawStream"): lambda index: 0x5000,
        (torch._C, "_cuda_isCurrentStreamCapturing"): lambda: False,
        (torch._C, "_cuda_getDevice"): lambda: 0,
    }
    for (mod, name), value in patches.items():
        setattr(mod, name, value)


def per_call_us(fn, n, repeats):
    """The fastest of `repeats` batches of n calls, per call, in this process's CPU time: the
    machine is shared, so wall time counts the waits for a core, and the minimum is the figure
    least disturbed by others' work."""
    for _ in range(200):
        fn()
    best = None
    for _ in range(repeats):
        t0 = time.process_time_ns()
        for _ in range(n):
            fn()
        us = (time.process_time_ns() - t0) / n / 1e3
        best = us if best is None or us < best else best
    return best


def count_ops(torch, fn):
    from torch.utils._python_dispatch import TorchDispatchMode

    seen = []

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func.overloadpacket.__name__))
            return func(*args, **(kwargs or {}))

    with Count():
        fn()
    return seen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package", default=os.path.join(ROOT, "share", "python"),
                    help="folder holding sageattention/ (default: this checkout's)")
    ap.add_argument("--calls", type=int, default=2000, help="calls per batch (default 2000)")
    ap.add_argument("--repeats", type=int, default=25, help="batches; the fastest counts")
    ap.add_argument("--profile", action="store_true", help="cProfile of the check-on call")
    ap.add_argument("--ops", action="store_true", help="torch ops dispatched per call")
    args = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="sa-host-")
    try:
        os.environ["SAGEATTENTION_LIBRARY"] = build_standin(tmp)
        sys.path.insert(0, copy_package(os.path.abspath(args.package), tmp))
        for name in ("SAGEATTENTION_MODE", "SAGEATTENTION_CHECK_FINITE",
                     "SAGEATTENTION_WORKSPACE_LIMIT_MB", "SAGEATTENTION_RECOMMENDATION"):
            os.environ.pop(name, None)
        import torch

        fake_cuda(torch)
        import sageattention

        torch.set_grad_enabled(False)
        # ComfyUI's call at the GPU check's overhead shape: NHD views of one [3, B, L, H*D]
        # tensor, B1 H24 L128 D128 fp16.
        x = torch.randn(3, 1, 128, 24 * 128).half()
        q, k, v = (t.view(1, 128, 24, 128) for t in x)

        def call():
            return sageattention.sageattn(q, k, v, tensor_layout="NHD")

        o = call()
        assert o.shape == q.shape and o.dtype == q.dtype, (o.shape, o.dtype)
        rows = [("sageattn, check on", per_call_us(call, args.calls, args.repeats))]
        os.environ["SAGEATTENTION_CHECK_FINITE"] = "0"
        rows.append(("sageattn, check off", per_call_us(call, args.calls, args.repeats)))
        os.environ.pop("SAGEATTENTION_CHECK_FINITE")
        qh, kh, vh = (t.transpose(1, 2) for t in (q, k, v))
        rows.append(("sageattn HND view", per_call_us(
            lambda: sageattention.sageattn(qh, kh, vh), args.calls, args.repeats)))
        empty = torch.empty_like(q)
        rows.append(("torch.empty_like alone (scale)", per_call_us(
            lambda: torch.empty_like(empty), args.calls, args.repeats)))
        print("package: %s" % os.path.abspath(args.package))
        print("host CPU time per call (stand-in library, fastest of %d x %d calls, B1 H24 L128 "
              "D128 NHD fp16):" % (args.repeats, args.calls))
        for label, us in rows:
            print("  %-32s %7.2f us" % (label, us))
        if args.ops:
            for check in ("1", "0"):
                os.environ["SAGEATTENTION_CHECK_FINITE"] = check
                call()
                ops = count_ops(torch, call)
                print("torch ops per call, check %s: %d: %s" % (
                    "on" if check == "1" else "off", len(ops), " ".join(ops)))
            os.environ.pop("SAGEATTENTION_CHECK_FINITE")
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.calls):
                call()
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        main()
