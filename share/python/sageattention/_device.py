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
        name = _dispatch.mode_for_device(name, self.cc)
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

    def flag(self, stream):
        """This stream's int32 non-finite flag (a device tensor of one element)."""
        f = self.flags.get(stream)
        if f is None:
            f = torch.zeros(1, dtype=torch.int32, device=torch.device("cuda", self.index))
            self.flags[stream] = f
        return f


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
