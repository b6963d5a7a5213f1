"""Mutation testing of one paper's method modules with mutmut (`make mutate PAPER=<slug>`).

mutmut reads its settings from the pyproject.toml of the folder it runs in and copies the code into a
`mutants/` folder there, so each paper gets a scratch copy of the project under `.mutants/<slug>/`
(git-ignored) with a `[tool.mutmut]` table naming only that paper's method modules and test folder.

The scratch copy is kept between runs: each run copies the current code and tests over it and mutmut
re-tests only the mutants of functions that changed, so a long run can be spread over several sittings
(`--budget` seconds each). Untested mutants are drawn in a seeded random order, so a run cut short by its
budget still scores a uniform random sample of the paper's mutants; the JSON then says so and gives a 95 %
interval for the whole score. `--rerun-survivors` re-tests the survivors after new tests were written.

The score goes to `docs/mutation/<slug>.json`, which `make report` puts on the paper's page.

Per paper, in `tests/pipelines/<slug>/`:
- `mutants_equivalent.txt`: equivalent mutants (a change no test can observe, e.g. a log message), one per
  line as `<mutant name>  # <reason>`;
- `mutation.toml` (optional): `exclude = ["study.py"]` with a `# why` comment per module, for a module that
  only wires the experiment together (tested by the pipeline run, which is too slow to rerun per mutant).
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import tomllib
from datetime import UTC, datetime
from pathlib import Path

# Wiring, typed parameters, thin nodes, figures and report assembly are tested by the pipeline tests;
# mutation testing is for the maths a reader checks against the paper.
NOT_METHOD = {"__init__.py", "pipeline.py", "nodes.py", "parameters.py", "figures.py", "report.py"}
COPIED = ("src", "tests", "conf", "templates", "pyproject.toml", ".telemetry", "data/authored")
KILLED = {"killed", "timeout", "segfault", "caught by type check"}
# A mutant no unit test reaches is a gap in the tests, so it counts against the score like a survivor.
SURVIVED = {"survived", "no tests", "suspicious"}
UNTESTED = {"not checked", "check was interrupted by user", "skipped"}
GENERATE_ONLY = "__paper_pipelines_generate_only__"


def paper_folder(project: Path, slug: str) -> Path:
    folder = project / "src" / "paper_pipelines" / "pipelines" / slug
    if not folder.is_dir():
        known = sorted(p.name for p in folder.parent.iterdir() if (p / "__init__.py").is_file())
        raise SystemExit(f"unknown paper {slug!r}; known: {', '.join(known)}")
    return folder


def read_settings(project: Path, slug: str) -> dict[str, list[str]]:
    """The paper's `mutation.toml`: only `exclude` (module file names of the paper's folder)."""
    path = project / "tests" / "pipelines" / slug / "mutation.toml"
    if not path.is_file():
        return {"exclude": []}
    settings = tomllib.loads(path.read_text())
    unknown = sorted(set(settings) - {"exclude"})
    if unknown:
        raise SystemExit(f"{path}: unknown key(s) {unknown}; the only key is `exclude`")
    exclude = settings.get("exclude", [])
    folder = paper_folder(project, slug)
    missing = [name for name in exclude if not (folder / name).is_file()]
    if missing:
        raise SystemExit(f"{path}: exclude names {missing}, not modules of {folder}")
    return {"exclude": list(exclude)}


def method_modules(project: Path, slug: str) -> list[Path]:
    """The paper's modules that hold its method, baselines, data generators and measures."""
    folder = paper_folder(project, slug)
    skip = NOT_METHOD | set(read_settings(project, slug)["exclude"])
    return sorted(p for p in folder.glob("*.py") if p.name not in skip)


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


def sync_scratch(
    project: Path, slug: str, modules: list[Path], max_seconds: int, fresh: bool
) -> Path:
    """Copy the current code and tests over the scratch copy, keeping mutmut's results in `mutants/`."""
    scratch = project / ".mutants" / slug
    if fresh and scratch.exists():
        shutil.rmtree(scratch)
    scratch.mkdir(parents=True, exist_ok=True)
    for name in COPIED:
        src, dst = project / name, scratch / name
        if dst.is_dir():
            shutil.rmtree(dst)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        elif src.is_file():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
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


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion k / n (95 % for z = 1.96)."""
    if n == 0:
        return (0.0, 1.0)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def score(statuses: dict[str, str], equivalent: dict[str, str]) -> dict:
    """Killed share of the tested non-equivalent mutants (timeouts count as killed, as mutmut reports
    them; a mutant no test reaches counts as survived). Untested mutants are left out; while any remain,
    the score is an estimate from a random sample and comes with its 95 % interval."""
    unknown = sorted(set(equivalent) - set(statuses))
    unexpected = sorted({v for v in statuses.values()} - KILLED - SURVIVED - UNTESTED)
    if unexpected:
        raise SystemExit(f"mutmut reported statuses this tool does not know: {unexpected}")
    counted = {k: v for k, v in statuses.items() if k not in equivalent}
    killed = sorted(k for k, v in counted.items() if v in KILLED)
    survived = sorted(k for k, v in counted.items() if v in SURVIVED)
    untested = sorted(k for k, v in counted.items() if v in UNTESTED)
    total = len(killed) + len(survived)
    result = {
        "mutants": len(statuses),
        "tested": len(statuses) - len(untested),
        "untested": len(untested),
        "complete": not untested,
        "killed": len(killed),
        "equivalent": len(statuses) - len(counted),
        "survived": len(survived),
        "no_tests": sum(counted[k] == "no tests" for k in survived),
        "score": round(len(killed) / total, 4) if total else None,
        "survivors": survived,
        "stale_equivalent_entries": unknown,
    }
    if untested and total:
        low, high = wilson(len(killed), total)
        result["score_ci95"] = [round(low, 4), round(high, 4)]
    return result


def draw_order(names: list[str], seed: int) -> list[str]:
    """A seeded random order of mutant names: any prefix is a uniform random sample."""
    order = sorted(names)
    random.Random(seed).shuffle(order)
    return order


def sitting_order(
    statuses: dict[str, str], equivalent: dict[str, str], rerun_survivors: bool, seed: int
) -> list[str]:
    """The mutants a sitting tests, in order: with ``rerun_survivors`` the earlier survivors first (a
    sitting cut short by its budget must still re-test them), then the untested ones in their seeded
    order, so the tested set stays a uniform random sample of the paper's mutants."""
    counted = {k: v for k, v in statuses.items() if k not in equivalent}
    survivors = [k for k, v in counted.items() if rerun_survivors and v in SURVIVED]
    untested = [k for k, v in counted.items() if v in UNTESTED]
    return draw_order(survivors, seed) + draw_order(untested, seed)


class Mutmut:
    """mutmut's command line, run in the scratch copy, stopped with SIGINT (which mutmut handles by
    keeping every verdict so far) when the deadline passes."""

    def __init__(self, scratch: Path, max_children: int):
        self.scratch = scratch
        self.max_children = max_children
        self.env = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1", "PYTHONHASHSEED": "0"}
        self.command = [sys.executable, "-m", "mutmut"]

    def run(self, names: list[str], deadline: float, quiet: bool = False) -> int:
        args = [*self.command, "run", "--max-children", str(self.max_children), *names]
        sink = subprocess.DEVNULL if quiet else None
        proc = subprocess.Popen(
            args, cwd=self.scratch, env=self.env, start_new_session=True, stdout=sink, stderr=sink
        )
        try:
            return proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)
            try:
                return proc.wait(timeout=120)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                return proc.wait()

    def statuses(self) -> dict[str, str]:
        listed = subprocess.run(
            [*self.command, "results", "--all", "true"],
            cwd=self.scratch,
            env=self.env,
            capture_output=True,
            text=True,
            check=True,
        )
        return parse_results(listed.stdout)


def generate(mutmut: Mutmut, deadline: float) -> dict[str, str]:
    """Mutants and test statistics without testing any mutant: a `mutmut run` whose name filter matches
    nothing stops, failing, right after it has generated the mutants and mapped tests to functions."""
    mutmut.run([GENERATE_ONLY], deadline, quiet=True)
    statuses = mutmut.statuses()
    if not statuses:
        raise SystemExit(
            f"mutmut produced no mutants; run `python -m mutmut run` in {mutmut.scratch} to see why"
            " (do the paper's unit tests pass?)"
        )
    return statuses


def check_mutants(mutmut: Mutmut, names: list[str], deadline: float, chunk: int) -> None:
    """Test `names` in their order, `chunk` at a time, until all are done or the deadline passes."""
    for start in range(0, len(names), chunk):
        if time.monotonic() >= deadline - 30:
            return
        code = mutmut.run(names[start : start + chunk], deadline)
        if code not in (0, -signal.SIGINT, 130) and time.monotonic() < deadline:
            # e.g. the paper's tests fail unmutated ("failed to run clean test"): no score beats a wrong one
            raise SystemExit(f"mutmut run failed (exit {code}); see {mutmut.scratch}")


def run(
    project: Path,
    slug: str,
    max_children: int = 2,
    max_seconds: int = 120,
    budget: float = 7200,
    seed: int = 0,
    chunk: int = 300,
    rerun_survivors: bool = False,
    fresh: bool = False,
) -> dict:
    started = time.monotonic()
    deadline = started + budget
    settings = read_settings(project, slug)
    modules = method_modules(project, slug)
    equivalent = read_equivalent(project / "tests" / "pipelines" / slug / "mutants_equivalent.txt")
    out = project / "docs" / "mutation" / f"{slug}.json"
    scratch = sync_scratch(project, slug, modules, max_seconds, fresh)
    mutmut = Mutmut(scratch, max_children)
    statuses = generate(mutmut, deadline)
    check_mutants(
        mutmut, sitting_order(statuses, equivalent, rerun_survivors, seed), deadline, chunk
    )
    result = score(mutmut.statuses(), equivalent)
    # Seconds add up over the sittings that built one scratch copy's verdicts.
    earlier = json.loads(out.read_text()) if out.is_file() and not fresh else {}
    same = earlier.get("modules") == [m.name for m in modules]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=project, capture_output=True, text=True
    ).stdout.strip()
    result.update(
        paper=slug,
        modules=[m.name for m in modules],
        excluded=settings["exclude"],
        order=f"seeded random (seed {seed})",
        commit=commit,
        date=datetime.now(UTC).date().isoformat(),
        seconds=round(time.monotonic() - started) + (earlier.get("seconds", 0) if same else 0),
    )
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
    parser.add_argument("--budget", type=float, default=7200, help="seconds for this sitting")
    parser.add_argument(
        "--seed", type=int, default=0, help="order in which untested mutants are drawn"
    )
    parser.add_argument("--chunk", type=int, default=300, help="mutants per mutmut call")
    parser.add_argument(
        "--rerun-survivors", action="store_true", help="re-test survivors (new tests)"
    )
    parser.add_argument("--fresh", action="store_true", help="forget earlier verdicts")
    args = parser.parse_args(argv)
    result = run(
        Path(args.project_path).resolve(),
        args.slug,
        max_children=args.max_children,
        max_seconds=args.max_seconds,
        budget=args.budget,
        seed=args.seed,
        chunk=args.chunk,
        rerun_survivors=args.rerun_survivors,
        fresh=args.fresh,
    )
    pct = "n/a" if result["score"] is None else f"{100 * result['score']:.1f} %"
    if not result["complete"] and "score_ci95" in result:
        low, high = result["score_ci95"]
        pct += f" (95 % interval {100 * low:.1f}-{100 * high:.1f} %)"
    print(
        f"{args.slug}: {result['killed']} killed, {result['equivalent']} equivalent, "
        f"{result['survived']} survived ({result['no_tests']} with no test), {result['untested']} untested "
        f"of {result['mutants']} mutants -> {pct} ({result['seconds']} s); docs/mutation/{args.slug}.json"
    )
    for name in result["survivors"][:50]:
        print(f"  survived: {name}   (mutmut show {name}, in .mutants/{args.slug})")
    if len(result["survivors"]) > 50:
        print(f"  ... {len(result['survivors']) - 50} more in docs/mutation/{args.slug}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
