"""Parity with the official SRCA repository's stored outputs (hrluo/SphericalRotationDimensionReduction).

    python benchmarks/srca_official_parity.py --official /path/to/checkout   (or SRCA_OFFICIAL_DIR=...)

The official data and outputs are third-party files and are not committed here; point --official at a
checkout (or `git archive` of its Banknote/ Sphere/ GEM/ Torus/ folders). Without it the script says so
and exits 0. Checks:
1. Banknote (1 372 x 4), k = 2: our SRCA output against the stored `Banknote_output_SRCA.csv` (max abs
   difference, MSE, chosen axes), our spherelets MSE against the stored SPCA output's MSE, PCA's MSE.
2. Co-ranking: our weighted / unweighted AUC of R_NX computed on the stored outputs of the six methods
   against the AUCs the official R code saved (`AUC_<set>.rda`, `AUC_<set>_uw.rda`, R packages
   coRanking + dimRed); and our own SRCA on the stored Sphere data.
"""

from __future__ import annotations

import argparse
import gzip
import os
import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA

from paper_pipelines.pipelines.srca.coranking import coranking_scores
from paper_pipelines.pipelines.srca.metrics import reconstruction_mse
from paper_pipelines.pipelines.srca.spherelets import fit_spherelet, project_spherelet
from paper_pipelines.pipelines.srca.srca import fit_srca, project

METHODS = ["SRCA", "SPCA", "PCA", "LLE", "tSNE", "UMAP"]  # the order the official .rda files use


def read_rda_vector(path: Path, length: int = 6) -> np.ndarray:
    """The one numeric vector of `length` doubles in an R .rda file (gzip, XDR big-endian)."""
    with gzip.open(path) as handle:
        raw = handle.read()
    header = struct.pack(">ii", 14, length)  # REALSXP, length
    at = raw.find(header)
    if at < 0:
        raise ValueError(f"no numeric vector of length {length} in {path}")
    return np.array(struct.unpack(f">{length}d", raw[at + 8 : at + 8 + 8 * length]))


def read_matrix(path: Path) -> np.ndarray:
    return pd.read_csv(path, header=None).to_numpy(dtype=float)


def banknote(root: Path) -> None:
    data = pd.read_csv(root / "Banknote" / "BankNote.csv")
    X = data.iloc[:, 1:5].to_numpy(dtype=float)
    stored = read_matrix(root / "Banknote" / "Banknote_output_SRCA.csv")
    model = fit_srca(X, 2, subset_search="exhaustive")
    ours = project(model, X)
    spca_stored = read_matrix(root / "Banknote" / "Banknote_output_SPCA.csv")
    pca = PCA(n_components=2).fit(X)
    rows = [
        ("SRCA max |ours - stored|", float(np.abs(ours - stored).max())),
        ("SRCA MSE ours", reconstruction_mse(X, ours)),
        ("SRCA MSE stored", reconstruction_mse(X, stored)),
        ("SRCA axes ours (0-based)", str(list(model.axes))),
        ("Spherelets MSE ours", reconstruction_mse(X, project_spherelet(fit_spherelet(X, 2), X))),
        ("Spherelets MSE stored (SPCA)", reconstruction_mse(X, spca_stored)),
        ("PCA MSE ours (k = 2)", reconstruction_mse(X, pca.inverse_transform(pca.transform(X)))),
    ]
    print("## Banknote, k = 2\n")
    print(pd.DataFrame(rows, columns=["quantity", "value"]).to_string(index=False))


def coranking(root: Path, sets: list[str]) -> None:
    print("\n## Co-ranking AUC: ours on the stored outputs vs the official R values\n")
    rows = []
    for name in sets:
        folder = root / name
        data_file = folder / ("BankNote.csv" if name == "Banknote" else f"{name}.csv")
        if name == "Banknote":
            X = pd.read_csv(data_file).iloc[:, 1:5].to_numpy(dtype=float)
        else:
            X = read_matrix(data_file)
        weighted = read_rda_vector(folder / f"AUC_{name}.rda")
        unweighted = read_rda_vector(folder / f"AUC_{name}_uw.rda")
        for i, method in enumerate(METHODS):
            out = read_matrix(folder / f"{name}_output_{method}.csv")
            s = coranking_scores(X, out)
            rows.append(
                {
                    "data": name,
                    "method": method,
                    "auc_w_ours": s["auc_weighted"],
                    "auc_w_official": weighted[i],
                    "auc_uw_ours": s["auc_unweighted"],
                    "auc_uw_official": unweighted[i],
                }
            )
        if name == "Sphere":
            own = project(fit_srca(X, 2), X)
            s = coranking_scores(X, own)
            rows.append(
                {
                    "data": name,
                    "method": "SRCA (our fit)",
                    "auc_w_ours": s["auc_weighted"],
                    "auc_w_official": weighted[0],
                    "auc_uw_ours": s["auc_unweighted"],
                    "auc_uw_official": unweighted[0],
                }
            )
    table = pd.DataFrame(rows)
    print(table.round(4).to_string(index=False))
    diff = (table.auc_w_ours - table.auc_w_official).abs().max()
    print(f"\nlargest |weighted AUC ours - official| = {diff:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, default=os.environ.get("SRCA_OFFICIAL_DIR"))
    parser.add_argument("--sets", nargs="*", default=["Sphere", "Banknote", "GEM", "Torus"])
    args = parser.parse_args()
    if args.official is None or not (Path(args.official) / "Banknote").exists():
        print(
            "srca_official_parity: skipped (pass --official <checkout of "
            "hrluo/SphericalRotationDimensionReduction> or set SRCA_OFFICIAL_DIR)"
        )
        sys.exit(0)
    root = Path(args.official)
    banknote(root)
    coranking(root, args.sets)


if __name__ == "__main__":
    main()
