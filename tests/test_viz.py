"""kedro-viz serves offline and headless Chromium renders every registered paper pipeline.

Starts `kedro viz run` on a free loopback port, waits for its API, then loads the page in Debian's
chromium (installed by .ci/run). The screenshot is kept under .artifacts/ for people to look at.
"""

from __future__ import annotations

import html
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from paper_pipelines.pipeline_registry import paper_slugs
from tests.kedro_helpers import PROJECT_ROOT, make_project_copy

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--virtual-time-budget=20000",
]
ARTIFACTS = PROJECT_ROOT / ".artifacts"

pytestmark = [
    pytest.mark.viz,
    pytest.mark.skipif(
        CHROMIUM is None, reason="chromium not installed (apt-get install chromium)"
    ),
]


def free_port() -> int:
    """A free loopback port below 49152 (kedro-viz refuses ports in the ephemeral range)."""
    for port in range(41410, 41910, 5):  # viz itself may move up to 4 ports further
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 41410 and 41910 for kedro-viz")


@pytest.fixture(scope="module")
def viz_server(tmp_path_factory):
    port = free_port()
    kedro = Path(sys.executable).with_name("kedro")
    env = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"}
    log_path = tmp_path_factory.mktemp("viz") / "kedro-viz.log"
    url = f"http://127.0.0.1:{port}"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [str(kedro), "viz", "run", "--no-browser", "--host", "127.0.0.1", "--port", str(port)],
            cwd=PROJECT_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: viz spawns a child server
        )
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    with urllib.request.urlopen(f"{url}/api/main", timeout=5) as response:
                        main = json.load(response)
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        tail = log_path.read_text()[-2000:]
                        pytest.fail(
                            f"kedro viz did not answer on {url} (exit {proc.poll()}):\n{tail}"
                        )
                    time.sleep(2)
            yield url, main
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=30)


def chromium(*args: str) -> str:
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run(
            [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=120,
        )
    return out.stdout


def test_api_lists_every_paper_pipeline(viz_server):
    _, main = viz_server
    registered = {p["id"] for p in main["pipelines"]}
    assert set(paper_slugs()) | {"__default__"} <= registered


def test_page_shows_pipelines_and_their_namespaces(viz_server):
    url, _ = viz_server
    dom = chromium("--dump-dom", f"{url}/?pid=__default__")
    # the pipeline selector lists every registered paper
    for slug in paper_slugs():
        assert re.search(rf">{re.escape(slug)}<", dom), f"pipeline {slug} not on the page"
    # the main job is drawn folded into its namespace box
    assert dom.count("pipeline-node pipeline-node--modular") >= 1
    expanded = chromium("--dump-dom", f"{url}/?pid=dlp&expandAllPipelines=true")
    assert expanded.count("pipeline-node pipeline-node--task") >= 10
    assert ">dlp.metrics<" in expanded


def test_screenshot_is_kept_as_an_artefact(viz_server):
    url, _ = viz_server
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "kedro-viz-dlp.png"
    shot.unlink(missing_ok=True)
    chromium(
        "--window-size=1400,900", f"--screenshot={shot}", f"{url}/?pid=dlp&expandAllPipelines=true"
    )
    assert shot.exists() and shot.stat().st_size > 20_000


def test_run_command_shown_for_a_dataset_of_another_paper_runs(viz_server, tmp_path):
    """The metadata panel's "Run command" for srca.metrics is run as shown, in a project copy."""
    url, _ = viz_server
    with urllib.request.urlopen(f"{url}/api/pipelines/srca", timeout=30) as response:
        nodes = json.load(response)["nodes"]
    (node,) = [n for n in nodes if n["name"] == "srca.metrics"]
    dom = chromium(
        "--dump-dom", f"{url}/?pid=srca&sid={node['id']}&sn=srca.metrics&expandAllPipelines=true"
    )
    shown = re.search(r"kedro run --to-outputs=[\w.]+", html.unescape(dom))
    assert shown, "no run command in the metadata panel"
    assert shown.group(0) == "kedro run --to-outputs=srca.metrics"
    project = make_project_copy(tmp_path / "project")
    command = shlex.split(shown.group(0))
    command[0] = str(Path(sys.executable).with_name("kedro"))
    # the command exactly as shown; the fast environment through KEDRO_ENV, as a user may set it
    env = {**os.environ, "KEDRO_ENV": "fast", "KEDRO_DISABLE_TELEMETRY": "1"}
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    assert list((project / "data/fast/08_reporting/srca/metrics.json").iterdir())
