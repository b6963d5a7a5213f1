"""Side-by-side benchmark of our si_pipeline engine against the official si4pipeline 1.0.1.

The official package pins numpy<2, so it lives in its own virtualenv outside the repository
(default /work/venvs/si4pipeline; create it with
``python3 -m venv /work/venvs/si4pipeline && /work/venvs/si4pipeline/bin/pip install si4pipeline==1.0.1
sicore==3.0.0``). This script writes the same null datasets as .npz, runs our engine here and the
official package there (single-threaded BLAS for both), and compares (M, O), p-values and CPU seconds
against the spec's acceptance checks 4 and 5. Without the venv it prints why and exits 0.

    .venv/bin/python benchmarks/si_pipeline_anchor.py --datasets 30 --n 100 200 --dags op1 op2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# single-threaded BLAS on both sides, set before numpy loads (CPU seconds are compared)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# .ci/run builds this venv (pinned si4pipeline==1.0.1) beside the project; SI4PIPELINE_VENV points elsewhere.
DEFAULT_VENV = Path(os.environ.get("SI4PIPELINE_VENV", ROOT / ".ci" / "venvs" / "si4pipeline"))
HYPER = {
    "op1": {
        "soft_ipod": {"lam": 0.02},
        "marginal_screening": {"k": 5},
        "stepwise": {"k": 3},
        "lasso": {"alpha": 0.08},
    },
    "op2": {
        "cook_distance": {"lam": 3.0},
        "marginal_screening": {"k": 5},
        "stepwise": {"k": 3},
        "lasso": {"alpha": 0.08},
    },
}


def anchor_python(venv: Path = DEFAULT_VENV) -> Path | None:
    """The anchor venv's python if si4pipeline is importable there, else None."""
    py = venv / "bin" / "python"
    if not py.exists():
        return None
    ok = subprocess.run([str(py), "-c", "import si4pipeline, sicore"], capture_output=True)
    return py if ok.returncode == 0 else None


def run_ours(dags, ns, datasets, p, sigma, seed, out_dir: Path) -> list[dict]:
    """Draw null datasets, save them as .npz for the anchor, and test one selected feature each."""
    from paper_pipelines.pipelines.si_pipeline.dags import namespaced
    from paper_pipelines.pipelines.si_pipeline.data import synthetic_data
    from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest

    rows = []
    for dag in dags:
        engine = DagSelectiveTest(namespaced(dag))
        for n in ns:
            kept, attempt = 0, 0
            while kept < datasets:
                rng = np.random.default_rng([seed, n, p, attempt])
                attempt += 1
                X, y, _ = synthetic_data(rng, n, p, 0.0, 3, 0.03)
                state = engine.run(X, y, HYPER[dag])
                if not state["features"]:
                    continue
                j = int(rng.integers(len(state["features"])))
                ident = f"{dag}_n{n}_{kept:03d}"
                np.savez(
                    out_dir / f"{ident}.npz",
                    X=X,
                    y=y,
                    dag=dag,
                    feature=state["features"][j],
                    sigma=sigma or 0.0,
                    hyper=json.dumps(HYPER[dag]),
                )
                row = {
                    "id": ident,
                    "dag": dag,
                    "n": n,
                    "feature": state["features"][j],
                    "M": state["features"],
                    "O": state["outliers"],
                }
                try:
                    par = engine.test(X, y, HYPER[dag], sigma=sigma, features=[j])[0]
                    oc = engine.test(
                        X, y, HYPER[dag], sigma=sigma, features=[j], mode="over_conditioning"
                    )[0]
                    row.update(
                        p=par.result.p_value,
                        inf_p=par.result.inf_p,
                        sup_p=par.result.sup_p,
                        search_count=par.result.search_count,
                        cpu_seconds=par.cpu_seconds,
                        p_oc=oc.result.p_value,
                        cpu_seconds_oc=oc.cpu_seconds,
                    )
                except Exception as exc:  # counted, never dropped
                    row["error"] = f"{type(exc).__name__}: {exc}"
                rows.append(row)
                kept += 1
    return rows


def run_anchor(py: Path, in_dir: Path, driver: str = "si_pipeline_anchor_driver.py") -> list[dict]:
    """The official package on the saved datasets (separate process, single-threaded BLAS).

    `driver` is the script, beside this file, that the official venv's Python runs.
    """
    out = in_dir / "anchor.jsonl"
    env = {
        **os.environ,
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    subprocess.run(
        [
            str(py),
            str(Path(__file__).with_name(driver)),
            str(in_dir),
            str(out),
        ],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]


def compare(ours: list[dict], theirs: list[dict], p_tol: float = 2e-3) -> dict:
    """Acceptance checks 4 and 5 per (dag, n): selection agreement, p-value agreement, CPU ratio."""
    by_id = {r["id"]: r for r in theirs}
    groups: dict[str, dict] = {}
    for r in ours:
        a = by_id.get(r["id"], {})
        g = groups.setdefault(f"{r['dag']}/n={r['n']}", {"rows": []})
        g["rows"].append((r, a))
    summary = {}
    for key, g in groups.items():
        rows = g["rows"]
        same = [r["M"] == a.get("M") and r["O"] == a.get("O") for r, a in rows]
        both = [(r, a) for (r, a), s in zip(rows, same, strict=True) if s and "p" in r and "p" in a]
        oc_diff = [abs(r["p_oc"] - a["p_oc"]) for r, a in both]
        p_diff = [abs(r["p"] - a["p"]) for r, a in both]
        ours_cpu = [r["cpu_seconds"] for r in (x for x, _ in rows) if "cpu_seconds" in r]
        theirs_cpu = [a["cpu_seconds"] for _, a in rows if "cpu_seconds" in a]
        summary[key] = {
            "datasets": len(rows),
            "same_selection_rate": float(np.mean(same)),
            "oc_max_abs_diff": float(max(oc_diff)) if oc_diff else None,
            "oc_equal_1e-6_rate": float(np.mean(np.array(oc_diff) <= 1e-6)) if oc_diff else None,
            "parametric_within_tol_rate": float(np.mean(np.array(p_diff) <= p_tol))
            if p_diff
            else None,
            "parametric_max_abs_diff": float(max(p_diff)) if p_diff else None,
            "ours_errors": sum("error" in r for r, _ in rows),
            "anchor_errors": sum("error" in a for _, a in rows),
            "ours_cpu_s_per_test": float(np.mean(ours_cpu)) if ours_cpu else None,
            "anchor_cpu_s_per_test": float(np.mean(theirs_cpu)) if theirs_cpu else None,
        }
        s = summary[key]
        if s["ours_cpu_s_per_test"] and s["anchor_cpu_s_per_test"]:
            s["speedup"] = s["anchor_cpu_s_per_test"] / s["ours_cpu_s_per_test"]
    return summary


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", type=int, default=30, help="datasets per (dag, n)")
    ap.add_argument("--n", type=int, nargs="+", default=[100])
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--dags", nargs="+", default=["op1", "op2"], choices=sorted(HYPER))
    ap.add_argument("--sigma", type=float, default=1.0, help="known sigma; 0 = estimate")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument(
        "--out", type=Path, default=ROOT / "data/08_reporting/si_pipeline_anchor/summary.json"
    )
    args = ap.parse_args(argv)
    py = anchor_python(args.venv)
    if py is None:
        print(
            f"SKIPPED: no anchor virtualenv with si4pipeline at {args.venv} (see this file's docstring "
            "to create it, or set SI4PIPELINE_VENV)."
        )
        return 0
    with tempfile.TemporaryDirectory(prefix="si_anchor_") as tmp:
        t0 = time.time()
        ours = run_ours(
            args.dags, args.n, args.datasets, args.p, args.sigma or None, args.seed, Path(tmp)
        )
        theirs = run_anchor(py, Path(tmp))
        summary = compare(ours, theirs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "args": {k: str(v) for k, v in vars(args).items()},
                "wall_seconds": time.time() - t0,
                "groups": summary,
            },
            indent=2,
        )
    )
    for key, s in summary.items():
        print(
            key,
            json.dumps(
                {k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in s.items()}
            ),
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
