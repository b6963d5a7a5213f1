"""Runs INSIDE the si4pipeline virtualenv (si4pipeline 1.0.1 + sicore, numpy<2); never imported by the project.

Reads the datasets written by benchmarks/si_pipeline_fixtures.py (one .npz each: X, y with NaN, DAG name,
sigma) and writes, per dataset, the official package's numbers: its (M, O), and for up to three selected
features the parametric p-value, its bounds, the search count and the over-conditioning p-value; plus the
imputer matrices of all five imputation methods (their rows for the missing responses).

    <venv>/bin/python benchmarks/si_pipeline_fixtures_driver.py IN_DIR OUT_JSONL
"""

import json
import sys
from pathlib import Path

import numpy as np
import si4pipeline as sp
from si4pipeline.missing_imputation import (
    ChebyshevImputation,
    DefiniteRegressionImputation,
    EuclideanImputation,
    ManhattanImputation,
    MeanValueImputation,
)

IMPUTERS = {
    "mean_value_imputation": MeanValueImputation,
    "euclidean_imputation": EuclideanImputation,
    "manhattan_imputation": ManhattanImputation,
    "chebyshev_imputation": ChebyshevImputation,
    "definite_regression_imputation": DefiniteRegressionImputation,
}


def build(dag):
    """The fixture DAGs in the official constructor API (hyperparameters fixed here and in the test)."""
    X, y = sp.initialize_dataset()
    if dag == "op1":
        y = sp.mean_value_imputation(X, y)
        X, y = sp.remove_outliers(X, y, sp.soft_ipod(X, y, 0.02))
        X = sp.extract_features(X, sp.marginal_screening(X, y, 4))
        M = sp.union(sp.stepwise_feature_selection(X, y, 2), sp.lasso(X, y, 0.08))
    elif dag == "op2":
        y = sp.definite_regression_imputation(X, y)
        X = sp.extract_features(X, sp.marginal_screening(X, y, 4))
        X, y = sp.remove_outliers(X, y, sp.cook_distance(X, y, 3.0))
        M = sp.intersection(sp.stepwise_feature_selection(X, y, 2), sp.lasso(X, y, 0.08))
    elif dag == "dffits_union":
        y = sp.euclidean_imputation(X, y)
        X, y = sp.remove_outliers(X, y, sp.dffits(X, y, 4.0))
        M = sp.union(sp.marginal_screening(X, y, 2), sp.lasso(X, y, 0.1))
    elif dag == "cook_intersection":
        y = sp.manhattan_imputation(X, y)
        X, y = sp.remove_outliers(X, y, sp.cook_distance(X, y, 3.0))
        M = sp.intersection(sp.stepwise_feature_selection(X, y, 2), sp.marginal_screening(X, y, 3))
    elif dag == "od_union":
        y = sp.chebyshev_imputation(X, y)
        outl = sp.union(sp.soft_ipod(X, y, 0.02), sp.dffits(X, y, 4.0))
        X, y = sp.remove_outliers(X, y, outl)
        M = sp.lasso(X, y, 0.08)
    elif dag == "od_intersection":
        y = sp.mean_value_imputation(X, y)
        outl = sp.intersection(sp.cook_distance(X, y, 2.0), sp.dffits(X, y, 2.0))
        X, y = sp.remove_outliers(X, y, outl)
        M = sp.stepwise_feature_selection(X, y, 3)
    else:
        raise ValueError(dag)
    return sp.construct_pipelines(output=M)


def main(in_dir: str, out_path: str) -> None:
    rows = []
    for path in sorted(Path(in_dir).glob("*.npz")):
        d = np.load(path, allow_pickle=False)
        dag, X, y = str(d["dag"]), d["X"], d["y"]
        sigma = float(d["sigma"]) if float(d["sigma"]) > 0 else None
        missing = np.isnan(y)
        row = {
            "id": path.stem,
            "dag": dag,
            "imputer_rows": {
                name: cls().compute_imputer(X, y)[missing].tolist()
                for name, cls in IMPUTERS.items()
            },
        }
        try:
            mgr = build(dag)
            M, outl = mgr(X, y)
            row.update(M=sorted(int(i) for i in M), O=sorted(int(i) for i in outl), tests=[])
            for j in range(min(3, len(M))):
                _, res = mgr.inference(X, y, sigma, test_index=j, retain_result=True)
                _, p_oc = mgr.inference(
                    X, y, sigma, test_index=j, inference_mode="over_conditioning"
                )
                row["tests"].append(
                    {
                        "feature": int(list(M)[j]),
                        "p": float(res.p_value),
                        "inf_p": float(res.inf_p),
                        "sup_p": float(res.sup_p),
                        "search_count": int(res.search_count),
                        "p_oc": float(p_oc),
                        "stat": float(res.stat),
                    }
                )
        except Exception as exc:  # recorded, the dataset is then left out of the fixture
            row["error"] = f"{type(exc).__name__}: {exc}"[:300]
        rows.append(row)
        print(json.dumps({k: row.get(k) for k in ("id", "M", "O", "error")}), flush=True)
    Path(out_path).write_text("\n".join(json.dumps(r) for r in rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
