"""Saving dpclust's own objects without pickle: arrays in ``.npz``, the rest as JSON.

A checkpoint holds nested plain data (dicts, lists, tuples, numbers, strings, NumPy arrays)
and a few dpclust classes (named tuples of sampler states, dataclasses of chain progress,
families).  :func:`save` splits such an object into a JSON skeleton and its arrays and
writes one ``.npz`` file with a SHA-256 digest of both; :func:`load` reads it with
``allow_pickle=False``, checks the digest and rebuilds the object.  Only classes defined in
the ``dpclust`` package are rebuilt (by creating the instance and setting its attributes,
never by calling code named in the file), so a file from someone else can be loaded
safely; any other content is refused with a clear message.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import json
import math
import os
from pathlib import Path

import numpy as np

from .checks import DataError

_SKELETON = "__skeleton__"
_DIGEST = "__sha256__"

#: classes that moved: the ``module:qualname`` that files written before the move name, and
#: the class's name now (a checkpoint or model keeps loading after its classes move)
MOVED = {
    # the estimator split into the chain runner and the estimators (issue 31)
    "dpclust.estimator:Trace": "dpclust.chains.trace:Trace",
    "dpclust.estimator:_Snapshot": "dpclust.chains.trace:Snapshot",
    "dpclust.estimator:_Progress": "dpclust.chains.trace:Progress",
}


class _Encoder:
    def __init__(self):
        self.arrays: dict[str, np.ndarray] = {}

    def __call__(self, obj):
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, int) and not isinstance(obj, bool):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$float": repr(obj)}
        if isinstance(obj, np.ndarray):
            if obj.dtype.hasobject:
                raise TypeError("an array of Python objects cannot be saved safely")
            key = f"a{len(self.arrays)}"
            self.arrays[key] = obj
            return {"$array": key}
        if isinstance(obj, np.generic):
            return {"$scalar": obj.dtype.str, "value": self(obj.item())}
        if isinstance(obj, list):
            return [self(v) for v in obj]
        if isinstance(obj, tuple):
            if hasattr(obj, "_fields"):
                return {"$namedtuple": _qualified(type(obj)), "fields": [self(v) for v in obj]}
            return {"$tuple": [self(v) for v in obj]}
        if isinstance(obj, dict):
            return {"$dict": [[self(k), self(v)] for k, v in obj.items()]}
        if isinstance(obj, os.PathLike):
            return {"$path": os.fspath(obj)}
        if isinstance(obj, np.random.Generator):
            return {"$generator": self(obj.bit_generator.state)}
        if hasattr(obj, "__dict__") and type(obj).__module__.startswith("dpclust."):
            return {"$object": _qualified(type(obj)), "state": self(_state_of(obj))}
        raise TypeError(f"cannot save an object of type {type(obj).__module__}."
                        f"{type(obj).__qualname__} safely")


def _state_of(obj) -> dict:
    """What of a dpclust object is saved: its ``__getstate__`` where its class defines one
    (caches of this process's data left out), else its attributes."""
    if type(obj).__getstate__ is not object.__getstate__:
        return dict(obj.__getstate__())
    return dict(vars(obj))


def _qualified(cls) -> str:
    return f"{cls.__module__}:{cls.__qualname__}"


def _dpclust_class(name: str):
    """The class ``module:qualname`` (or where it moved, :data:`MOVED`), only from the
    dpclust package."""
    module, _, qualname = MOVED.get(str(name), str(name)).partition(":")
    if not (module == "dpclust" or module.startswith("dpclust.")) or not qualname:
        raise DataError(f"the file names the class {name!r}, which is not dpclust's")
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    if not isinstance(obj, type):
        raise DataError(f"the file names {name!r}, which is not a dpclust class")
    return obj


def _decode(node, arrays):
    if isinstance(node, list):
        return [_decode(v, arrays) for v in node]
    if not isinstance(node, dict):
        return node
    if "$float" in node:
        return float(node["$float"])
    if "$array" in node:
        return arrays[node["$array"]]
    if "$scalar" in node:
        return np.dtype(node["$scalar"]).type(_decode(node["value"], arrays))
    if "$tuple" in node:
        return tuple(_decode(v, arrays) for v in node["$tuple"])
    if "$dict" in node:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in node["$dict"]}
    if "$path" in node:
        return Path(node["$path"])
    if "$generator" in node:
        state = _decode(node["$generator"], arrays)
        name = state.get("bit_generator") if isinstance(state, dict) else None
        if name not in ("PCG64", "PCG64DXSM", "MT19937", "Philox", "SFC64"):
            raise DataError(f"the file names the random generator {name!r}")
        bit = getattr(np.random, name)()
        bit.state = state
        return np.random.Generator(bit)
    if "$namedtuple" in node:
        cls = _dpclust_class(node["$namedtuple"])
        if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
            raise DataError(f"{node['$namedtuple']!r} is not a named tuple")
        fields = [_decode(v, arrays) for v in node["fields"]]
        # a file written before the tuple gained fields with defaults: those take them
        missing = cls._fields[len(fields):]
        if missing and all(f in cls._field_defaults for f in missing):
            fields += [cls._field_defaults[f] for f in missing]
        return cls._make(fields)
    if "$object" in node:
        cls = _dpclust_class(node["$object"])
        obj = object.__new__(cls)
        obj.__dict__.update(_decode(node["state"], arrays))
        if hasattr(obj, "_after_load"):
            obj._after_load()  # a file of an older layout brought up to date
        return obj
    raise DataError(f"the file holds an entry of unknown kind ({sorted(node)[:3]})")


def _digest(skeleton: bytes, arrays: dict) -> str:
    h = hashlib.sha256(skeleton)
    for key in sorted(arrays):
        a = np.ascontiguousarray(arrays[key])
        h.update(key.encode())
        h.update(a.dtype.str.encode())
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def save(path, obj) -> None:
    """Write ``obj`` to ``path`` (an ``.npz`` file) atomically, with its SHA-256 digest."""
    path = Path(path)
    enc = _Encoder()
    skeleton = json.dumps(enc(obj), allow_nan=False).encode("utf-8")
    arrays = dict(enc.arrays)
    digest = _digest(skeleton, arrays)
    arrays[_SKELETON] = np.frombuffer(skeleton, dtype=np.uint8)
    arrays[_DIGEST] = np.frombuffer(digest.encode("ascii"), dtype=np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:
        np.savez(fh, **arrays)
    os.replace(tmp, path)


def load(path, what: str = "file"):
    """Read an object written by :func:`save`; a damaged or altered file is refused."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"no {what} at {path}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {k: archive[k] for k in archive.files}
    except Exception as exc:  # a truncated or foreign file: zipfile and NumPy errors
        raise DataError(f"{what} {path} cannot be read ({type(exc).__name__}: {exc})") from None
    if _SKELETON not in arrays or _DIGEST not in arrays:
        raise DataError(f"{path} is not a dpclust {what}")
    skeleton = arrays.pop(_SKELETON).tobytes()
    stored = arrays.pop(_DIGEST).tobytes().decode("ascii", "replace")
    if _digest(skeleton, arrays) != stored:
        raise DataError(f"{what} {path} was changed after it was written (its SHA-256 digest "
                        "does not match its content); refusing to use it")
    for a in arrays.values():
        a.flags.writeable = True
    try:
        return _decode(json.loads(skeleton.decode("utf-8")), arrays)
    except DataError:
        raise
    except Exception as exc:
        raise DataError(f"{what} {path} cannot be rebuilt ({type(exc).__name__}: {exc})") \
            from None


def data_fingerprint(X) -> str:
    """A short hash identifying a data set (shape and contents), stored in checkpoints."""
    h = hashlib.sha1()
    h.update(repr(X.shape).encode())
    if hasattr(X, "indptr"):
        for a in (X.indptr, X.indices, X.data):
            h.update(np.ascontiguousarray(a).tobytes())
    elif dataclasses.is_dataclass(X):  # a working form of several arrays (a table's)
        for f in dataclasses.fields(X):
            value = getattr(X, f.name)
            h.update(f.name.encode())
            h.update(np.ascontiguousarray(value).tobytes() if isinstance(value, np.ndarray)
                     else repr(value).encode())
    else:
        h.update(np.ascontiguousarray(X).tobytes())
    return h.hexdigest()[:16]
