"""The build facts that travel with the library: where they are and what they say.

build-record.json (written by `sagebuild build`) gives the sagebuild version and archs;
recommendation.json (written by `sagebuild selftest`, TEAM contract 2) gives the mode the
self-test chose for each GPU. Both are optional: without them the package uses the library's
own AUTO choice. Reading them needs no torch and no GPU.
"""

import hashlib
import json
import os

RECOMMENDATION_SCHEMA = 1
RECOMMENDATION_KIND = "sageattn-recommendation"


def record_dirs(library_path):
    """Where the records of a library are looked for: beside it (an installed wheel's _lib/)
    and one level up (a build output folder holding lib/libsageattn.so)."""
    here = os.path.dirname(os.path.abspath(library_path))
    return [here, os.path.dirname(here)]


def find_record(name, library_path, override=None):
    """The path of record `name` for the library, or None. override: an explicit path (from
    an environment variable), used as given when set."""
    if override:
        return override
    for d in record_dirs(library_path):
        path = os.path.join(d, name)
        if os.path.isfile(path):
            return path
    return None


def load_json(path):
    """The JSON object in `path`, or None when it is missing or not a JSON object."""
    if not path:
        return None
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def file_sha256(path):
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def gpu_entry(record, library_sha256, name, cc, uuid):
    """The recommendation record's entry for one GPU, or None.

    record: the parsed recommendation.json; library_sha256: of the library this process
    loaded; name, cc ("9.0"), uuid (or None): the device's. An entry counts only when the
    record is of this schema and kind, was written for this very library, and its GPU has the
    same name and compute capability (and uuid, when both sides have one).
    """
    if not isinstance(record, dict):
        return None
    if record.get("schema") != RECOMMENDATION_SCHEMA or record.get("kind") != RECOMMENDATION_KIND:
        return None
    sha = record.get("library_sha256")
    if not isinstance(sha, str) or not library_sha256 or sha.lower() != library_sha256.lower():
        return None
    gpus = record.get("gpus")
    if not isinstance(gpus, list):
        return None
    for entry in gpus:
        if not isinstance(entry, dict):
            continue
        if entry.get("name") != name or str(entry.get("cc")) != cc:
            continue
        theirs, ours = normal_uuid(entry.get("uuid")), normal_uuid(uuid)
        if theirs and ours and theirs != ours:
            continue
        return entry
    return None


def normal_uuid(uuid):
    """A GPU UUID as nvidia-smi ('GPU-58389a46-...') or torch ('58389a46-...') writes it, in
    one form for comparison; None for a missing one."""
    if not isinstance(uuid, str) or not uuid.strip():
        return None
    u = uuid.strip().lower()
    return u[4:] if u.startswith("gpu-") else u


def entry_mode(entry):
    """(mode, safe_modes) of a GPU entry; (None, ()) without one."""
    if not entry:
        return None, ()
    mode = entry.get("mode")
    safe = entry.get("safe_modes")
    safe = tuple(m for m in safe if isinstance(m, str)) if isinstance(safe, list) else ()
    return (mode if isinstance(mode, str) else None), safe


def sagebuild_version(build_record):
    """The sagebuild version a build record names, or None."""
    if isinstance(build_record, dict):
        v = build_record.get("sagebuild_version")
        if isinstance(v, str) and v:
            return v
    return None
