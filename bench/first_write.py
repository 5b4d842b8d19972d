"""The first-write success rate: how much of the corpus works as a region exactly as first written.

    python bench/first_write.py [--corpus heldout] [--update-readme]

Every function of ``tests/corpus/`` (with ``--corpus heldout``, of ``tests/corpus_heldout/``: real
functions of projects the other tests never saw, issue #23's held-out measure) is checked by ppy-check's engine, built and
verified on its samples against its own Python body (values, dtypes, writes,
gradients). The rate counts the functions written to work as regions, that is
all but those that loop, branch on values or assert by design (each module's
``KIND``), and says what stopped the rest: one row per finding code and message
pattern (or build failure, or wrong answer), with how many functions it
stopped and for how many it was the only thing in the way.

Writes bench/results/first_write.json and .md; ``--update-readme`` also puts the
table into README.md between ``<!-- first-write:start -->`` and ``<!-- first-write:end -->``. The held-out
corpus's go to first_write_heldout.json and .md, and between the ``first-write-heldout`` markers.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# --corpus's choices: the folder under tests/ (a package, imported by its name), the results' stem, the README's
# marker and the corpus's name in the table's sentence.
CORPORA = {
    "corpus": ("corpus", "first_write", "first-write", "the corpus's"),
    "heldout": ("corpus_heldout", "first_write_heldout", "first-write-heldout", "the held-out corpus's"),
}
# The codes of the rules that refuse loops, value branches and asserts: by design.
BY_DESIGN_CODES = ("ppy-loop", "ppy-branch")

sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus import BY_DESIGN  # type: ignore[import-not-found]  # noqa: E402 - tests/ is put on the path above
from judge import Verdict, example, judge_file, machine, pattern  # noqa: E402
from publish import publish, today  # noqa: E402


@dataclass
class Entry:
    file: str  # the corpus module: "attention"
    name: str
    by_design: bool
    verdict: Verdict

    @property
    def key(self) -> str:
        return f"{self.file}.{self.name}"


def corpus_files(corpus: str = "corpus") -> list[Path]:
    folder = ROOT / "tests" / CORPORA[corpus][0]
    return sorted(p for p in folder.glob("*.py") if p.name != "__init__.py")


def judge_corpus_file(path: Path) -> list[Entry]:
    """One corpus module imported (its package is its folder's name), then every region of it judged, with its
    kind from ``KIND``."""
    module = importlib.import_module(f"{path.parent.name}.{path.stem}")
    kinds = getattr(module, "KIND", {})
    unknown = {kind for kind in kinds.values() if kind != BY_DESIGN}
    if unknown:
        raise ValueError(f"{path.name}: KIND values must be {BY_DESIGN!r}, not {sorted(unknown)}")
    verdicts = judge_file(path)
    missing = set(kinds) - set(verdicts)
    if missing:
        raise ValueError(f"{path.name}: KIND names {sorted(missing)}, which are not regions of the module")
    return [Entry(path.stem, name, kinds.get(name) == BY_DESIGN, verdict) for name, verdict in verdicts.items()]


def blockers(verdict: Verdict) -> dict[tuple[str, str], str]:
    """What stopped a function, as (kind, pattern) rows, each with the example name it was about."""
    if verdict.findings:
        return {(f.code, pattern(f.message)): example(f.message) for f in verdict.findings}
    if verdict.status == "matched":
        return {}
    return {(verdict.status, pattern(verdict.detail)): verdict.name}


def summarise(entries: list[Entry]) -> dict[str, Any]:
    first = [e for e in entries if not e.by_design]
    design = [e for e in entries if e.by_design]
    matched = [e for e in first if e.verdict.status == "matched"]
    rows: dict[tuple[str, str], dict[str, Any]] = defaultdict(lambda: {"functions": [], "only": 0, "examples": []})
    for entry in first:
        found = blockers(entry.verdict)
        for row, name in found.items():
            rows[row]["functions"].append(entry.key)
            if len(found) == 1:
                rows[row]["only"] += 1
            if name and name not in rows[row]["examples"]:
                rows[row]["examples"].append(name)
    table = [{"kind": kind, "pattern": text, "functions": len(v["functions"]), "only": v["only"],
              "examples": v["examples"], "which": v["functions"]}
             for (kind, text), v in rows.items()]
    table.sort(key=lambda r: (-r["functions"], -r["only"], r["kind"], r["pattern"]))
    refused_by_design = [e for e in design if any(f.code in BY_DESIGN_CODES for f in e.verdict.findings)]
    files: dict[str, dict[str, int]] = {}
    for entry in entries:
        counts = files.setdefault(entry.file, {"functions": 0, "by_design": 0, "first_write": 0, "matched": 0})
        counts["functions"] += 1
        counts["by_design" if entry.by_design else "first_write"] += 1
        counts["matched"] += (not entry.by_design) and entry.verdict.status == "matched"
    return {
        "functions": len(entries), "first_write": len(first), "matched": len(matched),
        "rate": len(matched) / len(first) if first else 0.0,
        "statuses": dict(Counter(e.verdict.status for e in first)),
        "by_design": len(design), "by_design_refused_as_such": len(refused_by_design),
        "blockers": table, "files": files,
    }


def markdown(report: dict[str, Any]) -> str:
    s = report["summary"]
    statuses = s["statuses"]
    corpus = report.get("corpus", "corpus")
    flag = "" if corpus == "corpus" else f" --corpus {corpus}"
    lines = [
        f"`python bench/first_write.py{flag}` ({report['machine']}; {report['date']}): of {CORPORA[corpus][3]} "
        f"{s['functions']} functions, {s['by_design']} loop, branch on values or assert by design (all "
        f"{s['by_design_refused_as_such']} refused as `ppy-loop`/`ppy-branch`); of the other {s['first_write']}, "
        f"**{s['matched']} ({s['rate']:.0%}) pass ppy-check, compile and match as first written** (target: 70%). "
        f"The rest: {statuses.get('refused', 0)} refused by ppy-check, {statuses.get('not compiled', 0)} not compiled, "
        f"{statuses.get('wrong', 0)} wrong, {statuses.get('raised', 0)} raised.",
    ]
    if not s["blockers"]:
        return "\n".join(lines) + "\n"
    lines[-1] += " What stopped them (a function can hit several rows; *alone*: the only thing in its way):"
    lines += ["", "| blocker | pattern | functions | alone | for example |", "| --- | --- | ---: | ---: | --- |"]
    for row in s["blockers"]:
        text = row["pattern"].replace("|", "\\|")
        examples = ", ".join(f"`{e}`" for e in row["examples"][:4])
        lines.append(f"| `{row['kind']}` | {text} | {row['functions']} | {row['only']} | {examples} |")
    return "\n".join(lines) + "\n"


def run(corpus: str = "corpus") -> dict[str, Any]:
    started = time.perf_counter()
    entries = [entry for path in corpus_files(corpus) for entry in judge_corpus_file(path)]
    import torch

    return {
        "corpus": corpus, "date": today(), "machine": machine(), "torch": torch.__version__,
        "seconds": round(time.perf_counter() - started, 1), "summary": summarise(entries),
        "functions": [{"file": e.file, "by_design": e.by_design, **asdict(e.verdict)} for e in entries],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", choices=sorted(CORPORA), default="corpus",
                        help="tests/corpus (the default) or the held-out tests/corpus_heldout")
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()
    report = run(args.corpus)
    s = report["summary"]
    print(f"{'file':<14} {'functions':>9} {'by design':>9} {'first write':>11} {'matched':>7}")
    for name, row in s["files"].items():
        print(f"{name:<14} {row['functions']:>9} {row['by_design']:>9} {row['first_write']:>11} {row['matched']:>7}")
    print()
    for entry in report["functions"]:
        if not entry["by_design"] and entry["status"] != "matched":
            why = "; ".join(f"{f['code']} {f['message']}" for f in entry["findings"]) or entry["detail"]
            print(f"  {entry['file']}.{entry['name']}: {entry['status']}: {why[:160]}")
    print()
    text = markdown(report)
    print(text)
    _, stem, marker, _ = CORPORA[args.corpus]
    publish(stem, marker, report, text, args.update_readme)


if __name__ == "__main__":
    main()
