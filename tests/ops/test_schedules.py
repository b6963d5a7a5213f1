"""conf/base/schedules.yml: validated on load, clear messages, nothing runs on a bad file."""

from datetime import UTC, datetime, timedelta

import pytest

from paper_pipelines.ops.cli import main
from paper_pipelines.ops.schedules import (
    ScheduleError,
    fire_times,
    load_schedules,
    parse_schedules,
)
from tests.kedro_helpers import PROJECT_ROOT


def test_project_schedules_are_valid():
    schedules = load_schedules(PROJECT_ROOT)
    names = {e.name for e in schedules.entries}
    assert {"dlp_weekly", "ata_nightly_smoke"} <= names
    dlp = schedules.get("dlp_weekly")
    assert (dlp.pipeline, dlp.env, dlp.cron) == ("dlp", "base", "0 3 * * 0")
    # defaults apply, an entry's own key wins
    assert dlp.retries == 1 and dlp.timeout_seconds == 3600
    assert schedules.get("ata_nightly_smoke").retries == 0


@pytest.mark.parametrize(
    ("body", "fragments"),
    [
        (
            {"pipeline": "ata", "cron": "61 * * * *"},
            ["schedules.e.cron", "'61 * * * *'", "five fields"],
        ),
        ({"pipeline": "ata", "cron": "0 3 * *"}, ["Wrong number of fields"]),
        ({"pipeline": "nope", "cron": "0 3 * * 0"}, ["unknown pipeline 'nope'", "ata", "dlp"]),
        (
            {"pipeline": "ata", "cron": "0 3 * * 0", "retriez": 2},
            ["schedules.e.retriez: unknown key"],
        ),
        ({"pipeline": "ata", "cron": "0 3 * * 0", "retries": -1}, ["schedules.e.retries"]),
        (
            {"pipeline": "ata", "cron": "0 3 * * 0", "params": {"dlp.seed": 1}},
            ["do not belong", "'ata.seed'"],
        ),
        (
            {"pipeline": "ata", "cron": "0 3 * * 0", "params": {"ata.sim.policies": "FTA,GTA"}},
            ["','"],
        ),
        (
            {"pipeline": "ata", "cron": "0 3 * * 0", "load_versions": {"ata.results": "latest"}},
            ["not a Kedro version"],
        ),
        ({"pipeline": "ata", "cron": "0 3 * * 0", "env": "prod"}, ["no folder conf/prod", "fast"]),
        ({"cron": "0 3 * * 0"}, ["schedules.e.pipeline: required but missing"]),
    ],
)
def test_bad_entries_fail_clearly(body, fragments):
    with pytest.raises(ScheduleError) as info:
        parse_schedules({"schedules": {"e": body}}, PROJECT_ROOT / "conf")
    message = str(info.value)
    assert "nothing was run" in message
    for fragment in fragments:
        assert fragment in message, message


@pytest.mark.parametrize(
    ("params", "fragments"),
    [
        ({"ata.sedd": 1}, ["schedules.e.params", "ata.sedd", "did you mean 'seed'"]),
        ({"ata.simm.K": 50}, ["ata.simm", "did you mean 'sim'"]),
        ({"ata.sim.KK": 50}, ["ata.sim.KK", "K"]),
        ({"ata.seed": "abc"}, ["ata.seed", "valid integer"]),
        ({"ata.sim.K": -5}, ["ata.sim.K"]),
    ],
)
def test_entry_params_are_checked_like_a_run_before_anything_is_scheduled(params, fragments):
    body = {"pipeline": "ata", "env": "fast", "cron": "0 3 * * 0", "params": params}
    with pytest.raises(ScheduleError) as info:
        parse_schedules({"schedules": {"e": body}}, PROJECT_ROOT / "conf")
    message = str(info.value)
    for fragment in ("nothing was run", *fragments):
        assert fragment in message, message


def test_valid_entry_params_pass_the_check():
    body = {"pipeline": "ata", "env": "fast", "cron": "0 3 * * 0", "params": {"ata.sim.K": 50}}
    entry = parse_schedules({"schedules": {"e": body}}, PROJECT_ROOT / "conf").get("e")
    assert entry.params == {"ata.sim.K": 50}


def test_every_problem_is_reported_at_once():
    raw = {
        "scheduler": {"timezone": "Mars/Olympus"},
        "schedules": {
            "a": {"pipeline": "x", "cron": "0 3 * * 0"},
            "b": {"pipeline": "ata", "cron": "bad"},
        },
        "extra": 1,
    }
    with pytest.raises(ScheduleError) as info:
        parse_schedules(raw)
    message = str(info.value)
    for fragment in (
        "unknown top-level key(s) ['extra']",
        "Mars/Olympus",
        "schedules.a.pipeline",
        "schedules.b.cron",
    ):
        assert fragment in message


def test_command_carries_params_and_pinned_versions():
    entry = parse_schedules(
        {
            "schedules": {
                "e": {
                    "pipeline": "ata",
                    "env": "fast",
                    "cron": "0 3 * * 0",
                    "params": {"ata.sim.K": 50, "ata.data.shuffle": True},
                    "load_versions": {"ata.digits_table": "2026-01-04T03.00.00.000Z"},
                }
            }
        }
    ).get("e")
    assert entry.command("py") == [
        "py",
        "-m",
        "kedro",
        "run",
        "--pipelines=ata",
        "--env=fast",
        "--params=ata.sim.K=50,ata.data.shuffle=true",
        "--load-versions=ata.digits_table:2026-01-04T03.00.00.000Z",
    ]


def test_local_env_soft_merges_over_base(project_copy):
    (project_copy / "conf/local/schedules.yml").write_text(
        "schedules:\n  dlp_weekly:\n    enabled: false\n  ata_nightly_smoke:\n    cron: '15 1 * * *'\n"
    )
    schedules = load_schedules(project_copy)
    assert not schedules.get("dlp_weekly").enabled
    assert schedules.get("dlp_weekly").cron == "0 3 * * 0"  # untouched keys stay
    assert schedules.get("ata_nightly_smoke").cron == "15 1 * * *"
    assert [e.name for e in schedules.enabled] == ["ata_nightly_smoke"]


def test_cli_rejects_a_bad_file_before_running(tmp_path, capsys):
    bad = tmp_path / "schedules.yml"
    bad.write_text("schedules:\n  x:\n    pipeline: ata\n    cron: '0 25 * * *'\n")
    assert (
        main(["schedule", "--once", "--project-path", str(PROJECT_ROOT), "--schedules", str(bad)])
        == 2
    )
    err = capsys.readouterr().err
    assert "schedules.x.cron" in err and "nothing was run" in err
    assert not (tmp_path / "data").exists()


def test_fire_times_window():
    entry = parse_schedules({"schedules": {"e": {"pipeline": "ata", "cron": "*/10 * * * *"}}}).get(
        "e"
    )
    start = datetime(2026, 1, 1, 3, 0, tzinfo=UTC)
    times = fire_times(entry, "UTC", start, start + timedelta(minutes=30))
    assert [t.minute for t in times] == [10, 20, 30]  # (start, end]
