"""The entries of core/ops/ops.yaml, read without a YAML library: each entry starts with a
`- func:` line, and only its `variants:` key matters to the Python tests.

The file is the one CTest names in BACKPLANE_OPS_YAML, else the source tree's beside these
tests.
"""

import os
import pathlib
import re
from typing import List, NamedTuple, Set

_FUNC = re.compile(r"^- func:\s*(?P<schema>\S.*?)\s*$")
_VARIANTS = re.compile(r"^\s+variants:\s*(?P<variants>\S.*?)\s*$")
_NAME = re.compile(r"^(?P<op>[A-Za-z_][A-Za-z0-9_]*)(?:\.(?P<overload>[A-Za-z0-9_]+))?\(")


class Entry(NamedTuple):
    schema: str  # the whole `func:` string
    name: str  # "add.Tensor", "conv2d"
    op: str  # "add"; the Python name of the function or method
    variants: Set[str]  # {"function"}, {"method"} or both


def ops_yaml_path() -> pathlib.Path:
    from_ctest = os.environ.get("BACKPLANE_OPS_YAML")
    if from_ctest:
        return pathlib.Path(from_ctest)
    return pathlib.Path(__file__).resolve().parents[2] / "core" / "ops" / "ops.yaml"


def read_entries(path: pathlib.Path = None) -> List[Entry]:
    path = ops_yaml_path() if path is None else path
    entries: List[Entry] = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        func = _FUNC.match(line)
        if func:
            schema = func.group("schema")
            name = _NAME.match(schema)
            if name is None:
                raise ValueError(f"{path}:{number}: cannot read the op name of {schema!r}")
            full = name.group("op") + ("." + name.group("overload") if name.group("overload")
                                       else "")
            entries.append(Entry(schema, full, name.group("op"), {"function"}))
            continue
        variants = _VARIANTS.match(line)
        if variants and entries:
            kinds = {v.strip() for v in variants.group("variants").split(",")}
            unknown = kinds - {"function", "method"}
            if unknown:
                raise ValueError(f"{path}:{number}: unknown variants {sorted(unknown)}")
            entries[-1] = entries[-1]._replace(variants=kinds)
    if not entries:
        raise ValueError(f"{path}: no `- func:` entries found")
    return entries
