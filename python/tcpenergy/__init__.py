"""tcpenergy: the energy cost of TCP variants over impaired wireless paths.

    import tcpenergy
    s = tcpenergy.load_scenario("scenarios/quickstart.toml")
    rec = tcpenergy.run(s, seed=2, **{"tcp.variant": "newreno"})
    tcpenergy.to_frame([rec])["energy.sender.total_j"]
"""

from tcpenergy._version import __version__, engine_version
from tcpenergy.api import load_scenario, run, run_traced, to_frame, validate
from tcpenergy.exceptions import EngineError, ScenarioError, TcpEnergyError
from tcpenergy.scenario import Scenario

__all__ = [
    "__version__",
    "engine_version",
    "load_scenario",
    "run",
    "run_traced",
    "to_frame",
    "validate",
    "Scenario",
    "TcpEnergyError",
    "ScenarioError",
    "EngineError",
]
