"""The package's settings: environment variables, overridable from Python. No torch here.

SAGEATTENTION_WORKSPACE_LIMIT_MB  cap on a call's libsageattn workspace (default 256 MiB;
                                  0 = no cap); sageattention.set_workspace_limit() overrides it
SAGEATTENTION_CHECK_FINITE        0 turns off the non-finite check and its fp16 recompute
                                  (default on)
SAGEATTENTION_MODE                forces one libsageattn mode for every call (see _device)
"""

import os

from . import _dispatch

LIMIT_ENV = "SAGEATTENTION_WORKSPACE_LIMIT_MB"
CHECK_ENV = "SAGEATTENTION_CHECK_FINITE"

_UNSET = object()
_limit_override = _UNSET


def workspace_limit():
    """Bytes a call's workspace may take before its heads run in parts; None for no cap."""
    if _limit_override is not _UNSET:
        return _limit_override
    return _parsed(LIMIT_ENV, _dispatch.parse_workspace_limit)


def set_workspace_limit(nbytes):
    """Sets the workspace cap for this process: a number of bytes (> 0), None for no cap, or
    'default' to follow SAGEATTENTION_WORKSPACE_LIMIT_MB again."""
    global _limit_override
    if nbytes == "default":
        _limit_override = _UNSET
        return
    if nbytes is not None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError("set_workspace_limit takes a positive number of bytes, None (no "
                             "cap) or 'default', got %r" % (nbytes,))
    _limit_override = nbytes


def check_finite():
    """Whether quantized calls check their output for non-finite values."""
    try:
        return _parsed(CHECK_ENV, _parse_check)
    except ValueError as e:
        raise ValueError("%s: %s" % (CHECK_ENV, e)) from None


def _parse_check(text):
    return _dispatch.parse_flag(text, True)


# The process environment as os.environ keeps it (bytes on POSIX): one dict lookup per setting
# instead of os.environ's encode-and-lookup.
_environ_data = getattr(os.environ, "_data", None)
_SNAPSHOT_NAMES = tuple(os.fsencode(n) for n in (LIMIT_ENV, CHECK_ENV, "SAGEATTENTION_MODE")) \
    if isinstance(_environ_data, dict) and all(isinstance(k, bytes) for k in _environ_data) \
    else None


def snapshot():
    """What every setting's current value depends on, cheaply: the environment's texts of
    SAGEATTENTION_WORKSPACE_LIMIT_MB, _CHECK_FINITE and _MODE, and set_workspace_limit's
    override. Equal snapshots mean equal settings."""
    if _SNAPSHOT_NAMES is not None:
        get = _environ_data.get
        return (get(_SNAPSHOT_NAMES[0]), get(_SNAPSHOT_NAMES[1]), get(_SNAPSHOT_NAMES[2]),
                _limit_override)
    get = os.environ.get
    return (get(LIMIT_ENV), get(CHECK_ENV), get("SAGEATTENTION_MODE"), _limit_override)


# Each setting is read from the environment on every call (a change takes effect at once), but
# parsed only when its text changed: {name: (text, value)}.
_parsed_cache = {}


def _parsed(name, parse):
    text = os.environ.get(name)
    cached = _parsed_cache.get(name)
    if cached is not None and cached[0] == text:
        return cached[1]
    value = parse(text)
    _parsed_cache[name] = (text, value)
    return value
