"""What the package keeps per CUDA device: its facts (name, compute capability, UUID), the
libsageattn mode each upstream function runs there, and the per-stream workspace and
non-finite flag buffers (from torch's caching allocator). Imported only at call time."""

import os
import sys
import threading

import torch

from . import _dispatch, _lib, _record

MODE_ENV = "SAGEATTENTION_MODE"
RECOMMENDATION_ENV = "SAGEATTENTION_RECOMMENDATION"
WORKSPACE_ALIGN = 256

_lock = threading.Lock()
_states = {}
_recommendation = None  # (loaded?, record)


def _recommendation_record(lib):
    global _recommendation
    if _recommendation is None:
        path = _record.find_record("recommendation.json", lib.path,
                                   os.environ.get(RECOMMENDATION_ENV))
        _recommendation = (path, _record.load_json(path))
    return _recommendation[1]


class DeviceState:
    """One CUDA device as the package sees it."""

    def __init__(self, index):
        self.index = index
        props = torch.cuda.get_device_properties(index)
        self.name = props.name
        self.cc = (props.major, props.minor)
        uuid = getattr(props, "uuid", None)
        self.uuid = str(uuid) if uuid is not None else None
        self._modes = {}
        self._entry = None
        self._entry_read = False
        self.workspaces = {}
        self.flags = {}
        self._context = None

    def context(self, lib):
        """This device's sageattn_context handle (ABI 1.2 libraries; None for older ones), made
        on first use and kept for the process: the library then reads the device's facts once
        instead of on every call."""
        if self._context is None and lib.has_v12:
            with _lock:
                if self._context is None:
                    try:
                        self._context = lib.create_context(self.index)
                    except _lib.LibraryError as e:
                        if e.status == _lib.ERR_NO_CODE_FOR_GPU:
                            raise RuntimeError(_dispatch.no_code_message(
                                self.name, self.cc, lib.built_archs, sys.executable,
                                str(e))) from None
                        raise
        return self._context

    def record_entry(self, lib):
        """This GPU's entry of the recommendation record, when the record is for this library."""
        if not self._entry_read:
            record = _recommendation_record(lib)
            self._entry = (_record.gpu_entry(record, lib.sha256, self.name,
                                             "%d.%d" % self.cc, self.uuid)
                           if record is not None else None)
            self._entry_read = True
        return self._entry

    def mode(self, lib, function, pv_accum_dtype):
        """(mode value, mode name) that a call of `function` runs on this device."""
        forced = os.environ.get(MODE_ENV) or None
        key = (function, pv_accum_dtype, forced)
        cached = self._modes.get(key)
        if cached is not None:
            return cached
        rec_mode, safe_modes = _record.entry_mode(self.record_entry(lib))
        name = _dispatch.requested_mode(function, pv_accum_dtype, forced, lib.modes, safe_modes)
        if name == _dispatch.RECOMMENDED:
            name = _dispatch.recommended_or_auto(rec_mode, lib.modes)
        name = _dispatch.mode_for_device(name, lib.cc_has_fp8(self.cc))
        value = lib.mode_value(name)
        try:
            value = lib.resolve_mode(value, self.index)
        except _lib.LibraryError as e:
            if e.status == _lib.ERR_NO_CODE_FOR_GPU:
                raise RuntimeError(_dispatch.no_code_message(
                    self.name, self.cc, lib.built_archs, sys.executable, str(e))) from None
            raise
        result = (value, lib.mode_name(value))
        self._modes[key] = result
        return result

    def workspace(self, stream, nbytes, capturing=False):
        """(pointer, bytes, owner) of a 256-byte aligned workspace of at least nbytes for
        `stream`: one cached buffer per stream, so that calls on different streams never share
        one. While a CUDA graph is being captured the buffer is a new one from the graph's
        pool (owner keeps it alive for the call), so that a later, larger call cannot free
        memory the graph replays into."""
        if nbytes == 0:
            return None, 0, None
        buf = None if capturing else self.workspaces.get(stream)
        if buf is None or buf.numel() - WORKSPACE_ALIGN < nbytes:
            buf = torch.empty(nbytes + WORKSPACE_ALIGN, dtype=torch.uint8,
                              device=torch.device("cuda", self.index))
            if not capturing:
                self.workspaces[stream] = buf
        ptr = buf.data_ptr()
        pad = (-ptr) % WORKSPACE_ALIGN
        return ptr + pad, buf.numel() - pad, buf

    def finite_check(self, stream):
        """This stream's FiniteCheck."""
        c = self.flags.get(stream)
        if c is None:
            c = FiniteCheck(torch.device("cuda", self.index))
            self.flags[stream] = c
        return c


# 1024 flags (4 KiB) per stream: the wrap (three small kernels, a copy to pinned memory and an
# event) is paid once per 1024 calls; the warning comes within ~2048 calls, well inside one
# image's or video's worth of attention calls. The recompute itself never waits for a wrap.
FLAG_SLOTS = 1024


class FiniteCheck:
    """The non-finite check's buffers for one stream, and the host's view of them that never
    waits for the GPU.

    ring: one flag per call, FLAG_SLOTS of them, taken in turn (next_flag), so that no call
    needs a memset of its own: the quantized kernels raise their call's flag, the fp16
    recompute queued behind them reads it (only_if_nonzero). When the ring is used up, the
    whole of it is folded into `seen` (the maximum of every flag so far) and zeroed, queued on
    the stream behind every call that used it, and `seen` is copied to pinned host memory
    without blocking; the host reads that copy at a later wrap, once its event has completed.
    So the host learns of a recompute within about 2 x FLAG_SLOTS calls on the stream.
    flag: the one flag of calls made while a CUDA graph is being captured (zeroed inside the
    graph by each call, and folded into `seen` there, as a replay cannot take ring slots)."""

    def __init__(self, device):
        self.device = device
        self.ring = torch.zeros(FLAG_SLOTS, dtype=torch.int32, device=device)
        self.ring_ptr = self.ring.data_ptr()
        self.next = 0
        self.flag = torch.zeros(1, dtype=torch.int32, device=device)
        self.seen = torch.zeros(1, dtype=torch.int32, device=device)
        self._folded = torch.zeros(1, dtype=torch.int32, device=device)
        self._host = None
        self._event = None
        self._pending = False

    def next_flag(self, track):
        """(pointer to a zeroed device int for this call's flag, whether a recompute is known
        to have happened). track: keep `seen` and the host copy up to date at a wrap (False
        once the warning was given). Never blocks."""
        recomputed = False
        if self.next == FLAG_SLOTS:
            if track:
                torch.amax(self.ring, dim=0, keepdim=True, out=self._folded)
                torch.maximum(self.seen, self._folded, out=self.seen)
                recomputed = self.recomputed()
            self.ring.zero_()
            self.next = 0
        ptr = self.ring_ptr + 4 * self.next
        self.next += 1
        return ptr, recomputed

    def capture_flag(self):
        """The zeroed flag of a call being captured into a CUDA graph (the zeroing is part of
        the graph)."""
        self.flag.zero_()
        return self.flag.data_ptr()

    def after_captured_call(self):
        torch.maximum(self.seen, self.flag, out=self.seen)

    def recomputed(self):
        """Whether an earlier copy of `seen` has arrived and says a call was recomputed; queues
        the next copy when none is in flight."""
        if self._pending:
            if not self._event.query():
                return False
            self._pending = False
            if int(self._host[0]) != 0:
                return True
        if self._host is None:
            self._host = torch.zeros(1, dtype=torch.int32, pin_memory=True)
            self._event = torch.cuda.Event()
        self._host.copy_(self.seen, non_blocking=True)
        self._event.record(torch.cuda.current_stream(self.device))
        self._pending = True
        return False


def state(index):
    s = _states.get(index)
    if s is None:
        with _lock:
            s = _states.get(index)
            if s is None:
                s = DeviceState(index)
                _states[index] = s
    return s


def release_workspaces():
    """Drops every cached workspace (they return to torch's caching allocator)."""
    with _lock:
        for s in _states.values():
            s.workspaces.clear()
