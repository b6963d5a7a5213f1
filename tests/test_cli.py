"""`kedro run` with names but no pipeline runs the papers the names belong to (kedro-viz's run command)."""

from paper_pipelines.cli import papers_named, run

SLUGS = ["ata", "dlp", "srca"]


def test_a_dataset_of_one_paper_selects_that_paper():
    assert papers_named({"to_outputs": "srca.metrics"}, SLUGS) == ["srca"]
    assert papers_named({"to_outputs": ["ata.metrics", "ata.results"]}, SLUGS) == ["ata"]


def test_names_of_two_papers_select_both_in_order():
    values = {"node_names": ("ata.fit", "srca.fit_srca"), "namespaces": "ata"}
    assert papers_named(values, SLUGS) == ["ata", "srca"]


def test_no_names_or_a_name_outside_every_paper_selects_nothing():
    assert papers_named({}, SLUGS) == []
    assert papers_named({"to_outputs": "srca.metrics,run_record"}, SLUGS) == []
    assert papers_named({"from_inputs": "nosuch.table"}, SLUGS) == []


def test_the_command_keeps_every_option_of_kedro_run():
    from kedro.framework.cli.project import run as kedro_run

    assert [p.name for p in run.params] == [p.name for p in kedro_run.params]


def test_a_parameter_error_is_a_short_message_not_a_traceback(project_copy):
    import subprocess
    import sys
    from pathlib import Path

    kedro = str(Path(sys.executable).with_name("kedro"))
    done = subprocess.run(
        [kedro, "run", "--pipelines=srca", "--env=fast", "--params=srca.sedd=1"],
        cwd=project_copy,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 1
    assert "Error: Invalid parameters srca.sedd" in out and "did you mean 'seed'" in out
    assert "Traceback" not in out and "╭" not in out
    # nothing written: the only JSON files under data/ are the committed authored inputs
    written = [p for p in (project_copy / "data").rglob("*.json") if "authored" not in p.parts]
    assert not written
