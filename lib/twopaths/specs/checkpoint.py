"""What a local checkpoint folder's own files say about its weights, beside what its config gives.

A Hugging Face checkpoint folder holds ``config.json`` and its weights as safetensors files. Their
exact size in bytes is written twice: in ``model.safetensors.index.json`` (``metadata.total_size``,
for a sharded checkpoint) and in each file's header (a little-endian u64 length, then a JSON map
of tensor name to dtype, shape and ``data_offsets`` [start, end) into the data that follows). The
``plan`` command shows that figure beside the bytes it computes from the config and warns where
they differ by more than ``TOLERANCE``.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from pathlib import Path

from ..errors import ParameterError

INDEX = "model.safetensors.index.json"
TOLERANCE = 0.01       # a relative difference past this is a warning: a format or a group priced wrong


@dataclass(frozen=True)
class CheckpointBytes:
    bytes: int
    source: str          # which file(s) gave it


def tensor_bytes(path: Path) -> int:
    """Bytes of every tensor in one safetensors file, from its header (the data is not read)."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ParameterError("model", str(path), "a safetensors file (an 8-byte header length first)")
        (n,) = struct.unpack("<Q", head)
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ParameterError("model", str(path), "a safetensors file (a JSON header after its length)") from None
    try:
        return sum(end - start for name, t in header.items() if name != "__metadata__"
                   for start, end in [t["data_offsets"]])
    except (TypeError, KeyError, ValueError):
        raise ParameterError("model", str(path), "a safetensors header whose tensors give data_offsets") from None


def weight_bytes(folder: Path) -> CheckpointBytes | None:
    """The checkpoint's weight bytes: the index's total where there is one, else the sum of the
    safetensors headers; None for a folder with neither (a config alone)."""
    index = folder / INDEX
    if index.is_file():
        try:
            total = json.loads(index.read_text())["metadata"]["total_size"]
        except (ValueError, KeyError, TypeError):
            raise ParameterError("model", str(index), "a safetensors index with metadata.total_size") from None
        return CheckpointBytes(int(total), f"{INDEX} (metadata.total_size)")
    files = sorted(folder.glob("*.safetensors"))
    if not files:
        return None
    return CheckpointBytes(sum(tensor_bytes(f) for f in files), f"the headers of {len(files)} safetensors file(s)")


def mismatch(computed: float, checkpoint: CheckpointBytes) -> str | None:
    """A warning where the config's figure and the checkpoint's differ by more than ``TOLERANCE``."""
    if checkpoint.bytes and abs(computed / checkpoint.bytes - 1) > TOLERANCE:
        return (f"the weights computed from the config, {computed / 1e9:,.2f} GB, differ from the checkpoint's "
                f"{checkpoint.bytes / 1e9:,.2f} GB ({checkpoint.source}) by {100 * (computed / checkpoint.bytes - 1):+.1f}%")
    return None
