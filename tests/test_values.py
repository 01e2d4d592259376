"""Pure-Python pieces: --set value parsing, JSON encoding of scenario values, flattening."""

from __future__ import annotations

import datetime
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcpenergy
from conftest import QUICKSTART
from tcpenergy.records import flatten
from tcpenergy.scenario import encode_overrides, parse_assignment, parse_cli_value


@pytest.mark.parametrize("text, value", [
    ("512", 512),
    ("0.05", 0.05),
    ("true", True),
    ('"newreno"', "newreno"),
    ("newreno", "newreno"),
    ("2Mbps", "2Mbps"),
    ('[{kind="bernoulli", p=0.05}]', [{"kind": "bernoulli", "p": 0.05}]),
    ("{every = 0, timeout = \"500ms\"}", {"every": 0, "timeout": "500ms"}),
])
def test_set_value_is_toml_when_it_parses_else_bare_string(text, value):
    assert parse_cli_value(text) == value


def test_assignment_splits_at_first_equals_sign():
    assert parse_assignment("traffic.note=a=b") == ("traffic.note", "a=b")


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
               max_size=30))
def test_any_set_value_text_parses_without_error(text):
    parse_cli_value(text)


def test_toml_dates_are_sent_as_text():
    [(key, text)] = encode_overrides([("x.when", datetime.date(2024, 1, 2))])
    assert (key, json.loads(text)) == ("x.when", "2024-01-02")


def test_nan_override_is_a_scenario_error_naming_the_key():
    with pytest.raises(tcpenergy.ScenarioError) as info:
        encode_overrides([("path.forward.impairments.0.p", math.nan)])
    assert info.value.path == "path.forward.impairments.0.p"


leaves = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=5), st.booleans())
keys = st.text(alphabet="abcdefgh_", min_size=1, max_size=6)
trees = st.recursive(leaves, lambda children: st.dictionaries(keys, children, min_size=1),
                     max_leaves=20)


def _leaves(tree, prefix=""):
    if isinstance(tree, dict):
        for key, value in tree.items():
            yield from _leaves(value, f"{prefix}{key}.")
    else:
        yield prefix[:-1], tree


@given(st.dictionaries(keys, trees, min_size=1))
def test_flatten_keeps_every_leaf_under_its_dotted_path(record):
    assert flatten(record) == dict(_leaves(record))


@given(st.floats(min_value=0.0, max_value=1.0))
def test_any_probability_in_unit_interval_is_accepted(p):
    scenario = tcpenergy.load_scenario(QUICKSTART)
    tcpenergy.validate(scenario, **{"path.forward.impairments": [{"kind": "bernoulli", "p": p}]})


@given(st.one_of(st.floats(max_value=-1e-9, allow_nan=False, allow_infinity=False),
                 st.floats(min_value=1.0 + 1e-9, allow_nan=False, allow_infinity=False)))
def test_any_probability_outside_unit_interval_is_rejected_with_its_path(p):
    scenario = tcpenergy.load_scenario(QUICKSTART)
    with pytest.raises(tcpenergy.ScenarioError) as info:
        tcpenergy.validate(scenario,
                           **{"path.forward.impairments": [{"kind": "bernoulli", "p": p}]})
    assert info.value.path == "path.forward.impairments.0.p"
