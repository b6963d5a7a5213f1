"""Runs INSIDE the anchor virtualenv (si4pipeline 1.0.1 + sicore); never imported by the project.

CV variant of si_pipeline_anchor_driver.py: for each saved dataset (.npz: X, y with NaN, the grids of
op1 / op2 as JSON, folds, seed, feature to test) it builds ``op1 | op2`` with list-valued
hyperparameters, tunes it by K-fold CV and runs the parametric and over-conditioning tests of the
CV-chosen pipeline; one JSON line per dataset.

    <venv>/bin/python benchmarks/si_pipeline_cv_anchor_driver.py IN_DIR OUT_JSONL
"""

import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from si_pipeline_anchor_driver import build, infer  # noqa: E402


def main(in_dir: str, out_path: str) -> None:
    rows = []
    for path in sorted(Path(in_dir).glob("*.npz")):
        d = np.load(path, allow_pickle=False)
        grids = json.loads(str(d["grids"]))
        X, y, feature = d["X"], d["y"], int(d["feature"])
        sigma = float(d["sigma"]) if float(d["sigma"]) > 0 else None
        row = {"id": path.stem, "feature": feature}
        try:
            managers = [build(dag, grids[dag]) for dag in json.loads(str(d["dags"]))]
            mgr = managers[0]
            for other in managers[1:]:
                mgr = mgr | other
            t0 = time.process_time()
            mgr.tune(X, y, num_folds=int(d["folds"]), random_state=int(d["seed"]))
            row["cpu_seconds_tune"] = time.process_time() - t0
            M, outl = mgr(X, y)
            row.update(
                winner=int(mgr.representeing_index),
                M=sorted(int(i) for i in M),
                O=sorted(int(i) for i in outl),
            )
            if feature in M:
                row.update(infer(mgr, X, y, sigma, list(M).index(feature)))
        except Exception as exc:  # the reference raises AssertionError on a few datasets; record it
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        rows.append(row)
        print(json.dumps(row), flush=True)
    Path(out_path).write_text("\n".join(json.dumps(r) for r in rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
