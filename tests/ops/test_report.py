"""The scoreboard and the pages' results sections, built from real fast runs in a temporary data root."""

from __future__ import annotations

import re
import shutil

import pandas as pd
import pytest

from paper_pipelines.ops.report import BEGIN, END, build, section_of
from tests.kedro_helpers import PROJECT_ROOT, make_project_copy, run_session

PAPERS = ("ata", "srca")  # two of the fastest papers


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    project = make_project_copy(tmp_path_factory.mktemp("report") / "project")
    shutil.copytree(PROJECT_ROOT / "docs", project / "docs")
    # every paper is implemented now: a planned row (as a new paper starts) keeps that path tested
    readme = (PROJECT_ROOT / "README.md").read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(readme) if line.startswith("| `ata` |"))
    readme.insert(at + 1, "| `zz_planned` | A planned paper (Someone et al.) | planned |\n")
    (project / "README.md").write_text("".join(readme))
    for slug in PAPERS:
        run_session(project, slug, env="fast")
    problems = build(project, list(PAPERS), env="fast")
    assert problems == []
    return project


def test_scoreboard_lists_every_claim_of_both_papers_and_the_planned_ones(reported):
    import importlib

    board = (reported / "docs/results.md").read_text()
    for slug in PAPERS:
        claims = importlib.import_module(f"paper_pipelines.pipelines.{slug}.report").CLAIMS
        assert f"[{slug}](papers/{slug}.md)" in board
        for claim in claims:
            assert f"| {slug} | {claim.id} |" in board, claim.id
    from paper_pipelines.ops.report import planned_papers

    planned = planned_papers((reported / "README.md").read_text())
    assert planned == [("zz_planned", "A planned paper (Someone et al.)")]
    for slug, _ in planned:
        assert f"| {slug} | not implemented yet |" in board, slug
    assert (reported / "docs/results/ata.png").is_file()


def test_pages_carry_the_generated_section_of_the_run_they_cite(reported):
    for slug in PAPERS:
        section = section_of((reported / f"docs/papers/{slug}.md").read_text())
        assert section.startswith(BEGIN) and section.endswith(END)
        assert "env `fast`" in section and "| method |" in section


def test_a_claim_that_does_not_hold_is_shown_not_reproduced(reported):
    claims_dir = reported / "data/fast/08_reporting/ata/claims.parquet"
    version = sorted(p.name for p in claims_dir.iterdir())[-1]
    claims = pd.read_parquet(claims_dir / version / "claims.parquet")
    board = (reported / "docs/results.md").read_text()
    for row in claims.itertuples():
        line = next(x for x in board.splitlines() if x.startswith(f"| ata | {row.claim} |"))
        assert line.rstrip(" |").endswith("yes" if row.holds else "no")


def test_check_passes_on_the_same_run_and_fails_on_a_hand_edited_number(reported):
    assert build(reported, list(PAPERS), env="fast", check=True) == []
    page = reported / "docs/papers/srca.md"
    text = page.read_text()
    section = section_of(text)
    number = re.search(r"\| (\d+\.\d+) \|", section.split("\n", 3)[3])
    edited = section.replace(f"| {number[1]} |", "| 12345.6 |", 1)
    page.write_text(text.replace(section, edited))
    try:
        problems = build(reported, ["srca"], env="fast", check=True)
    finally:
        page.write_text(text)
    assert problems and "differ" in problems[0] and "12345.6" in problems[0]


def test_check_ignores_timings_but_not_other_numbers():
    from paper_pipelines.ops.report import comparable

    page = (
        "Run `r1` · commit `abc` · wall time 12 s\n"
        "| method | acc | prune_seconds |\n|---|---|---|\n| dlp | 0.5 | 12.3 |\n\n"
        "| claim | ours |\n|---|---|\n| c | time_ratio_a_over_b = 0.0283, acc = 0.5 |"
    )
    rerun = page.replace("r1", "r2").replace("12.3", "13.1").replace("0.0283", "0.0291")
    assert comparable(page) == comparable(rerun)
    assert comparable(page) != comparable(page.replace("| 0.5 |", "| 0.6 |"))
    assert comparable(page) != comparable(page.replace("acc = 0.5", "acc = 0.6"))


def test_the_page_and_scoreboard_show_the_measured_mutation_score_and_check_sees_a_change(reported):
    import json

    page = reported / "docs/papers/srca.md"
    score_file = reported / "docs/mutation/srca.json"
    score_file.parent.mkdir(exist_ok=True)
    score_file.unlink(missing_ok=True)  # start from "not measured", whatever the checkout holds
    assert build(reported, ["srca"], env="fast") == []
    measured = {"mutants": 40, "killed": 35, "equivalent": 2, "survived": 3, "score": 35 / 38}
    score_file.write_text(json.dumps({**measured, "commit": "abc1234", "date": "2026-12-01"}))
    original = page.read_text()
    try:
        assert build(reported, ["srca"], env="fast") == []
        section = section_of(page.read_text())
        assert "92.1 % (35 killed, 2 equivalent, 3 survived of 40 mutants" in section
        assert "commit `abc1234`" in section
        board = (reported / "docs/results.md").read_text()
        assert next(x for x in board.splitlines() if x.startswith("| [srca]")).count("92.1 %") == 1
        # a new score without a new report is a stale page
        score_file.write_text(
            json.dumps({**measured, "killed": 36, "survived": 2, "score": 36 / 38})
        )
        problems = build(reported, ["srca"], env="fast", check=True)
        assert problems and "94.7 %" in problems[0]
        # a run cut short by its budget is a sample, and the page says so
        partial = {**measured, "killed": 30, "survived": 5, "score": 30 / 35, "mutants": 40}
        partial.update(tested=37, untested=3, complete=False, no_tests=2, score_ci95=[0.71, 0.94])
        score_file.write_text(json.dumps(partial))
        assert build(reported, ["srca"], env="fast") == []
        section = section_of(page.read_text())
        assert "85.7 % so far (95 % interval 71.0-94.0 %)" in section
        assert (
            "(2 of them reached by no unit test) of 37 mutants tested, drawn at random from 40"
            in section
        )
        board = (reported / "docs/results.md").read_text()
        assert "85.7 % (37 of 40 tested)" in next(
            x for x in board.splitlines() if x.startswith("| [srca]")
        )
    finally:
        score_file.unlink()
        page.write_text(original)
    assert "Mutation score: not measured yet (`make mutate PAPER=srca`)." in section_of(original)


def test_an_optional_pipeline_gets_its_own_section_on_its_papers_page():
    from paper_pipelines.ops.report import (
        PaperRun,
        optional_markers,
        optional_pipelines_of,
        optional_section,
    )

    assert optional_pipelines_of("les") == ["les_molecules"]
    assert optional_pipelines_of("ata") == []
    claims = pd.DataFrame(
        {"claim": ["c1"], "statement": ["s"], "ours": ["x = 1"], "paper": [""], "source": ["abs"],
         "gates": [False], "holds": [True], "condition": ["x > 0"]}
    )  # fmt: skip
    record = {"run_id": "r1", "git": {"commit": "abc"}, "env": "base", "wall_seconds": 3.0}
    run = PaperRun("les_molecules", record, pd.DataFrame({"method": ["les"], "auroc": [0.5]}),
                   claims, None)  # fmt: skip
    section = optional_section(run)
    begin, end = optional_markers("les_molecules")
    lines = section.splitlines()
    assert lines[0] == begin and lines[-1] == end and lines[1].startswith("Run `r1`")
    assert "| les | 0.5 |" in section and "| c1 | s | x = 1 |  | abs | no | yes |" in section
    assert "Mutation" not in section and BEGIN not in section and END not in section


def test_mutation_only_rewrites_the_score_lines_and_nothing_else(tmp_path):
    import json

    from paper_pipelines.ops.report import update_mutation

    shutil.copytree(PROJECT_ROOT / "docs", tmp_path / "docs")
    (tmp_path / "docs/mutation/srca.json").unlink(missing_ok=True)  # start from "not measured"
    assert update_mutation(tmp_path, ["srca"]) == []
    page, board = tmp_path / "docs/papers/srca.md", tmp_path / "docs/results.md"
    before_page, before_board = page.read_text(), board.read_text()
    assert "Mutation score: not measured yet (`make mutate PAPER=srca`)." in before_page
    assert update_mutation(tmp_path, ["srca"], check=True) == []
    measured = {"mutants": 40, "killed": 35, "equivalent": 2, "survived": 3, "score": 35 / 38}
    (tmp_path / "docs/mutation/srca.json").write_text(json.dumps({**measured, "commit": "abc1234"}))
    problems = update_mutation(tmp_path, ["srca"], check=True)
    assert len(problems) == 2 and "92.1 %" in problems[1]  # the page's line and the board's cell
    assert page.read_text() == before_page  # check writes nothing

    assert update_mutation(tmp_path, ["srca"]) == []
    changed = [
        (old, new)
        for old, new in zip(before_page.splitlines(), page.read_text().splitlines(), strict=True)
        if old != new
    ]
    assert len(changed) == 1 and "92.1 % (35 killed, 2 equivalent, 3 survived" in changed[0][1]
    rows = [
        (old, new)
        for old, new in zip(before_board.splitlines(), board.read_text().splitlines(), strict=True)
        if old != new
    ]
    assert len(rows) == 1 and rows[0][1].startswith("| [srca](papers/srca.md) |")
    assert rows[0][1].split(" | ")[7] == "92.1 %"
    assert rows[0][0].split(" | ")[:7] == rows[0][1].split(" | ")[:7]
    assert update_mutation(tmp_path, ["srca"], check=True) == []


def test_mutation_only_names_a_page_without_its_generated_section(tmp_path):
    from paper_pipelines.ops.report import update_mutation

    shutil.copytree(PROJECT_ROOT / "docs", tmp_path / "docs")
    page = tmp_path / "docs/papers/srca.md"
    page.write_text(page.read_text().replace(BEGIN, "").replace(END, ""))
    assert update_mutation(tmp_path, ["srca"]) == [
        "srca: docs/papers/srca.md has no generated results section"
    ]


BOARD = """# Scoreboard: which claims reproduced

Written by `make report` from the latest successful run of each paper in the `base` environment.

| paper | gating reproduced | reported-only hold | run | commit | date | wall time | mutation score | headline figure |
|---|---|---|---|---|---|---|---|---|
| [aa](papers/aa.md) | 1 / 1 | 0 / 0 | `r1` | `c1` | d | 1 s | - | - |
| [bb](papers/bb.md) | 0 / 1 | 0 / 0 | `r2` | `c2` | d | 2 s | - | - |
| [cc](papers/cc.md) | 1 / 1 | 0 / 0 | `r3` | `c3` | d | 3 s | - | - |
{planned}

## Every claim

| paper | claim | statement | paper's number | ours | gates | reproduced |
|---|---|---|---|---|---|---|
| aa | a1 | s | p | o | yes | yes |
| bb | b1 | s | p | o | yes | no |
| bb | b2 | s | p | o | no | no |
| cc | c1 | s | p | o | yes | yes |
"""


def test_a_report_of_some_papers_replaces_their_rows_and_keeps_the_others():
    from paper_pipelines.ops.report import merge_scoreboard

    old = BOARD.format(planned="| zz | not implemented yet | | | | | | | |")
    new = """Written by `make report` from the latest successful run of each paper in the `base` environment.

| paper | gating reproduced | reported-only hold | run | commit | date | wall time | mutation score | headline figure |
|---|---|---|---|---|---|---|---|---|
| [bb](papers/bb.md) | 1 / 1 | 0 / 0 | `r9` | `c9` | d | 9 s | - | - |
| [dd](papers/dd.md) | 1 / 1 | 0 / 0 | `r8` | `c8` | d | 8 s | - | - |
| yy | not implemented yet | | | | | | | |

## Every claim

| paper | claim | statement | paper's number | ours | gates | reproduced |
|---|---|---|---|---|---|---|
| bb | b1 | s | p | o | yes | yes |
| dd | d1 | s | p | o | yes | yes |
"""
    merged = merge_scoreboard(old, new, ["bb", "dd"]).splitlines()
    rows = [line for line in merged if line.startswith("| ") and "---" not in line]
    assert [r.split(" | ")[0] for r in rows] == [
        "| paper", "| [aa](papers/aa.md)", "| [bb](papers/bb.md)", "| [cc](papers/cc.md)",
        "| [dd](papers/dd.md)", "| yy", "| paper", "| aa", "| bb", "| cc", "| dd",
    ]  # fmt: skip
    assert "`r9`" in rows[2] and "`r3`" in rows[3]  # bb from the new run, cc kept
    assert "| bb | b2 |" not in "\n".join(merged)  # bb's claims are the new run's only
    assert "| zz |" not in "\n".join(merged)  # planned rows follow the README of now


def test_merging_a_board_with_itself_changes_nothing():
    from paper_pipelines.ops.report import _board_rows, merge_scoreboard

    board = (PROJECT_ROOT / "docs/results.md").read_text()
    slugs = list(_board_rows(board)[1])
    assert len(slugs) == 20
    assert merge_scoreboard(board, board, slugs) == board
    assert merge_scoreboard(board, board, slugs[:3]) == board
