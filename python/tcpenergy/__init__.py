"""tcpenergy: the energy cost of TCP variants over impaired wireless paths.

    import tcpenergy
    s = tcpenergy.load_scenario("scenarios/quickstart.toml")
    rec = tcpenergy.run(s, seed=2, **{"tcp.variant": "newreno"})
    tcpenergy.to_frame([rec])["energy.sender.total_j"]

    outcome = tcpenergy.sweep("sweep.toml")            # every cell x seed, into a DuckDB store
    tcpenergy.summarize(tcpenergy.open_store(outcome.store).runs())
"""

from tcpenergy._version import __version__, engine_version
from tcpenergy.api import estimate, load_scenario, profile_records, run, run_traced, to_frame, validate
from tcpenergy.calibration import calibrate
from tcpenergy.exceptions import EngineError, ScenarioError, TcpEnergyError
from tcpenergy.scenario import Scenario

# Experiments pull in pydantic, DuckDB and pandas: imported on first use, not with the package.
_EXPERIMENTS = ("sweep", "open_store", "load_sweep", "summarize")


def __getattr__(name: str):
    if name in _EXPERIMENTS:
        from tcpenergy import experiments

        return getattr(experiments, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "__version__",
    "engine_version",
    "estimate",
    "load_scenario",
    "profile_records",
    "run",
    "run_traced",
    "to_frame",
    "validate",
    "Scenario",
    "TcpEnergyError",
    "ScenarioError",
    "EngineError",
    "sweep",
    "open_store",
    "load_sweep",
    "summarize",
    "calibrate",
]
