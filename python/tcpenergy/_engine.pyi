# Interface of the compiled engine module (crates/py).
from typing import Optional

__version__: str

class TcpEnergyError(Exception): ...

class ScenarioError(TcpEnergyError):
    path: str
    message: str

class EngineError(TcpEnergyError): ...

def run(
    scenario_json: str,
    seed: Optional[int] = None,
    overrides: list[tuple[str, str]] = ...,
    trace: bool = False,
    force: bool = False,
    profiles: list[list[tuple[str, str]]] = ...,
    trace_flows: Optional[list[str]] = None,
    trace_nodes: list[str] = ...,
) -> str: ...
def run_captured(
    scenario_json: str,
    seed: Optional[int] = None,
    overrides: list[tuple[str, str]] = ...,
    trace: bool = False,
    force: bool = False,
    profiles: list[list[tuple[str, str]]] = ...,
    trace_flows: Optional[list[str]] = None,
    trace_nodes: list[str] = ...,
) -> tuple[str, list[tuple[str, bytes]], list[tuple[str, bytes]]]: ...
def run_each_profile(
    scenario_json: str,
    seed: Optional[int] = None,
    overrides: list[tuple[str, str]] = ...,
    profiles: list[list[tuple[str, str]]] = ...,
    force: bool = False,
) -> list[str]: ...
def validate(scenario_json: str, overrides: list[tuple[str, str]] = ...) -> str: ...
def profiles() -> str: ...
def cycle_figures() -> str: ...
def emulate(
    scenario_json: str,
    seed: Optional[int],
    overrides: list[tuple[str, str]],
    hosts: list[tuple[str, list[int], int]],
    ports: list[int],
    control: int,
    limit_s: float,
    lag_bound_ms: float,
    capture: bool = False,
    origin_s: Optional[float] = None,
) -> tuple[str, list[tuple[str, bytes]]]: ...
def analyze(
    scenario_json: str,
    pcap: bytes,
    node: list[int],
    window_start: Optional[int] = None,
    window_end: Optional[int] = None,
) -> str: ...
def version() -> str: ...
