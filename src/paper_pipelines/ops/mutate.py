"""Mutation testing of one paper's method modules with mutmut (`make mutate PAPER=<slug>`).

mutmut reads its settings from the pyproject.toml of the folder it runs in and copies the code into a
`mutants/` folder there, so each paper gets a scratch copy of the project under `.mutants/<slug>/`
(git-ignored) with a `[tool.mutmut]` table naming only that paper's method modules and test folder.
The score is written to `docs/mutation/<slug>.json`, which `make report` puts on the paper's page.

Equivalent mutants (a change no test can observe, e.g. a log message) are listed, each with a one-line
reason, in `tests/pipelines/<slug>/mutants_equivalent.txt` as `<mutant name>  # <reason>`.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

# Wiring, typed parameters, thin nodes, figures and report assembly are tested by the pipeline tests;
# mutation testing is for the maths a reader checks against the paper.
NOT_METHOD = {"__init__.py", "pipeline.py", "nodes.py", "parameters.py", "figures.py", "report.py"}
COPIED = ("src", "tests", "conf", "templates", "pyproject.toml", ".telemetry", "data/authored")
KILLED = {"killed", "timeout", "segfault"}


def method_modules(project: Path, slug: str) -> list[Path]:
    """The paper's modules that hold its method, baselines, data generators and measures."""
    folder = project / "src" / "paper_pipelines" / "pipelines" / slug
    if not folder.is_dir():
        known = sorted(p.name for p in folder.parent.iterdir() if (p / "__init__.py").is_file())
        raise SystemExit(f"unknown paper {slug!r}; known: {', '.join(known)}")
    return sorted(p for p in folder.glob("*.py") if p.name not in NOT_METHOD)


def read_equivalent(path: Path) -> dict[str, str]:
    """`name  # reason` lines; a line without a reason is an error (an equivalent mutant needs one)."""
    marked: dict[str, str] = {}
    if not path.is_file():
        return marked
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        name, _, reason = line.partition("#")
        if not reason.strip():
            raise SystemExit(f"{path}:{n}: an equivalent mutant needs a reason after '#'")
        marked[name.strip()] = reason.strip()
    return marked


def _scratch(project: Path, slug: str, modules: list[Path], max_seconds: int) -> Path:
    scratch = project / ".mutants" / slug
    if scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True)
    for name in COPIED:
        src = project / name
        if src.is_dir():
            shutil.copytree(src, scratch / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.is_file():
            (scratch / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, scratch / name)
    only = [str(m.relative_to(project)) for m in modules]
    table = {
        "source_paths": ["src"],
        "only_mutate": only,
        "also_copy": ["conf", "templates", "data", ".telemetry"],
        # The unit tests of the maths; the fast pipeline run (tens of seconds per mutant) is left out.
        "pytest_add_cli_args_test_selection": [
            f"tests/pipelines/{slug}",
            f"--ignore=tests/pipelines/{slug}/test_pipeline.py",
        ],
        "pytest_add_cli_args": ["-p", "no:cacheprovider", "-q", f"--timeout={max_seconds}"],
        # torch is not fork-safe once pytest has imported it in the parent
        "process_isolation": "forkserver",
    }
    lines = ["", "[tool.mutmut]"] + [f"{k} = {json.dumps(v)}" for k, v in table.items()]
    with (scratch / "pyproject.toml").open("a") as fh:
        fh.write("\n".join(lines) + "\n")
    return scratch


def parse_results(text: str) -> dict[str, str]:
    """`mutmut results --all true` lines `    <name>: <status>` into {name: status}."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s+(\S+): (.+)$", line)
        if m:
            out[m.group(1)] = m.group(2).strip()
    return out


def score(statuses: dict[str, str], equivalent: dict[str, str]) -> dict:
    """Killed share of the non-equivalent mutants (timeouts count as killed, as mutmut reports them)."""
    unknown = sorted(set(equivalent) - set(statuses))
    counted = {k: v for k, v in statuses.items() if k not in equivalent}
    killed = sorted(k for k, v in counted.items() if v in KILLED)
    survived = sorted(k for k, v in counted.items() if v not in KILLED)
    total = len(killed) + len(survived)
    return {
        "mutants": len(statuses),
        "killed": len(killed),
        "equivalent": len(statuses) - len(counted),
        "survived": len(survived),
        "score": round(len(killed) / total, 4) if total else None,
        "survivors": survived,
        "stale_equivalent_entries": unknown,
    }


def run(project: Path, slug: str, max_children: int, max_seconds: int) -> dict:
    modules = method_modules(project, slug)
    equivalent = read_equivalent(project / "tests" / "pipelines" / slug / "mutants_equivalent.txt")
    scratch = _scratch(project, slug, modules, max_seconds)
    env = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1", "PYTHONHASHSEED": "0"}
    mutmut = [sys.executable, "-m", "mutmut"]
    started = time.perf_counter()
    done = subprocess.run(
        [*mutmut, "run", "--max-children", str(max_children)], cwd=scratch, env=env, check=False
    )
    if done.returncode != 0:
        # e.g. the paper's tests fail unmutated ("failed to collect stats"): no score is better than 0 %
        raise SystemExit(f"mutmut run failed (exit {done.returncode}) for {slug}; see {scratch}")
    listed = subprocess.run(
        [*mutmut, "results", "--all", "true"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    statuses = parse_results(listed.stdout)
    if not statuses:
        raise SystemExit(f"mutmut produced no mutants for {slug}; see {scratch}")
    result = score(statuses, equivalent)
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=project, capture_output=True, text=True
    ).stdout.strip()
    result.update(
        paper=slug,
        modules=[m.name for m in modules],
        commit=commit,
        date=datetime.now(UTC).date().isoformat(),
        seconds=round(time.perf_counter() - started),
    )
    out = project / "docs" / "mutation" / f"{slug}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m paper_pipelines.ops.mutate")
    parser.add_argument("slug")
    parser.add_argument("--project-path", default=".")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument("--max-seconds", type=int, default=120, help="per test: a loop cut short")
    args = parser.parse_args(argv)
    result = run(Path(args.project_path).resolve(), args.slug, args.max_children, args.max_seconds)
    pct = "n/a" if result["score"] is None else f"{100 * result['score']:.1f} %"
    print(
        f"{args.slug}: {result['killed']} killed, {result['equivalent']} equivalent, "
        f"{result['survived']} survived of {result['mutants']} mutants -> {pct} "
        f"({result['seconds']} s); docs/mutation/{args.slug}.json"
    )
    for name in result["survivors"]:
        print(f"  survived: {name}   (mutmut show {name}, in .mutants/{args.slug})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
