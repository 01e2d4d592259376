"""Checkers for the code's layering: which engine modules a Rust source names, which layers they
may name, and which private names a Python module takes from another package. tests/test_contracts.py
runs them on the sources and on small made-up inputs."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Dict, Iterable, List, Mapping, Sequence, Set, Tuple

Edge = Tuple[str, str]  # (importing module, imported module), top-level modules of the crate

# --------------------------------------------------------------------------------------------
# Rust: `use crate::x::...`, `use crate::{x::..., y}` and `crate::x::` paths
# --------------------------------------------------------------------------------------------

_BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
_LINE_COMMENT = re.compile(r"//[^\n]*")
# A test module closes the file (the project's convention): its imports are the tests' own.
_TEST_MODULE = re.compile(r"#\[cfg\(test\)\]\s*(?:pub\s+)?mod\s+\w+\s*\{")
_CRATE_PATH = re.compile(r"\bcrate::(\w+)")
_CRATE_GROUP = re.compile(r"\bcrate::\{")


def _code(text: str) -> str:
    """The source without comments and without its trailing test module."""
    text = _LINE_COMMENT.sub("", _BLOCK_COMMENT.sub("", text))
    test = _TEST_MODULE.search(text)
    return text[:test.start()] if test else text


def _group_heads(text: str, start: int) -> Set[str]:
    """The first name of each path in the group opening at ``start`` (just after ``{``):
    ``config::Scenario, net::{link, routing}, units`` -> {config, net, units}."""
    heads, depth, expect, i = set(), 1, True, start
    while i < len(text) and depth:
        c = text[i]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "," and depth == 1:
            expect = True
        elif depth == 1 and expect and (c.isalpha() or c == "_"):
            name = re.match(r"\w+", text[i:]).group(0)
            heads.add(name)
            expect = False
            i += len(name)
            continue
        i += 1
    return heads


def crate_modules_named(text: str) -> Set[str]:
    """Every name a Rust source reaches through ``crate::``: the first segment after it."""
    code = _code(text)
    names = set(_CRATE_PATH.findall(code))
    for group in _CRATE_GROUP.finditer(code):
        names |= _group_heads(code, group.end())
    return names


def top_module(path: Path, src: Path) -> str:
    """The crate's top-level module a source file belongs to (``net/link.rs`` -> ``net``)."""
    first = path.relative_to(src).parts[0]
    return first[:-3] if first.endswith(".rs") else first


def rust_module_imports(src: Path, modules: Iterable[str]) -> Dict[Edge, Set[str]]:
    """{(importer, imported): the files} over the crate's sources, between the top-level
    ``modules`` (items of lib.rs itself, such as ``crate::VERSION``, are not modules)."""
    known = set(modules)
    edges: Dict[Edge, Set[str]] = {}
    for path in sorted(src.rglob("*.rs")):
        importer = top_module(path, src)
        if importer not in known or path.name == "tests.rs":  # a test module kept in its own file
            continue
        for imported in crate_modules_named(path.read_text(encoding="utf-8")) & known:
            if imported != importer:
                edges.setdefault((importer, imported), set()).add(path.relative_to(src).as_posix())
    return edges


def declared_modules(lib_rs: str) -> List[str]:
    """The top-level modules lib.rs declares (``pub mod x;``, ``mod x;``)."""
    return re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", _code(lib_rs), re.M)


def layer_violations(edges: Mapping[Edge, Set[str]], layers: Sequence[Sequence[str]],
                     exceptions: Iterable[Edge] = ()) -> List[str]:
    """The imports that break the layering, in words. ``layers``: top first; a module may import
    the modules of the layers below its own, not those of its own layer or above. ``exceptions``:
    imports known to break it, allowed until they are fixed."""
    rank = {m: i for i, layer in enumerate(layers) for m in layer}
    allowed = set(exceptions)
    out = []
    for (importer, imported), files in sorted(edges.items()):
        if importer not in rank or imported not in rank:
            out.append(f"{importer} -> {imported}: a module missing from the layers ({', '.join(sorted(files))})")
        elif rank[imported] <= rank[importer] and (importer, imported) not in allowed:
            where = "its own layer" if rank[imported] == rank[importer] else "a layer above it"
            out.append(f"{importer} -> {imported}: imports {where} ({', '.join(sorted(files))})")
    return out


# --------------------------------------------------------------------------------------------
# Python: private names taken from another package
# --------------------------------------------------------------------------------------------

def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _package_of(module: str, is_package: bool) -> str:
    return module if is_package else module.rpartition(".")[0]


def module_name(path: Path, root: Path) -> Tuple[str, bool]:
    """(dotted name, is a package) of a source file under ``root`` (the folder holding the top package)."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        return ".".join(parts[:-1]), True
    return ".".join(parts), False


def private_name_uses(source: str, module: str, is_package: bool, top: str,
                      modules: Mapping[str, bool]) -> List[str]:
    """The private names (``_x``) ``module`` takes from a module of another package of ``top``:
    ``from top.a.b import _x`` and ``b._x`` after ``from top.a import b``. ``modules``: every
    module of ``top`` -> whether it is a package."""
    own = _package_of(module, is_package)
    tree = ast.parse(source)
    aliases: Dict[str, str] = {}  # local name -> the module of `top` it is bound to
    found = []

    def owner(target: str) -> str:
        return _package_of(target, modules.get(target, False))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and \
                (node.module == top or node.module.startswith(top + ".")):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if full in modules:
                    aliases[alias.asname or alias.name] = full
                elif _private(alias.name) and owner(node.module) != own:
                    found.append(f"{module}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and \
                node.value.id in aliases and _private(node.attr):
            target = aliases[node.value.id]
            full = f"{target}.{node.attr}"
            if full not in modules and owner(target) != own:
                found.append(f"{module}: {node.value.id}.{node.attr} ({target})")
    return sorted(set(found))


def package_modules(root: Path, top: str) -> Dict[str, bool]:
    """Every module of the package ``top`` under ``root`` -> whether it is a package."""
    return dict(module_name(p, root) for p in (root / top).rglob("*.py"))
