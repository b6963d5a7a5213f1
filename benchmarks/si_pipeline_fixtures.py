"""Writes data/authored/si_pipeline/reference.json: numbers produced once by the official si4pipeline 1.0.1.

Small datasets (n = 40, p = 5, 10 % missing responses, two mean-shift outliers) for six DAGs that use
every component between them (five imputers, Cook's distance, DFFITS, soft-IPOD, marginal screening,
stepwise, lasso, union and intersection of feature sets and of outlier sets). The official package runs in
its own virtualenv (benchmarks/si_pipeline_fixtures_driver.py); only its outputs are stored: the data, its
(M, O), p-values, bounds, search counts, OC p-values and imputer rows. tests/pipelines/si_pipeline/
test_reference.py compares our engine with these numbers without the side environment.

    .venv/bin/python benchmarks/si_pipeline_fixtures.py          # needs .ci/venvs/si4pipeline
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = Path(os.environ.get("SI4PIPELINE_VENV", ROOT / ".ci" / "venvs" / "si4pipeline"))
OUT = ROOT / "data" / "authored" / "si_pipeline" / "reference.json"
DAGS = ["op1", "op2", "dffits_union", "cook_intersection", "od_union", "od_intersection"]


def draw(seed: int, n: int = 40, p: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """X ~ N(0, I), beta = (0.5, 0.5, 0, ...), two rows shifted by +4, 4 responses missing."""
    rng = np.random.default_rng([2026, seed])
    X = rng.normal(size=(n, p))
    y = X[:, :2] @ [0.5, 0.5] + rng.normal(size=n)
    y[rng.choice(n, 2, replace=False)] += 4.0
    y[rng.choice(n, 4, replace=False)] = np.nan
    return X, y


def _compact(rows: dict[str, list]) -> dict[str, list]:
    """1-NN imputer rows are one-hot: stored as the index of the copied observed row."""
    out = {}
    for name, value in rows.items():
        g = np.asarray(value)
        one_hot = g.size and np.all((g == 0) | (g == 1)) and np.all(g.sum(axis=1) == 1)
        out[name] = np.argmax(g, axis=1).tolist() if one_hot and "regression" not in name else value
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--datasets", type=int, default=3, help="datasets per DAG")
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args(argv)
    py = args.venv / "bin" / "python"
    if not py.exists():
        print(f"SKIPPED: no si4pipeline virtualenv at {args.venv}")
        return 0
    cases = []
    with tempfile.TemporaryDirectory(prefix="si_fixtures_") as tmp:
        for d, dag in enumerate(DAGS):
            for k in range(args.datasets):
                X, y = draw(100 * d + k)
                sigma = 0.0 if k == args.datasets - 1 else 1.0  # the last one: sigma estimated
                ident = f"{d}_{dag}_{k}"
                np.savez(Path(tmp) / f"{ident}.npz", X=X, y=y, dag=dag, sigma=sigma)
                cases.append({"id": ident, "dag": dag, "sigma": sigma or None, "X": X, "y": y})
        out = Path(tmp) / "official.jsonl"
        subprocess.run(
            [
                str(py),
                str(Path(__file__).with_name("si_pipeline_fixtures_driver.py")),
                tmp,
                str(out),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},  # its sibling order follows str hashes
        )
        official = {r["id"]: r for r in map(json.loads, out.read_text().splitlines())}
    version = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.metadata as m; print(m.version('si4pipeline'), m.version('sicore'), m.version('numpy'))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    records, errors = [], []
    for case in cases:
        r = official[case["id"]]
        if "error" in r:
            errors.append({"id": case["id"], "error": r["error"]})
            continue
        records.append(
            {
                "id": case["id"],
                "dag": case["dag"],
                "sigma": case["sigma"],
                "X": case["X"].tolist(),
                "y": [None if np.isnan(v) else float(v) for v in case["y"]],
                "M": r["M"],
                "O": r["O"],
                "tests": r["tests"],
                "imputer_rows": _compact(r["imputer_rows"]),
            }
        )
    doc = {
        "about": "Outputs of si4pipeline (official code of arXiv 2406.18902) on small synthetic data; "
        "numbers only, written by benchmarks/si_pipeline_fixtures.py",
        "versions": dict(zip(["si4pipeline", "sicore", "numpy"], version, strict=False)),
        "official_errors": errors,
        "cases": records,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, separators=(",", ":")) + "\n")
    print(
        f"wrote {args.out}: {len(records)} cases, {sum(len(r['tests']) for r in records)} tests, "
        f"{len(errors)} official errors"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
