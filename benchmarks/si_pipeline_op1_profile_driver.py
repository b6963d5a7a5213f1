"""Runs INSIDE the si4pipeline virtualenv; never imported by the project. Per-component CPU time of op1.

Reads the .npz datasets of benchmarks/si_pipeline_op1_profile.py and, for each, runs the official
parametric test of the given feature with every component's ``perform_si`` (its selection event at one
point) and plain method (``detect_outliers`` / ``select_features``) wrapped by a CPU-time counter, and
times one plain pipeline evaluation ``manager(X, y)`` (the floor: one evaluation per searched interval).

    <venv>/bin/python benchmarks/si_pipeline_op1_profile_driver.py IN_DIR OUT_JSONL
"""

import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import si4pipeline as sp
from si4pipeline import feature_selection as fs
from si4pipeline import outlier_detection as od

CLOCK = defaultdict(float)
CALLS = defaultdict(int)


def _timed(cls, method, label):
    original = getattr(cls, method)

    def wrapper(*args, **kwargs):
        t0 = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            CLOCK[label] += time.process_time() - t0
            CALLS[label] += 1

    setattr(cls, method, wrapper)


for _cls, _name, _plain in [
    (od.SoftIpod, "soft_ipod", "detect_outliers"),
    (fs.MarginalScreening, "marginal_screening", "select_features"),
    (fs.StepwiseFeatureSelection, "stepwise", "select_features"),
    (fs.Lasso, "lasso", "select_features"),
]:
    _timed(_cls, "perform_si", f"{_name}.event")
    _timed(_cls, _plain, f"{_name}.plain")


def build():
    X, y = sp.initialize_dataset()
    y = sp.mean_value_imputation(X, y)
    X, y = sp.remove_outliers(X, y, sp.soft_ipod(X, y, 0.02))
    X = sp.extract_features(X, sp.marginal_screening(X, y, 5))
    M = sp.union(sp.stepwise_feature_selection(X, y, 3), sp.lasso(X, y, 0.08))
    return sp.construct_pipelines(output=M)


def main(in_dir, out_path):
    rows = []
    for path in sorted(Path(in_dir).glob("*.npz")):
        d = np.load(path, allow_pickle=False)
        X, y, feature = d["X"], d["y"], int(d["feature"])
        mgr = build()
        M, _ = mgr(X, y)
        row = {"id": path.stem}
        if feature not in list(M):
            row["error"] = "different selection"
            rows.append(row)
            continue
        t0 = time.process_time()
        for _ in range(5):
            mgr(X, y)
        row["plain_eval_cpu_s"] = (time.process_time() - t0) / 5
        CLOCK.clear()
        CALLS.clear()
        t0 = time.process_time()
        try:
            _, res = mgr.inference(X, y, 1.0, test_index=list(M).index(feature), retain_result=True)
            row["search_count"] = int(res.search_count)
            row["p"] = float(res.p_value)
        except Exception as exc:  # the reference's AssertionError in its lasso polyhedron
            row["error"] = f"{type(exc).__name__}: {exc}"[:200]
        row["cpu_s"] = time.process_time() - t0
        row["components"] = {k: {"cpu_s": CLOCK[k], "calls": CALLS[k]} for k in sorted(CLOCK)}
        rows.append(row)
    Path(out_path).write_text("\n".join(json.dumps(r) for r in rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
