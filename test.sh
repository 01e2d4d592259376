#!/usr/bin/env bash
# The whole test suite: installs the package with its test dependencies, then runs the engine's
# Rust tests and the Python tests. Both suites run even if the first fails, so one run reports
# every failure; the exit status is non-zero if either failed.
#
# What it installs, each announced by one "==> installing" line when it happens:
#   - tcpenergy and its test dependencies (pyproject.toml, extra "test"), with pip, into the
#     Python it runs ($PYTHON, default python3; a virtual environment's python works: PYTHON=venv/bin/python);
#   - pip itself into that Python, when it has none (python -m ensurepip);
#   - chromium and tshark with apt-get, only when they are missing and it runs as root
#     (otherwise the tests that need them fail and say what to install).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON="${PYTHON:-python3}"

prefix="$("$PYTHON" -c 'import sys; print(sys.prefix)')"
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
    echo "==> installing pip into $prefix with ensurepip: $PYTHON has none, and pip installs the package"
    "$PYTHON" -m ensurepip --upgrade >/dev/null
fi
echo "==> installing tcpenergy and its test dependencies (pyproject.toml [test]) into $prefix with pip:" \
     "the tests import the installed package (the first build compiles the engine)"
"$PYTHON" -m pip install --quiet --disable-pip-version-check ".[test]"

status=0

# tests/test_report_browser.py opens a report in headless Chromium, tests/test_pcap_network.py
# reads captures with tshark: install them when missing (as root, with apt-get); otherwise those
# tests fail and say what to install.
.ci/ensure-chromium || status=1
.ci/ensure-tool tshark "capture tests' dissector" tshark || status=1
# tests/test_emulate_netns.py makes network namespaces and moves TUN devices into them with `ip`.
.ci/ensure-tool iproute2 "kernel mode's namespace tests" ip || status=1

echo "==> engine tests (cargo)"
# Optimized like the package's release build but without its link-time optimization, which
# would compile the engine a second time at full cost (Cargo.toml, profile quick-release).
cargo test --workspace --profile quick-release --no-fail-fast || status=1

echo "==> Python tests (pytest)"
# python/ is not on sys.path here, so the tests import the installed package with its engine.
"$PYTHON" -m pytest || status=1

exit "$status"
