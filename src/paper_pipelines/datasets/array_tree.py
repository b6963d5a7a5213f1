"""ArrayTreeDataset: nested containers of arrays in one ``.npz`` file, loaded without unpickling.

Several papers hand nested Python structures between nodes (splits as dicts of arrays, per-dataset
fits as dataclasses of arrays). A ``PickleDataset`` would store them in one line, but loading a pickle
runs whatever code the file names, so anyone who can write to ``data/`` could run code in the next
``kedro run`` or ``kedro viz``. This dataset stores the same structures as plain arrays plus a JSON
description of the nesting, and ``np.load(allow_pickle=False)`` reads them back: a file can only ever
produce arrays, numbers, strings and the project's own dataclasses.

What it stores: ``dict`` (keys: str, int, float, bool, None or tuples of those), ``list``, ``tuple``,
numpy arrays and scalars, torch tensors (back on the CPU, dtype kept, bfloat16 included), Python
scalars and strings, ``None``, ``pandas.DataFrame`` / ``Series`` of plain columns, and dataclasses
defined inside ``paper_pipelines`` (rebuilt field by field; a class from elsewhere is refused on load).
Anything else (an sklearn estimator, an arbitrary object) is refused on save, with the fix.

Example catalog entry (the ``{ns}.{name}_arrays`` factory in conf/base/catalog/_shared.yml)::

    srca.datasets_arrays:
      type: paper_pipelines.datasets.ArrayTreeDataset
      filepath: data/01_raw/srca/datasets.npz
      versioned: true
"""

from __future__ import annotations

import dataclasses
import importlib
import io
import json
from typing import Any

import numpy as np
import pandas as pd
from kedro.io.core import DatasetError

from paper_pipelines.datasets._versioned_file import VersionedFileDataset

TREE_KEY = "__tree__"
OWN_PACKAGE = "paper_pipelines."


class ArrayTreeDataset(VersionedFileDataset):
    def save(self, data: Any) -> None:
        arrays: dict[str, np.ndarray] = {}
        tree = encode(data, arrays, "data")
        arrays[TREE_KEY] = np.array(json.dumps(tree))
        buffer = io.BytesIO()
        np.savez_compressed(buffer, **arrays)
        self._write_bytes(buffer.getvalue())

    def load(self) -> Any:
        load_path, payload = self._read_bytes()
        with np.load(io.BytesIO(payload), allow_pickle=False) as stored:
            arrays = {k: stored[k] for k in stored.files}
        if TREE_KEY not in arrays:
            raise DatasetError(
                f"{load_path} is not an ArrayTreeDataset file (no {TREE_KEY} entry)."
            )
        return decode(json.loads(str(arrays.pop(TREE_KEY))), arrays)


def _array_leaf(value: np.ndarray, arrays: dict[str, np.ndarray], where: str) -> str:
    if value.dtype.hasobject:
        raise DatasetError(
            f"ArrayTreeDataset: {where} is an object array, which only a pickle can store; "
            "convert it to a numeric or string dtype (or a list) first."
        )
    key = f"a{len(arrays)}"
    arrays[key] = value
    return key


def encode(value: Any, arrays: dict[str, np.ndarray], where: str) -> dict[str, Any]:
    """The JSON description of ``value``; its arrays go into ``arrays`` under generated keys."""
    import torch

    if value is None or isinstance(value, (bool, int, float, str)):
        if isinstance(value, float) and not np.isfinite(value):
            return {"float": repr(value)}  # JSON has no nan / inf
        return {"value": value}
    if isinstance(value, np.generic):
        return {"scalar": _array_leaf(np.asarray(value), arrays, where)}
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject and all(isinstance(v, str) for v in value.flat):
            # pandas keeps strings in object columns: store them as unicode, give object back
            return {"array": _array_leaf(value.astype(str), arrays, where), "object": True}
        return {"array": _array_leaf(value, arrays, where)}
    if torch.is_tensor(value):
        tensor = value.detach().cpu()
        dtype = str(tensor.dtype).removeprefix("torch.")
        if tensor.dtype == torch.bfloat16:  # numpy has no bfloat16: keep the bits
            tensor = tensor.view(torch.int16)
        return {"tensor": _array_leaf(tensor.numpy().copy(), arrays, where), "dtype": dtype}
    if isinstance(value, pd.DataFrame):
        return {
            "dataframe": [
                [encode(c, arrays, where), encode(value[c].to_numpy(), arrays, f"{where}[{c!r}]")]
                for c in value.columns
            ],
            "index": encode(value.index.to_numpy(), arrays, f"{where}.index"),
        }
    if isinstance(value, pd.Series):
        return {
            "series": encode(value.to_numpy(), arrays, where),
            "name": encode(value.name, arrays, where),
            "index": encode(value.index.to_numpy(), arrays, f"{where}.index"),
        }
    if isinstance(value, dict):
        return {
            "dict": [
                [_key(k, where), encode(v, arrays, f"{where}[{k!r}]")] for k, v in value.items()
            ]
        }
    if isinstance(value, list):
        return {"list": [encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return {"tuple": [encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(value)]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        name = f"{cls.__module__}:{cls.__qualname__}"
        if not cls.__module__.startswith(OWN_PACKAGE):
            raise DatasetError(
                f"ArrayTreeDataset: {where} is a {name}; only dataclasses defined in paper_pipelines "
                "are rebuilt on load. Store its fields as a dict instead."
            )
        fields = {
            f.name: encode(getattr(value, f.name), arrays, f"{where}.{f.name}")
            for f in dataclasses.fields(value)
            if f.init
        }
        return {"dataclass": name, "fields": fields}
    raise DatasetError(
        f"ArrayTreeDataset cannot store {where} of type {type(value).__module__}."
        f"{type(value).__qualname__}: it holds arrays, numbers, strings, containers and paper_pipelines "
        "dataclasses. Save scikit-learn estimators with paper_pipelines.datasets.SkopsDataset and "
        "torch modules with paper_pipelines.datasets.TorchDataset."
    )


def _key(key: Any, where: str) -> Any:
    if key is None or isinstance(key, (bool, int, float, str)):
        return {"value": key}
    if isinstance(key, np.generic):
        return {"value": key.item()}
    if isinstance(key, tuple):
        return {"tuple": [_key(k, where) for k in key]}
    raise DatasetError(
        f"ArrayTreeDataset: a key of {where} is a {type(key).__name__}; use str or int."
    )


def _decode_key(node: dict[str, Any]) -> Any:
    if "tuple" in node:
        return tuple(_decode_key(k) for k in node["tuple"])
    return node["value"]


def decode(node: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    """Rebuild the value ``encode`` described; only paper_pipelines dataclasses are constructed."""
    import torch

    if "value" in node:
        return node["value"]
    if "float" in node:
        return float(node["float"])
    if "scalar" in node:
        return arrays[node["scalar"]][()]
    if "array" in node:
        array = arrays[node["array"]]
        return array.astype(object) if node.get("object") else array
    if "tensor" in node:
        tensor = torch.from_numpy(np.array(arrays[node["tensor"]]))
        if node["dtype"] == "bfloat16":
            return tensor.view(torch.bfloat16)
        return tensor.to(getattr(torch, node["dtype"]))
    if "dataframe" in node:
        columns = {decode(c, arrays): decode(v, arrays) for c, v in node["dataframe"]}
        return pd.DataFrame(columns, index=decode(node["index"], arrays))
    if "series" in node:
        return pd.Series(
            decode(node["series"], arrays),
            index=decode(node["index"], arrays),
            name=decode(node["name"], arrays),
        )
    if "dict" in node:
        return {_decode_key(k): decode(v, arrays) for k, v in node["dict"]}
    if "list" in node:
        return [decode(v, arrays) for v in node["list"]]
    if "tuple" in node:
        return tuple(decode(v, arrays) for v in node["tuple"])
    if "dataclass" in node:
        module, _, qualname = node["dataclass"].partition(":")
        if not module.startswith(OWN_PACKAGE):
            raise DatasetError(
                f"ArrayTreeDataset: the file names class {node['dataclass']}, which is not a "
                "paper_pipelines dataclass; refusing to build it."
            )
        cls: Any = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if not dataclasses.is_dataclass(cls):
            raise DatasetError(f"ArrayTreeDataset: {node['dataclass']} is not a dataclass.")
        return cls(**{k: decode(v, arrays) for k, v in node["fields"].items()})
    raise DatasetError(f"ArrayTreeDataset: unknown entry {sorted(node)} in the file's tree.")
