"""The code's layering, enforced: the Python package's import contracts (import-linter, declared in
pyproject.toml), no private name taken across packages, and the engine's module layering
(docs/architecture.md draws both)."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from contracts_support import (crate_modules_named, declared_modules, layer_violations, module_name,
                               package_modules, private_name_uses, rust_module_imports)

REPO = Path(__file__).resolve().parent.parent
PYTHON_ROOT = REPO / "python"
ENGINE_SRC = REPO / "crates" / "engine" / "src"

# The engine's top-level modules, top layer first. A module may use the modules of the layers
# below its own; modules sharing a layer may not use each other (tcp and net are independent:
# an endpoint knows nothing of links, a link nothing of TCP).
ENGINE_LAYERS = (
    ("budget", "emulate"),   # estimates a run before it starts, from the scenario and the world's sizes;
                             # kernel mode: the world's media between real devices
    ("sim",),                # the event loop and the world: drives everything below
    ("result", "profiles"),  # the records a run returns; the profiles a run is priced under
    ("metrics", "capture", "app", "plan"),  # traces and efficiency figures; packet capture;
                             # applications (traffic sources, echo, relay); the build step
    ("tcp", "net"),          # transport endpoints; links, channels, impairments, routing
    ("energy",),             # device profiles, CPU costs, the meter
    ("config",),             # the scenario contract: parsing and validation
    ("error", "units"),      # errors, quantities
)
# Imports that break the layering today, allowed until they are fixed (the test warns once one is
# gone, so the exception can be deleted). A new one fails the test.
ENGINE_KNOWN_EXCEPTIONS = (
    # config reads device profiles by name (energy::profile) and variant names from the transport
    # registry (tcp::variant); both are leaf files (crates/engine/tests/module_layers.rs checks it).
    ("config", "energy"),
    ("config", "tcp"),
    ("net", "sim"),      # impairments draw from sim::rng, the run's random streams
    ("app", "sim"),      # traffic sources draw from sim::rng too
    ("tcp", "capture"),  # E2TCP's compressed header is written by capture's wire format
)


# --------------------------------------------------------------------------------------------
# Python
# --------------------------------------------------------------------------------------------

def test_python_import_contracts_hold():
    """lint-imports with the contracts of pyproject.toml (layers, no cycles, private modules, the
    independent command modules and paper packages), on the package the tests import."""
    check = ("import sys; from importlinter.cli import lint_imports; "
             f"sys.exit(lint_imports(config_filename={str(REPO / 'pyproject.toml')!r}, no_cache=True, no_logo=True))")
    pytest.importorskip("importlinter", reason="import-linter (a test dependency) needs Python 3.11 or later")
    done = subprocess.run([sys.executable, "-c", check], cwd=REPO, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_python_module_sits_in_one_layer_of_the_contracts():
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    layers = next(c for c in config["contracts"] if c["type"] == "layers")["layers"]
    named = [m.strip() for layer in layers for m in layer.split("|")]
    top = {name.split(".")[1] for name in package_modules(PYTHON_ROOT, "tcpenergy") if name.count(".") >= 1}
    top -= {"__main__"}  # `python -m tcpenergy`: the command line, run, never imported
    assert sorted(named) == sorted(set(named)), "a module is named in two layers"
    assert set(named) == top


def test_no_module_takes_a_private_name_from_another_package():
    modules = package_modules(PYTHON_ROOT, "tcpenergy")
    found = []
    for path in sorted((PYTHON_ROOT / "tcpenergy").rglob("*.py")):
        name, is_package = module_name(path, PYTHON_ROOT)
        found += private_name_uses(path.read_text(encoding="utf-8"), name, is_package, "tcpenergy", modules)
    assert found == []


def test_private_name_checker_flags_names_taken_across_packages_only():
    modules = {"pkg": True, "pkg.api": False, "pkg.cli": True, "pkg.cli.common": False, "pkg.cli.run": False}
    source = ("from pkg.api import _estimate, estimate\n"
              "from pkg import api\n"
              "from pkg.cli.common import _fail\n"
              "api._cost(1)\n"
              "api.__name__\n")
    assert private_name_uses(source, "pkg.cli.run", False, "pkg", modules) == [
        "pkg.cli.run: api._cost (pkg.api)", "pkg.cli.run: from pkg.api import _estimate"]


# --------------------------------------------------------------------------------------------
# Rust
# --------------------------------------------------------------------------------------------

def _engine_edges():
    modules = declared_modules((ENGINE_SRC / "lib.rs").read_text(encoding="utf-8"))
    return modules, rust_module_imports(ENGINE_SRC, modules)


def test_every_engine_module_sits_in_one_layer():
    modules, _ = _engine_edges()
    named = [m for layer in ENGINE_LAYERS for m in layer]
    assert sorted(named) == sorted(set(named)), "a module is named in two layers"
    assert set(named) == set(modules)


def test_engine_modules_use_only_the_layers_below_them():
    _, edges = _engine_edges()
    assert layer_violations(edges, ENGINE_LAYERS, ENGINE_KNOWN_EXCEPTIONS) == []
    fixed = [e for e in ENGINE_KNOWN_EXCEPTIONS if e not in edges]
    if fixed:
        warnings.warn(f"engine layering exceptions no longer needed, delete them: {fixed}")


def test_rust_checker_reads_use_paths_groups_and_inline_paths_but_not_comments_or_tests():
    source = """
        use crate::config::Scenario;
        use crate::{net::{link, routing}, units::Bytes};
        // use crate::sim::World;
        /* crate::capture */
        fn f() { let x = crate::energy::meter::Meter::new(); }
        #[cfg(test)]
        mod tests { use crate::result::RunResult; }
    """
    assert crate_modules_named(source) == {"config", "net", "units", "energy"}


def test_layer_check_fails_on_a_new_upward_or_sideways_import_and_spares_known_exceptions():
    layers = (("sim",), ("tcp", "net"), ("config",))
    edges = {("sim", "tcp"): {"sim/mod.rs"}, ("tcp", "config"): {"tcp/sender.rs"},
             ("config", "net"): {"config/mod.rs"}, ("tcp", "net"): {"tcp/endpoint.rs"}}
    assert layer_violations(edges, layers, exceptions=[("config", "net")]) == [
        "tcp -> net: imports its own layer (tcp/endpoint.rs)"]
    assert layer_violations(edges, layers) == [
        "config -> net: imports a layer above it (config/mod.rs)",
        "tcp -> net: imports its own layer (tcp/endpoint.rs)"]
