"""The generated parts of ``docs/reproduce/seed-00N.md``: verdict tallies, the claims that hold with
their figures, and the Readings table, produced from a reproduction's output so they cannot drift.

    python -m tcpenergy.reproduce.docs seed-003 OUT          # OUT: a finished `tcpenergy reproduce` directory
    python -m tcpenergy.reproduce.docs seed-000 OUT --sweeps SWEPT   # sweeps run in another directory
    python -m tcpenergy.reproduce.docs --check               # every document matches its recorded results

The first form copies OUT/claims.json (and OUT/alternatives.json, when ``--alternatives`` ran, and
each OUT/sensitivity/KEY/sensitivity.json, when ``--sensitivity KEY`` ran) to
``docs/reproduce/results/seed-003/`` and rewrites the document's generated sections, each between
``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``. Text outside them is written by
hand. The sensitivity section is written only in documents that carry its markers. ``--sweeps DIR``
takes the sweeps from DIR instead of OUT (seeds 000 and 002 sweep on the path network, in a
directory of their own, while OUT holds the testbed run).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Sequence

from tcpenergy.reproduce import claims as C
from tcpenergy.reproduce import readings as R
from tcpenergy.reproduce import registry
from tcpenergy.reproduce.sensitivity import figure_text

SECTIONS = ("verdicts", "readings", "sensitivity")
RESULTS = "results"
SENSITIVITY = "sensitivity"


def _cell(text: Any) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _is_quick(records: Sequence[Mapping[str, Any]]) -> bool:
    return any(r.get("indicative") for r in records)


def verdicts_section(paper: str, records: Sequence[Mapping[str, Any]]) -> str:
    """The tally per status and every claim's verdict with its evidence (the figures behind it)."""
    counts = C.tally(records)
    run = "a --quick run (3 seeds per setting; indicative)" if _is_quick(records) else "a full run"
    lines = [f"Verdicts of `tcpenergy reproduce {paper}` ({run}), from `results/{paper}/claims.json`.", "",
             "| status | claims |", "|---|---|"]
    for status in C.SUMMARY_ORDER:
        lines.append(f"| {C.STATUS_WORDS[status]} | {counts[status]} |")
    lines.append(f"| total | {sum(counts.values())} |")
    for status in C.SUMMARY_ORDER:
        chosen = [r for r in records if r["status"] == status]
        if not chosen:
            continue
        lines += ["", f"**{C.STATUS_WORDS[status].capitalize()}** ({len(chosen)}):", "",
                  "| claim | evidence |" if status == C.HOLDS else "| claim | evidence | why |",
                  "|---|---|" if status == C.HOLDS else "|---|---|---|"]
        for r in chosen:
            row = [r["id"], _cell(r.get("evidence", ""))]
            if status != C.HOLDS:
                row.append(_cell(r.get("explanation") or ""))
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def readings_section(paper: str, declared: Mapping[str, R.Reading],
                     flips: Optional[Mapping[str, Any]]) -> str:
    """The Readings table: the open parameter, the reading taken, its evidence and procedure, the
    alternatives and the claims each one flips (from ``results/<paper>/alternatives.json``)."""
    if not declared:
        return "This reproduction declares no readings (`readings.yaml`)."
    by_alt: Dict[tuple, List[Mapping[str, str]]] = {}
    if flips:
        for entry in flips.get("alternatives", []):
            by_alt[(entry["reading"], entry["alternative"])] = entry["flips"]
    source = (f"`results/{paper}/alternatives.json` ({'--quick' if flips.get('quick') else 'full'} runs)"
              if flips else "no `--alternatives` run recorded yet")
    lines = [f"Each open parameter, the reading taken and its evidence; the claims each other alternative "
             f"flips come from {source}. Claims marked fit had their numbers used for the choice.", "",
             "| reading | open parameter | taken | evidence and procedure | fit | alternatives and the claims they flip |",
             "|---|---|---|---|---|---|"]
    for key, reading in declared.items():
        alts = []
        for name, text in reading.alternatives.items():
            if name == reading.taken:
                continue
            if (key, name) in by_alt:
                flipped = by_alt[(key, name)]
                what = ", ".join(f"{f['id']} ({f['taken'].replace('_', ' ')} to {f['alternative'].replace('_', ' ')})"
                                 for f in flipped) or "no claim flips"
            else:
                what = "not run"
            alts.append(f"`{name}`: {text}; flips: {what}")
        lines.append("| " + " | ".join([
            f"`{key}`", _cell(reading.parameter),
            f"`{reading.taken}`: {_cell(reading.alternatives[reading.taken])}",
            _cell(f"{reading.evidence} Procedure: {reading.procedure}"),
            ", ".join(reading.fit) or "none", _cell("<br>".join(alts))]) + " |")
    return "\n".join(lines)


def _holds_somewhere(statement: str) -> bool:
    return not statement.startswith("holds at no swept value") and not statement.startswith("not modelled")


def sensitivity_section(paper: str, sweeps: Sequence[Mapping[str, Any]]) -> str:
    """Where each energy claim that does not hold at the profile's figures would hold, one column
    per swept figure (from ``results/<paper>/sensitivity/KEY.json``, the sweeps'
    ``sensitivity.json``)."""
    if not sweeps:
        return (f"No sensitivity sweep recorded yet: run `tcpenergy reproduce {paper} --sensitivity KEY --out OUT`, "
                f"then `python -m tcpenergy.reproduce.docs {paper} OUT`.")
    quick = any(sw.get("quick") for sw in sweeps)
    engines = ", ".join(sorted({str(sw.get("engine_version")) for sw in sweeps}))
    grids = "--quick reproductions (3 seeds per setting; indicative)" if quick else "full reproductions"
    lines = [f"Each energy claim that does not hold at the profile's figures, swept over one estimated figure at "
             f"a time, set in both nodes' profiles ({grids}, engine {engines}; from `results/{paper}/sensitivity/`): "
             f"where it would hold. Command and outputs: [README.md](README.md#sensitivity); the report's checklist "
             f"carries the same statements. Swept values:", ""]
    for sw in sweeps:
        values = ", ".join(figure_text(v) for v in sw["values"])
        physical = ", ".join(figure_text(v) for v, _ in sw["physical"])
        unit = sw["physical"][0][1] if sw["physical"] else ""
        lines.append(f"* `{sw['key']}` ({sw['unit']}): {values}; {physical} {unit} (profile value "
                     f"{figure_text(sw['profile']['value'])} in `{sw['profile']['name']}`)")
    statements: Dict[str, Dict[str, str]] = {}
    order: List[str] = []
    for sw in sweeps:
        for c in sw["claims"]:
            if c.get("energy") and c.get("base_status") == C.DOES_NOT_HOLD:
                if c["id"] not in statements:
                    statements[c["id"]] = {}
                    order.append(c["id"])
                statements[c["id"]][sw["key"]] = c["statement"]
    keys = [sw["key"] for sw in sweeps]
    lines += ["", "| claim | " + " | ".join(f"`{k}`" for k in keys) + " |", "|---|" + "---|" * len(keys)]
    for cid in order:
        lines.append(f"| {cid} | " + " | ".join(_cell(statements[cid].get(k, "not swept")) for k in keys) + " |")
    somewhere = [cid for cid in order if any(_holds_somewhere(t) for t in statements[cid].values())]
    lines += ["", f"{len(order)} energy claims do not hold at the profile figures; {len(somewhere)} of them hold "
                  f"somewhere in these sweeps" + (f" ({', '.join(somewhere)})" if somewhere else "") +
              "; the others hold at no swept value of any of these figures."]
    return "\n".join(lines)


def _sweeps(results: Path) -> List[Mapping[str, Any]]:
    folder = results / SENSITIVITY
    return [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))] if folder.exists() else []


def _marker(name: str) -> tuple:
    return f"<!-- generated: {name} -->", f"<!-- end generated: {name} -->"


def splice(document: str, name: str, body: str, where: str) -> str:
    """``document`` with the generated section ``name`` replaced by ``body`` (ValueError when the
    document lacks its markers)."""
    start, end = _marker(name)
    i, j = document.find(start), document.find(end)
    if i < 0 or j < i:
        raise ValueError(f"{where}: no generated section {name!r} (expected the lines {start!r} and {end!r})")
    return document[: i + len(start)] + "\n" + body.rstrip() + "\n" + document[j:]


def _load(path: Path) -> Optional[Any]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def render(paper: str, docs_dir: Path) -> str:
    """The document of ``paper`` with its generated sections made from ``docs_dir/results/<paper>/``."""
    doc_path = docs_dir / f"{paper}.md"
    results = docs_dir / RESULTS / paper
    records = _load(results / "claims.json")
    if records is None:
        raise FileNotFoundError(f"{results / 'claims.json'}: no recorded results for {paper}; run "
                                f"`python -m tcpenergy.reproduce.docs {paper} OUT` after a reproduction")
    declared = R.load(registry.package(paper).__name__)
    text = doc_path.read_text(encoding="utf-8")
    text = splice(text, "verdicts", verdicts_section(paper, records), str(doc_path))
    text = splice(text, "readings", readings_section(paper, declared, _load(results / R.FLIPS)), str(doc_path))
    if _marker(SENSITIVITY)[0] in text:
        text = splice(text, SENSITIVITY, sensitivity_section(paper, _sweeps(results)), str(doc_path))
    return text


def update(paper: str, out_dir: Path, docs_dir: Path, sweeps_dir: Optional[Path] = None) -> Path:
    """Copy a reproduction's results (and its sensitivity sweeps, from ``sweeps_dir`` when given)
    into the docs and rewrite the paper's generated sections."""
    out_dir = Path(out_dir)
    if not (out_dir / "claims.json").exists():
        raise FileNotFoundError(f"{out_dir / 'claims.json'}: not a finished reproduction directory")
    results = docs_dir / RESULTS / paper
    results.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(out_dir / "claims.json", results / "claims.json")
    if (out_dir / R.FLIPS).exists():
        shutil.copyfile(out_dir / R.FLIPS, results / R.FLIPS)
    swept = sorted((Path(sweeps_dir or out_dir) / SENSITIVITY).glob("*/sensitivity.json"))
    if swept:
        (results / SENSITIVITY).mkdir(exist_ok=True)
        for path in swept:
            shutil.copyfile(path, results / SENSITIVITY / f"{path.parent.name}.json")
    text = render(paper, docs_dir)
    (docs_dir / f"{paper}.md").write_text(text, encoding="utf-8")
    return docs_dir / f"{paper}.md"


def stale(docs_dir: Path) -> List[str]:
    """The papers whose document differs from what its recorded results generate."""
    out = []
    for paper in registry.known_papers():
        if not (docs_dir / RESULTS / paper / "claims.json").exists():
            continue
        if render(paper, docs_dir) != (docs_dir / f"{paper}.md").read_text(encoding="utf-8"):
            out.append(paper)
    return out


def main(argv: Optional[Sequence[str]] = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tcpenergy.reproduce.docs", description=__doc__.split("\n")[0])
    parser.add_argument("paper", nargs="?", choices=registry.known_papers())
    parser.add_argument("out", nargs="?", type=Path, help="the reproduction's output directory")
    parser.add_argument("--docs", type=Path, default=Path("docs/reproduce"), help="default: docs/reproduce")
    parser.add_argument("--sweeps", type=Path, help="take the sensitivity sweeps from this directory instead of OUT")
    parser.add_argument("--check", action="store_true", help="exit 1 when a document is out of date")
    args = parser.parse_args(argv)
    if args.check:
        found = stale(args.docs)
        for paper in found:
            print(f"{args.docs / (paper + '.md')}: generated sections out of date; run "
                  f"`python -m tcpenergy.reproduce.docs {paper} OUT`", file=sys.stderr)
        return 1 if found else 0
    if args.paper is None or args.out is None:
        parser.error("give PAPER and OUT, or --check")
    print(update(args.paper, args.out, args.docs, args.sweeps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
