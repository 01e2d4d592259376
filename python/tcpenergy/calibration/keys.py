"""Which profile figures can be fitted: those the energy over the window is affine in.

A figure can be fitted when changing it changes no simulated event, only what the meters charge:
every power figure (energy = power x time in a state, the times fixed by the timeline) and every
cycle cost (CPU energy = active power x cycles / clock; the CPU meter records busy time but never
delays a packet, crates/engine/src/energy/cpu.rs), and the card interface's times (CPU energy =
active power x the time each packet takes to cross to or from the card). Two figures are refused: the wake time, which
moves the radio's wake-ups (the policy timeline, energy/meter.rs), and the clock, which CPU energy
goes as the inverse of. CPU active power together with a cycle cost or a card time is refused
because CPU energy is their product.
"""

from __future__ import annotations

import fnmatch
import json
from typing import Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from tcpenergy._native import engine
from tcpenergy.calibration.errors import input_error
from tcpenergy.records import flatten

ACTIVE_POWER = "cpu.active_power_w"
CYCLES_PREFIX = "cpu.cycles."

POWER_KEYS = (
    "platform.base_power_w",
    "radio.tx_power_w",
    "radio.rx_power_w",
    "radio.idle_power_w",
    "radio.sleep_power_w",
    "radio.wake_power_w",
    ACTIVE_POWER,
)
# The cycle figures as the engine's table declares them (crates/engine/src/energy/cpu.rs), in
# its order; the router's forwarding costs are not among them.
CYCLE_FIGURES = tuple(json.loads(engine.cycle_figures()))
CYCLE_KEYS = tuple(f["key"] for f in CYCLE_FIGURES)
# The card interface's times (crates/engine/src/energy/profile.rs, CardInterface) and their units.
CARD_UNITS = {"card.frame_us": "µs", "card.byte_ns": "ns/byte"}
CARD_KEYS = tuple(CARD_UNITS)
# Display and output order.
AFFINE_KEYS = POWER_KEYS + CYCLE_KEYS + CARD_KEYS


def is_busy_time_key(key: str) -> bool:
    """Whether the figure sets CPU busy time (a cycle cost or a card time), which CPU energy
    multiplies by the active power."""
    return key.startswith(CYCLES_PREFIX) or key in CARD_UNITS

NOT_AFFINE = {
    "radio.wake_time": "it moves the radio's wake-ups in time (the idle_timeout policy's timeline "
                       "depends on it), so the energy changes in steps, not in proportion",
    "cpu.frequency_hz": "CPU busy time is cycles / frequency_hz, so the energy goes as its "
                        "inverse, not in proportion",
}

# Any other figure (a duration, a rate, a byte count such as a radio PHY's) is refused too: only
# powers and cycle costs are known to leave the timeline alone.
_OTHER_REASON = ("only power figures (W) and CPU cycle costs are known to leave the simulated "
                 "timeline unchanged")

_META_KEYS = ("name", "description", "estimated", "sources")
_GLOB_CHARS = "*?["


def unit(key: str) -> str:
    if key in CARD_UNITS:
        return CARD_UNITS[key]
    if any(f["key"] == key and f["per_byte"] for f in CYCLE_FIGURES):
        return "cycles/byte"
    if key.startswith(CYCLES_PREFIX):
        return "cycles"
    return "W"


def profile_keys(profile: Mapping) -> List[str]:
    """Every figure of a profile as a dotted key (``radio.tx_power_w``)."""
    body = {k: v for k, v in profile.items() if k not in _META_KEYS}
    return list(flatten(body))


def _covers(pattern: str, key: str) -> bool:
    # As in the profiles' `estimated` lists: a key, a glob ("cpu.cycles.*") or a table ("cpu.cycles").
    return fnmatch.fnmatchcase(key, pattern) or key.startswith(pattern + ".")


def is_estimated(profile: Mapping, key: str) -> bool:
    return any(_covers(pattern, key) for pattern in profile.get("estimated") or [])


def _allowed() -> str:
    return ", ".join(AFFINE_KEYS)


def not_affine_reason(key: str) -> str:
    return NOT_AFFINE.get(key, _OTHER_REASON)


def _check_affine(key: str, how: str) -> None:
    if key not in AFFINE_KEYS:
        raise input_error("--fit", f"{key}{how} cannot be fitted: the energy is not affine in it: "
                                   f"{not_affine_reason(key)}; fittable keys: {_allowed()}")


def _check_no_product(keys: Sequence[str]) -> None:
    busy = [k for k in keys if is_busy_time_key(k)]
    if ACTIVE_POWER in keys and busy:
        raise input_error(
            "--fit", f"{ACTIVE_POWER} and {busy[0]} cannot be fitted together: CPU energy is "
                     f"their product (active_power_w x busy time), not affine in the pair; fit "
                     f"{ACTIVE_POWER} or the cycle costs and card times, not both")


def _ordered(keys: Iterable[str]) -> List[str]:
    chosen = set(keys)
    return [k for k in AFFINE_KEYS if k in chosen]


def parse_fit(spec: Union[str, Sequence[str]]) -> List[str]:
    items = spec.split(",") if isinstance(spec, str) else list(spec)
    items = [str(item).strip() for item in items if str(item).strip()]
    if not items:
        raise input_error("--fit", f"no key given; fittable keys: {_allowed()}")
    return items


def resolve_fit(spec: Optional[Union[str, Sequence[str]]], profile: Mapping) -> Tuple[List[str], List[str]]:
    """The keys to fit, in output order, and notes on keys left out.

    ``spec``: comma-separated dotted keys or globs; None means the profile's estimated figures
    that the energy is affine in (see the module docstring)."""
    known = profile_keys(profile)
    if spec is None:
        return _default_keys(profile, known)
    keys: List[str] = []
    for item in parse_fit(spec):
        if any(ch in item for ch in _GLOB_CHARS):
            matched = [k for k in known if fnmatch.fnmatchcase(k, item)]
            if not matched:
                raise input_error("--fit", f"{item!r} matches no profile key; fittable keys: {_allowed()}")
            for key in matched:
                _check_affine(key, f" (matched by {item})")
            keys.extend(matched)
        elif item in known:
            _check_affine(item, "")
            keys.append(item)
        else:
            raise input_error("--fit", f"unknown profile key {item!r}; fittable keys: {_allowed()}")
    keys = _ordered(keys)
    _check_no_product(keys)
    return keys, []


def _default_keys(profile: Mapping, known: Sequence[str]) -> Tuple[List[str], List[str]]:
    estimated = [k for k in known if is_estimated(profile, k)]
    keys = _ordered(k for k in estimated if k in AFFINE_KEYS)
    notes = [f"{k} not fitted: {not_affine_reason(k)}" for k in estimated if k not in AFFINE_KEYS]
    busy = [k for k in keys if is_busy_time_key(k)]
    if ACTIVE_POWER in keys and busy:
        # One figure that scales all protocol-processing energy is better determined by energy
        # measurements than fourteen cycle costs whose operation counts rise and fall together.
        keys = [k for k in keys if k not in busy]
        notes.append(f"cpu.cycles.* and card.* not fitted: {ACTIVE_POWER} is (CPU energy is their "
                     f"product); name cycle costs or card times with --fit to fit them instead")
    if not keys:
        raise input_error("--fit", f"profile {profile.get('name')!r} lists no estimated figure the "
                                   f"energy is affine in; name the figures to fit: {_allowed()}")
    return keys, notes
