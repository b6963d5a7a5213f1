"""The fast-environment acceptance tests of tca, srca, core_kernel, neutrality and si_pipeline at seeds 0-4:
does each pass as a property of the method, or only of the default seed?

For each paper and seed this runs the paper's acceptance-style tests in its own pytest process with
PAPER_PIPELINES_FAST_SEED set (tests.kedro_helpers.fast_seed_params: the module's fast-run fixture then
runs with ``<slug>.seed = s``), keeps the project copy under ``--basetemp``, and reads the run's
metrics.json and claims.parquet from it. It prints, per paper, one row per seed with the values the tests
compare (a value that misses its bar is marked ``*``), each test's pass/fail and the first assertion
message of a failed one; then each check's range over the seeds, and a JSON summary.

    .venv/bin/python benchmarks/fast_acceptance_seeds.py [--papers tca srca] [--seeds 0 1 2 3 4]
        [--workdir /tmp/fast_acceptance_seeds] [--json out.json]

Each paper takes one to a few minutes per seed (tca and si_pipeline make two or three fast runs per
seed); the time ratios of tca and si_pipeline are wall-clock measurements and depend on the machine's
load, not only on the seed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.kedro_helpers import FAST_SEED_ENV  # noqa: E402


@dataclass(frozen=True)
class Check:
    """One comparison a test makes: ``value(metrics)`` against the bar ``ok(value)``. A check that
    failed at one of seeds 0-4 left its test (``in_test=False``): only this benchmark measures it, and
    its spread is on the paper's page."""

    label: str
    bar: str
    value: Callable[[dict], Any]
    ok: (
        Callable[[Any], bool] | None
    )  # None: a value shown beside the checks, with no bar of its own
    in_test: bool = True


@dataclass(frozen=True)
class Paper:
    test_file: str
    tests: tuple[str, ...]
    checks: tuple[Check, ...]
    claims: tuple[str, ...] = ()  # claims the tests assert hold at fast scale
    # which metrics.json version is the seed's run (si_pipeline: the first)
    metrics_version: int = -1


def _c(label: str, bar: str, value, ok, in_test: bool = True) -> Check:
    return Check(label, bar, value, ok, in_test)


PAPERS: dict[str, Paper] = {
    "tca": Paper(
        "tests/pipelines/tca/test_pipeline.py",
        ("test_fast_scale_acceptance_checks", "test_claims_table"),
        (
            _c(
                "tca-src",
                ">= 1.5",
                lambda m: m["acc_linear_tca"] - m["acc_source"],
                lambda v: v >= 1.5,
            ),
            _c(
                "tca-mean",
                ">= 1.0",
                lambda m: m["acc_linear_tca"] - m["acc_mean_only"],
                lambda v: v >= 1.0,
                in_test=False,  # spec check 2: +0.83 pt at seed 2, so reported on docs/papers/tca.md
            ),
            _c("t_ratio", "<= 0.10", lambda m: m["time_ratio_tca_over_tent"], lambda v: v <= 0.10),
            _c(
                "mem_ratio",
                "< 1",
                lambda m: m["tca_peak_bytes"] / m["tent_peak_bytes"],
                lambda v: v < 1,
            ),
            _c("w_same", "True", lambda m: m["weights_unchanged_by_tca"], lambda v: v is True),
            _c(
                "clean_tca-src",
                "== 0",
                lambda m: m["clean_acc_after_linear_tca"] - m["clean_acc_source"],
                lambda v: v == 0,
            ),
            _c(
                "clean_tent-src",
                "!= 0",
                lambda m: m["clean_acc_after_continual_tent"] - m["clean_acc_source"],
                lambda v: v != 0,
            ),
        ),
        ("no_forgetting",),
    ),
    "srca": Paper(
        "tests/pipelines/srca/test_pipeline.py",
        (
            "test_exact_sphere_is_recovered",
            "test_curved_data_beats_pca",
            "test_flat_tables_never_worse_than_pca",
            "test_out_of_sample_beats_pca",
            "test_coranking_on_the_sphere",
            "test_claims_table_holds_where_the_fast_run_checks",
        ),
        (
            _c("sph_mse", "< 1e-8", lambda m: m["exact_sphere_mse"], lambda v: v < 1e-8),
            _c("sph_r", "< 1e-4", lambda m: m["exact_sphere_radius_error"], lambda v: v < 1e-4),
            _c("sph_c", "< 1e-4", lambda m: m["exact_sphere_center_error"], lambda v: v < 1e-4),
            _c(
                "circle",
                "<= 0.2",
                lambda m: m["mse_ratio_srca_over_pca_circle_k1"],
                lambda v: v <= 0.2,
            ),
            _c("phase", ">= 0.95", lambda m: m["phase_recovery_circle"], lambda v: v >= 0.95),
            _c(
                "co2", "<= 0.25", lambda m: m["mse_ratio_srca_over_pca_co2_k1"], lambda v: v <= 0.25
            ),
            _c("flat", "<= 1.01", lambda m: m["max_ratio_srca_over_pca_flat"], lambda v: v <= 1.01),
            _c(
                "oos_circle",
                "< 1",
                lambda m: m["oos_mse_ratio_srca_over_pca_circle_k1"],
                lambda v: v < 1,
            ),
            _c(
                "oos_co2", "< 1", lambda m: m["oos_mse_ratio_srca_over_pca_co2_k1"], lambda v: v < 1
            ),
            _c("auc", ">= 0.95", lambda m: m["coranking_auc_srca_sphere"], lambda v: v >= 0.95),
            _c(
                "auc-pca",
                ">= 0.3",
                lambda m: m["coranking_auc_srca_sphere"] - m["coranking_auc_pca_sphere"],
                lambda v: v >= 0.3,
            ),
        ),
        (
            "exact_sphere",
            "circle_beats_pca",
            "co2_loop_beats_pca",
            "flat_never_worse",
            "out_of_sample",
            "sphere_coranking",
        ),
    ),
    "core_kernel": Paper(
        "tests/pipelines/core_kernel/test_pipeline.py",
        (
            "test_core_kernel_reproduces_all_three_algorithms_weights",
            "test_projection_beats_uniform_sampling_of_the_same_size",
            "test_extension_clusters_as_well_as_full_mkc_and_scales",
            "test_results_have_one_row_per_method",
            "test_claims_table_names_every_spec_check",
        ),
        (
            _c("err_mkkm", "< 0.02", lambda m: m["weight_rel_error_mkkm"], lambda v: v < 0.02),
            _c(
                "err_smkkm",
                "< 0.02",
                lambda m: m["weight_rel_error_simplemkkm"],
                lambda v: v < 0.02,
            ),
            _c("err_lf", "< 0.02", lambda m: m["weight_rel_error_latefusion"], lambda v: v < 0.02),
            _c(
                "max_err",
                "<= 0.01 (claim)",
                lambda m: max(
                    m[f"weight_rel_error_{a}"] for a in ("mkkm", "simplemkkm", "latefusion")
                ),
                lambda v: v <= 0.01,
            ),
            _c(
                "unif_smkkm",
                "(shown)",
                lambda m: m["uniform_weight_rel_error_simplemkkm"],
                None,
            ),
            _c(
                "unif/proj",
                "> 1",
                lambda m: (
                    m["uniform_weight_rel_error_simplemkkm"] / m["weight_rel_error_simplemkkm"]
                ),
                lambda v: v > 1,
            ),
            _c(
                "acc_core-full",
                ">= -0.03",
                lambda m: m["acc_core"] - m["acc_full"],
                lambda v: v >= -0.03,
            ),
            _c("acc_core_5000", ">= 0.9", lambda m: m["acc_core_largest_n"], lambda v: v >= 0.9),
            _c(
                "speedup_5000",
                "> 1",
                lambda m: m["speedup_simplemkkm_largest_n"],
                lambda v: v > 1,
            ),
        ),
        ("core_weights_within_1pct", "projection_beats_uniform", "extension_matches_full"),
    ),
    "neutrality": Paper(
        "tests/pipelines/neutrality/test_pipeline.py",
        ("test_claims_hold_where_the_fast_run_can_check_them", "test_contract_and_outputs"),
        (
            _c("oracle", ">= 0.95", lambda m: m["rules_oracle_alignment"], lambda v: v >= 0.95),
            _c(
                "oracle_min_task",
                ">= 0.9",
                lambda m: m["rules_oracle_min_task_alignment"],
                lambda v: v >= 0.9,
            ),
            _c(
                "refuse_unsafe",
                "== 1",
                lambda m: m["rules_always_refuse_unsafe_alignment"],
                lambda v: v == 1,
            ),
            _c(
                "refuse_other",
                "<= 0.1",
                lambda m: m["rules_always_refuse_max_other_alignment"],
                lambda v: v <= 0.1,
            ),
            _c(
                "biased_align",
                "<= 0.05",
                lambda m: m["rules_always_biased_alignment"],
                lambda v: v <= 0.05,
            ),
            _c(
                "biased_bias",
                ">= 0.9",
                lambda m: m["rules_always_biased_bias_rate"],
                lambda v: v >= 0.9,
            ),
            _c("sym_tv", "== 0", lambda m: m["symmetric_tv_distance"], lambda v: v == 0),
            _c("sym_gap", "== 0", lambda m: m["symmetric_refusal_gap"], lambda v: v == 0),
            _c("asym_tv", ">= 0.9", lambda m: m["asymmetric_tv_distance"], lambda v: v >= 0.9),
            _c("asym_gap", ">= 0.9", lambda m: m["asymmetric_refusal_gap"], lambda v: v >= 0.9),
            _c("judge_f1", ">= 0.70", lambda m: m["judge_macro_f1"], lambda v: v >= 0.70),
        ),
        (
            "oracle_aligned",
            "single_technique_policies_separate",
            "uniform_neutrality_detects_asymmetry",
        ),
    ),
    "si_pipeline": Paper(
        "tests/pipelines/si_pipeline/test_pipeline.py",
        ("test_metrics_keep_their_contract", "test_claims_table_reports_every_claim"),
        (
            _c("exactness", "<= 2e-3", lambda m: m["exactness_max_abs_diff"], lambda v: v <= 2e-3),
            _c(
                "within_bounds", "True", lambda m: m["exactness_within_bounds"], lambda v: v is True
            ),
            _c("s_per_test", "< 5", lambda m: m["mean_seconds_per_test"], lambda v: 0 < v < 5),
            _c("failed_tests", "== 0", lambda m: m["n_failed_tests"], lambda v: v == 0),
            _c(
                "null_fpr_par",
                "in [0, 1]",
                lambda m: m["null_fpr_parametric"],
                lambda v: 0 <= v <= 1,
            ),
            _c("power_par", "in [0, 1]", lambda m: m["power_parametric"], lambda v: 0 <= v <= 1),
        ),
        ("exactness",),
        metrics_version=0,  # runs 1 and 2 at the seed, run 3 at OTHER_SEED
    ),
}


def _versions(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_dir()) if path.exists() else []


def read_run(basetemp: Path, slug: str, paper: Paper) -> tuple[dict | None, dict | None]:
    """metrics.json and the claims' verdicts of the seed's run in the kept project copy."""
    found = sorted(basetemp.glob(f"{slug}*/project/data/fast/08_reporting/{slug}"))
    if not found:
        return None, None
    reporting = found[0]
    versions = _versions(reporting / "metrics.json")
    if not versions:
        return None, None
    version = versions[paper.metrics_version]
    metrics = json.loads((version / "metrics.json").read_text())
    claims = None
    claim_versions = _versions(reporting / "claims.parquet")
    if claim_versions:
        import pandas as pd

        table = pd.read_parquet(claim_versions[paper.metrics_version] / "claims.parquet")
        claims = {str(k): bool(v) for k, v in zip(table["claim"], table["holds"], strict=True)}
    return metrics, claims


def read_junit(path: Path) -> dict[str, dict]:
    """Each test's outcome and the first line of its failure message."""
    outcomes: dict[str, dict] = {}
    if not path.exists():
        return outcomes
    for case in ET.parse(path).getroot().iter("testcase"):
        name = case.get("name", "")
        bad = case.find("failure")
        if bad is None:
            bad = case.find("error")
        if bad is not None:
            message = (bad.get("message") or bad.text or "").strip().splitlines()
            outcomes[name] = {"passed": False, "message": message[0][:300] if message else ""}
        elif case.find("skipped") is not None:
            outcomes[name] = {"passed": False, "message": "skipped"}
        else:
            outcomes[name] = {"passed": True, "message": ""}
    return outcomes


def run_one(slug: str, seed: int, workdir: Path) -> dict:
    paper = PAPERS[slug]
    basetemp = workdir / f"{slug}-{seed}"
    junit = workdir / f"{slug}-{seed}.xml"
    env = {**os.environ, FAST_SEED_ENV: str(seed)}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:cacheprovider",
        paper.test_file,
        "-k",
        " or ".join(paper.tests),
        "--basetemp",
        str(basetemp),
        "--junitxml",
        str(junit),
        "-q",
    ]
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    tests = read_junit(junit)
    metrics, claims = read_run(basetemp, slug, paper)
    values: dict[str, Any] = {}
    ok: dict[str, bool | None] = {}
    for check in paper.checks:
        try:
            value = check.value(metrics) if metrics is not None else None
        except (KeyError, TypeError, ZeroDivisionError):
            value = None
        values[check.label] = value
        ok[check.label] = None if value is None or check.ok is None else bool(check.ok(value))
    claim_holds = {c: (claims or {}).get(c) for c in paper.claims}
    missing = [t for t in paper.tests if t not in tests]
    if missing:  # a collection error or a crash before the tests ran
        tail = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        for name in missing:
            tests[name] = {"passed": False, "message": "not run: " + " | ".join(tail)[:300]}
    return {
        "paper": slug,
        "seed": seed,
        "returncode": proc.returncode,
        "seconds": round(seconds, 1),
        "tests": tests,
        "values": values,
        "checks_ok": ok,
        "claims": claim_holds,
    }


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float) and abs(value) >= 1000:
        return f"{value:.0f}"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e-3 and value != 0 else f"{value:.4f}"
    return str(value)


def print_paper(slug: str, rows: list[dict]) -> None:
    paper = PAPERS[slug]
    labels = [c.label for c in paper.checks]
    print(f"\n== {slug} ({paper.test_file}) ==")
    print("bars: " + ", ".join(f"{c.label} {c.bar}" for c in paper.checks))
    if any(not c.in_test for c in paper.checks):
        print("not in the tests (measured here only): " + ", ".join(
            c.label for c in paper.checks if not c.in_test))  # fmt: skip
    cells = [["seed", *labels, "tests", "s"]]
    for row in rows:
        cells.append(
            [
                str(row["seed"]),
                *(
                    _fmt(row["values"][label]) + ("*" if row["checks_ok"][label] is False else "")
                    for label in labels
                ),
                f"{sum(t['passed'] for t in row['tests'].values())}/{len(row['tests'])}",
                f"{row['seconds']:.0f}",
            ]
        )
    widths = [max(len(r[i]) for r in cells) for i in range(len(cells[0]))]
    for r in cells:
        print("  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)))
    for row in rows:
        for name, outcome in row["tests"].items():
            if not outcome["passed"]:
                print(f"  seed {row['seed']}: FAILED {name}: {outcome['message']}")
        bad_claims = [c for c, h in row["claims"].items() if h is not True]
        if bad_claims:
            print(f"  seed {row['seed']}: claims not holding: {bad_claims}")
    print("ranges over the seeds (a check is 'holds' when it meets its bar at every seed):")
    for check in paper.checks:
        vals = [r["values"][check.label] for r in rows if r["values"][check.label] is not None]
        oks = [r["checks_ok"][check.label] for r in rows]
        verdict = (
            "shown"
            if check.ok is None
            else "holds"
            if all(o is True for o in oks)
            else f"fails at {oks.count(False)}"
        )
        numeric = [float(v) for v in vals if isinstance(v, int | float) and not isinstance(v, bool)]
        span = (
            f"{_fmt(min(numeric))} .. {_fmt(max(numeric))}" if numeric else str(sorted(set(vals)))
        )
        where = "" if check.in_test else "  (benchmark only)"
        of = "" if check.ok is None else f" of {len(rows)}"
        print(f"  {check.label:>16} {check.bar:<16} {span:<26} {verdict}{of}{where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", nargs="+", default=list(PAPERS), choices=list(PAPERS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fast_acceptance_seeds"))
    parser.add_argument("--json", type=Path, default=None, help="also write the summary here")
    args = parser.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    summary: dict[str, list[dict]] = {}
    for slug in args.papers:
        rows = []
        for seed in args.seeds:
            row = run_one(slug, seed, args.workdir)
            rows.append(row)
            passed = sum(t["passed"] for t in row["tests"].values())
            print(f"[{slug} seed {seed}] {passed}/{len(row['tests'])} tests, {row['seconds']:.0f} s",
                  flush=True)  # fmt: skip
        summary[slug] = rows
        print_paper(slug, rows)
        if args.json:
            args.json.write_text(json.dumps(summary, indent=1, default=str))
    print(f"\nwall {time.perf_counter() - start:.0f} s")
    print(json.dumps(summary, default=str))


if __name__ == "__main__":
    main()
