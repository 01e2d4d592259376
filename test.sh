#!/usr/bin/env bash
# The whole test suite: installs the package with its test dependencies, then runs the engine's
# Rust tests and the Python tests. Both suites run even if the first fails, so one run reports
# every failure; the exit status is non-zero if either failed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

PYTHON="${PYTHON:-python3}"

echo "==> installing tcpenergy and its test dependencies"
"$PYTHON" -m pip install --quiet --disable-pip-version-check ".[test]"

status=0

# tests/test_report_browser.py opens a report in headless Chromium, tests/test_pcap_network.py
# reads captures with tshark: install them when missing (as root, with apt-get); otherwise those
# tests fail and say what to install.
.ci/ensure-chromium || status=1
.ci/ensure-tool tshark "capture tests' dissector" tshark || status=1

echo "==> engine tests (cargo)"
# Optimized like the package's release build but without its link-time optimization, which
# would compile the engine a second time at full cost (Cargo.toml, profile quick-release).
cargo test --workspace --profile quick-release --no-fail-fast || status=1

echo "==> Python tests (pytest)"
# python/ is not on sys.path here, so the tests import the installed package with its engine.
"$PYTHON" -m pytest || status=1

exit "$status"
