#!/usr/bin/env python3
"""Writes a copy of a sentence-transformers model folder with model.safetensors in float16
(half the bytes: all-MiniLM-L6-v2 goes from 90 MB to 45 MB), so a binary and its model fit in
one 64 MiB transfer to a GPU host. quarry loads it like any model; compute precision is chosen by --precision.
Usage: scripts/fp16-model.py models/all-MiniLM-L6-v2 OUT_DIR   (needs numpy)"""
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np


def main(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.safetensors", "*.bin", "onnx", "openvino"))
    raw = (src / "model.safetensors").read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + length])
    body = raw[8 + length :]
    tensors, out_header, offset = [], {}, 0
    for name, info in header.items():
        if name == "__metadata__":
            out_header[name] = info
            continue
        start, end = info["data_offsets"]
        data = np.frombuffer(body[start:end], dtype={"F32": np.float32, "F16": np.float16, "I64": np.int64}[info["dtype"]])
        if info["dtype"] == "F32":
            data, dtype = data.astype(np.float16), "F16"
        else:
            dtype = info["dtype"]
        blob = data.tobytes()
        out_header[name] = {"dtype": dtype, "shape": info["shape"], "data_offsets": [offset, offset + len(blob)]}
        tensors.append(blob)
        offset += len(blob)
    encoded = json.dumps(out_header, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)
    with open(dst / "model.safetensors", "wb") as f:
        f.write(struct.pack("<Q", len(encoded)))
        f.write(encoded)
        for blob in tensors:
            f.write(blob)
    print(f"{dst}/model.safetensors: {8 + len(encoded) + offset} bytes (float16)")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]))
