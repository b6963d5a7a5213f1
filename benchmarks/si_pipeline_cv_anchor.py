"""CV inside the test: our CvSelectiveTest against the official si4pipeline 1.0.1 ``tune`` + ``inference``.

Same datasets on both sides (saved as .npz), candidates = op1 and op2 with list-valued hyperparameters
(``--grid small``: lasso alpha {0.08, 0.12} for each, 4 candidates - the pipeline's default; ``--grid
all_cv``: the paper's 32 candidates), K-fold CV with the same seed. Compares the chosen candidate, (M, O),
parametric / OC p-values, search counts and CPU seconds. The official package lives in its own venv
(see benchmarks/si_pipeline_anchor.py); without it this prints SKIPPED and exits 0.

    .venv/bin/python benchmarks/si_pipeline_cv_anchor.py --datasets 10 --grid small
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from si_pipeline_anchor import DEFAULT_VENV, HYPER, ROOT, anchor_python, run_anchor  # noqa: E402

GRIDS = {
    "small": {"op1": {"lasso": {"alpha": [0.08, 0.12]}}, "op2": {"lasso": {"alpha": [0.08, 0.12]}}},
    "all_cv": {
        "op1": {
            "soft_ipod": {"lam": [0.02, 0.018]},
            "marginal_screening": {"k": [3, 5]},
            "stepwise": {"k": [2, 3]},
            "lasso": {"alpha": [0.08, 0.12]},
        },
        "op2": {
            "cook_distance": {"lam": [2.0, 3.0]},
            "marginal_screening": {"k": [3, 5]},
            "stepwise": {"k": [2, 3]},
            "lasso": {"alpha": [0.08, 0.12]},
        },
    },
}


def _full_grid(dag: str, grid: dict) -> dict:
    """The DAG's fixed hyperparameters with the grid's lists put in (what the official builder takes)."""
    out = json.loads(json.dumps(HYPER[dag]))
    for comp, values in grid.get(dag, {}).items():
        out[comp].update(values)
    return out


def run_ours(args, out_dir: Path) -> list[dict]:
    from paper_pipelines.pipelines.si_pipeline.cross_validation import (
        CvSelectiveTest,
        expand_candidates,
    )
    from paper_pipelines.pipelines.si_pipeline.dags import DAGS, namespaced
    from paper_pipelines.pipelines.si_pipeline.data import synthetic_data
    from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest

    engines = {d: DagSelectiveTest(namespaced(d)) for d in DAGS}
    grid = GRIDS[args.grid]
    cv = CvSelectiveTest(
        expand_candidates(engines, grid, HYPER), folds=args.folds, seed=args.cv_seed
    )
    rows, kept, attempt = [], 0, 0
    while kept < args.datasets:
        rng = np.random.default_rng([args.seed, args.n, args.p, attempt])
        attempt += 1
        X, y, _ = synthetic_data(rng, args.n, args.p, args.delta, 3, 0.03)
        choice = cv.tune(X, y)
        if not choice.model.get("features"):
            continue
        feats = choice.model["features"]
        j = int(rng.integers(len(feats)))
        ident = f"cv_{args.grid}_{kept:03d}"
        np.savez(
            out_dir / f"{ident}.npz",
            X=X,
            y=y,
            feature=feats[j],
            sigma=args.sigma,
            folds=args.folds,
            seed=args.cv_seed,
            dags=json.dumps(sorted(grid)),
            grids=json.dumps({d: _full_grid(d, grid) for d in grid}),
        )
        row = {
            "id": ident,
            "feature": feats[j],
            "winner": choice.winner,
            "candidate": cv.candidates[choice.winner].name,
            "M": feats,
            "O": choice.model["outliers"],
        }
        try:
            par = cv.test(X, y, sigma=args.sigma, features=[j])[0]
            oc = cv.test(X, y, sigma=args.sigma, features=[j], mode="over_conditioning")[0]
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


def compare(ours: list[dict], theirs: list[dict], p_tol: float = 2e-3) -> dict:
    by_id = {r["id"]: r for r in theirs}
    pairs = [(r, by_id.get(r["id"], {})) for r in ours]
    same_winner = [r["winner"] == a.get("winner") for r, a in pairs]
    same_sel = [r["M"] == a.get("M") and r["O"] == a.get("O") for r, a in pairs]
    both = [(r, a) for r, a in pairs if "p" in r and "p" in a]
    p_diff = np.array([abs(r["p"] - a["p"]) for r, a in both])
    oc_diff = np.array([abs(r["p_oc"] - a["p_oc"]) for r, a in both])
    ours_cpu = [r["cpu_seconds"] for r, _ in both]
    theirs_cpu = [a["cpu_seconds"] for _, a in both]
    out = {
        "datasets": len(pairs),
        "same_winner_rate": float(np.mean(same_winner)),
        "same_selection_rate": float(np.mean(same_sel)),
        "both_finished": len(both),
        "parametric_within_tol_rate": float(np.mean(p_diff <= p_tol)) if len(both) else None,
        "parametric_max_abs_diff": float(p_diff.max()) if len(both) else None,
        "oc_max_abs_diff": float(oc_diff.max()) if len(both) else None,
        "same_search_count_rate": float(
            np.mean([r["search_count"] == a["search_count"] for r, a in both])
        )
        if both
        else None,
        "ours_errors": sum("error" in r for r, _ in pairs),
        "anchor_errors": sum("error" in a for _, a in pairs),
        "ours_cpu_s_per_test": float(np.mean(ours_cpu)) if ours_cpu else None,
        "anchor_cpu_s_per_test": float(np.mean(theirs_cpu)) if theirs_cpu else None,
    }
    if out["ours_cpu_s_per_test"] and out["anchor_cpu_s_per_test"]:
        out["speedup"] = out["anchor_cpu_s_per_test"] / out["ours_cpu_s_per_test"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--grid", choices=sorted(GRIDS), default="small")
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--p", type=int, default=10)
    ap.add_argument("--delta", type=float, default=0.0, help="beta_{1:3}; 0 = null data")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--cv-seed", type=int, default=0)
    ap.add_argument("--sigma", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument(
        "--out", type=Path, default=ROOT / "data/08_reporting/si_pipeline_anchor/cv_summary.json"
    )
    args = ap.parse_args(argv)
    py = anchor_python(args.venv)
    if py is None:
        print(f"SKIPPED: no anchor virtualenv with si4pipeline at {args.venv}")
        return 0
    with tempfile.TemporaryDirectory(prefix="si_cv_anchor_") as tmp:
        t0 = time.time()
        ours = run_ours(args, Path(tmp))
        theirs = run_anchor(py, Path(tmp), driver="si_pipeline_cv_anchor_driver.py")
        summary = compare(ours, theirs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps(
            {
                "args": {k: str(v) for k, v in vars(args).items()},
                "wall_seconds": time.time() - t0,
                "summary": summary,
                "ours": ours,
                "anchor": theirs,
            },
            indent=2,
        )
    )
    print(
        json.dumps(
            {k: (float(f"{v:.4g}") if isinstance(v, float) else v) for k, v in summary.items()}
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
