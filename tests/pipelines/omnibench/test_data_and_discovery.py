"""Authored specs are checked before anything runs; discovery explores and abstracts subtasks."""

import copy

import numpy as np
import pytest
import yaml

from paper_pipelines.pipelines.omnibench import data, discovery
from tests.kedro_helpers import PROJECT_ROOT


@pytest.fixture
def raw():
    return yaml.safe_load((PROJECT_ROOT / data.APPS_FILE).read_text())


def _task(edges, nodes=("a", "b")):
    return {
        "task_id": "t",
        "task_instruction": "x",
        "dag": {"nodes": list(nodes), "edges": edges},
        "subtasks": [
            {"id": n, "subtask": "photo_lab.grayscale", "parameters": {"src": "s", "dst": f"d{n}"}}
            for n in nodes
        ],
    }


def test_the_authored_desktop_loads(raw):
    desktop = data.load_desktop(raw, None, 3)
    assert len(desktop["apps"]) == 16 and len(desktop["categories"]) == 8
    assert sum(len(a["effects"]) for a in desktop["apps"].values()) == 40
    assert len(desktop["files"]) == 21 and desktop["files"][0] == {
        "path": "Desktop/photo1.png",
        "type": "image",
    }
    assert len(data.load_desktop(raw, ["photo_lab"], 1)["files"]) == 10
    with pytest.raises(data.SpecError, match=r"unknown apps \['nope'\]"):
        data.load_desktop(raw, ["nope"], 3)
    with pytest.raises(data.SpecError, match="needs keys"):
        data.load_desktop({"apps": {}}, None, 3)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda a: a["screens"]["home"][0].update(goto="nowhere"),
            r"home\[0\]\.goto: dangling screen 'nowhere'",
        ),
        (
            lambda a: a["screens"]["filters"][0].update(effect="sharpen"),
            r"dangling control: effect 'sharpen'",
        ),
        (
            lambda a: a["screens"]["grayscale_dialog"].pop(2),
            r"effects\.grayscale: no control triggers",
        ),
        (
            lambda a: a["screens"]["grayscale_dialog"].pop(0),
            r"its dialog has no Edit for slots \['src'\]",
        ),
        (
            lambda a: a["screens"]["home"].pop(0),
            r"effects\.grayscale: its dialog 'grayscale_dialog' is unreachable",
        ),
        (lambda a: a.update(home="start"), r"home: screen 'start' is not defined"),
        (lambda a: a.pop("title"), r"missing key 'title'"),
        (lambda a: a["screens"]["home"][0].update(type="Slider"), "control type 'Slider'"),
        (
            lambda a: a["screens"]["grayscale_dialog"][0].pop("slot"),
            "an Edit control without a slot",
        ),
        (
            lambda a: a["screens"]["home"].append({"label": "help", "text": "x", "type": "Button"}),
            "duplicate control labels",
        ),
        (
            lambda a: a["effects"]["grayscale"].update(output="hologram"),
            r"resource types \['hologram'\]",
        ),
        (
            lambda a: a["effects"]["grayscale"].update(instruction="In PhotoLab, do {src}"),
            "misses a slot",
        ),
    ],
)
def test_a_broken_app_spec_names_the_entry(raw, edit, message):
    broken = copy.deepcopy(raw)
    edit(broken["apps"]["photo_lab"])
    with pytest.raises(data.SpecError, match=message) as info:
        data.load_desktop(broken, None, 3)
    assert "apps.photo_lab" in str(info.value) and "Nothing was run or written" in str(info.value)


def test_authored_tasks_parse_and_bad_ones_fail(raw):
    desktop = data.load_desktop(raw, None, 3)
    tasks = data.parse_authored_tasks([_task({"a": ["b"]})], desktop)
    assert tasks[0]["edges"] == [["a", "b"]] and tasks[0]["nodes"][0]["category"] == "image"
    assert tasks[0]["source"] == "authored" and data.parse_authored_tasks(None, desktop) == []
    with pytest.raises(
        data.SpecError, match=r"edge a -> z names subtask 'z', which is not in dag\.nodes"
    ):
        data.parse_authored_tasks([_task({"a": ["z"]})], desktop)
    with pytest.raises(data.SpecError, match="the task graph has a cycle"):
        data.parse_authored_tasks([_task({"a": ["b"], "b": ["a"]})], desktop)
    unknown = _task({})
    unknown["subtasks"][0]["subtask"] = "photo_lab.sharpen"
    with pytest.raises(data.SpecError, match="unknown subtask 'photo_lab.sharpen'"):
        data.parse_authored_tasks([unknown], desktop)
    missing = _task({})
    missing["subtasks"].pop()
    with pytest.raises(data.SpecError, match="node 'b' has no subtask entry"):
        data.parse_authored_tasks([missing], desktop)


def test_topological_order():
    assert data.topological_order(["a", "b", "c"], [("b", "a"), ("c", "b")]) == ["c", "b", "a"]
    assert data.topological_order(["a", "b"], [("a", "b"), ("b", "a")]) is None
    assert data.topological_order(["b", "a"], []) == ["b", "a"]


def test_reachable_screens(raw):
    assert data.reachable_screens(raw["apps"]["photo_lab"]) == set(
        raw["apps"]["photo_lab"]["screens"]
    )


def test_template_slots_and_fresh_paths():
    assert discovery.template_slots("put {picture} into {src}, save as {dst}") == [
        "picture",
        "src",
        "dst",
    ]
    assert discovery.fresh_path("t1", "image") == "Desktop/out/t1.png"
    assert discovery.fresh_path("t1", "hologram") == "Desktop/out/t1.dat"


def test_exploration_discovers_and_abstracts(raw):
    desktop = data.load_desktop(raw, None, 3)
    found = discovery.explore_app(desktop, "photo_lab", 40, 8, np.random.default_rng(0))
    assert set(found) == {"grayscale", "crop_center", "rotate_left", "resize_half"}
    record = found["grayscale"]
    assert record["trigger"] == "apply_grayscale" and record["created"] == "image"
    assert record["literals"]["src"] in {
        f["path"] for f in desktop["files"] if f["type"] == "image"
    }
    assert record["path"][0] == {"api": "click_input", "label": "launch:photo_lab"}
    cand = discovery.abstract_subtask(desktop, "photo_lab", "grayscale", record)
    assert cand["input_resources"] == {"src": "image"} and cand["output_resources"] == {
        "dst": "image"
    }
    assert cand["slots"] == ["src", "dst"] and cand["id"] == "photo_lab.grayscale"
    assert discovery.explore_app(desktop, "photo_lab", 1, 2, np.random.default_rng(0)) == {}


def test_enumeration_and_available_parameters(raw):
    desktop = data.load_desktop(raw, None, 3)
    cands = discovery.discover_subtasks(desktop, "enumerate", 1, 2, 4, np.random.default_rng(0))
    assert len(cands) == 40 and cands[0]["observed_path"] is None
    insert = next(c for c in cands if c["effect"] == "insert_image")
    assert insert["slots"] == ["picture", "src", "dst"]
    params = insert["available_parameters"]
    assert len(params) == 4 and len({p["dst"] for p in params}) == 4
    assert params[0] == {
        "src": "Desktop/report.docx",
        "picture": "Desktop/photo1.png",
        "dst": "Desktop/out/word_writer_insert_image_0.docx",
    }
    explored = discovery.discover_subtasks(desktop, "explore", 60, 8, 2, np.random.default_rng(0))
    assert len(explored) == 40 and all(len(c["available_parameters"]) == 2 for c in explored)


def _msg(where, problem, fix, file=data.TASKS_FILE):
    """The full SpecError text: file, entry, problem, fix (as the module docstring promises)."""
    return f"{file}: {where}: {problem}; {fix}. Nothing was run or written."


def test_parsed_authored_task_has_the_full_schema(raw):
    desktop = data.load_desktop(raw, None, 3)
    entry = _task({"a": ["b"]})
    entry["task_instruction"] = "Gray twice"
    assert data.parse_authored_tasks([entry], desktop) == [
        {
            "task_id": "t",
            "instruction": "Gray twice",
            "source": "authored",
            "nodes": [
                {
                    "id": n,
                    "subtask": "photo_lab.grayscale",
                    "app": "photo_lab",
                    "category": "image",
                    "params": {"src": "s", "dst": f"d{n}"},
                }
                for n in ("a", "b")
            ],
            "edges": [["a", "b"]],
            "targets": None,
        }
    ]


def test_authored_task_errors_name_file_entry_problem_and_fix(raw):
    desktop = data.load_desktop(raw, None, 3)
    dangling = _task({"a": ["z"]})
    del dangling["task_id"]  # an entry without an id is named "?"
    with pytest.raises(data.SpecError) as info:
        data.parse_authored_tasks([_task({}), dangling], desktop)
    assert str(info.value) == _msg(
        "tasks[1] (?).dag.edges",
        "edge a -> z names subtask 'z', which is not in dag.nodes ['a', 'b']",
        "add the node or remove the edge",
    )
    with pytest.raises(data.SpecError) as info:
        data.parse_authored_tasks([_task({"a": ["b"], "b": ["a"]})], desktop)
    assert str(info.value) == _msg(
        "tasks[0] (t).dag", "the task graph has a cycle", "remove an edge of the cycle"
    )
    missing = _task({})
    missing["subtasks"].pop()
    with pytest.raises(data.SpecError) as info:
        data.parse_authored_tasks([missing], desktop)
    assert str(info.value) == _msg(
        "tasks[0] (t).subtasks", "node 'b' has no subtask entry", "add one"
    )
    unknown = _task({})
    unknown["subtasks"][1]["subtask"] = "photo_lab.sharpen"
    with pytest.raises(data.SpecError) as info:
        data.parse_authored_tasks([unknown], desktop)
    assert str(info.value) == _msg(
        "tasks[0] (t).subtasks.b",
        "unknown subtask 'photo_lab.sharpen'",
        "use <app>.<effect> from apps.yml",
    )


def test_subtask_names_split_at_the_first_dot():
    # <app>.<effect>: the app is the part before the first dot, the effect keeps the rest
    desktop = {"apps": {"lab": {"category": "image", "effects": {"v2.gray": {}}}}}
    entry = _task({}, nodes=("a",))
    entry["subtasks"][0]["subtask"] = "lab.v2.gray"
    node = data.parse_authored_tasks([entry], desktop)[0]["nodes"][0]
    assert node["app"] == "lab" and node["subtask"] == "lab.v2.gray"


def test_desktop_errors_give_the_whole_message(raw):
    with pytest.raises(data.SpecError) as info:
        data.load_desktop({"files": []}, None, 3)
    assert str(info.value) == _msg(
        "top level", "needs keys 'apps' and 'files'", "restore the authored file", data.APPS_FILE
    )
    broken = copy.deepcopy(raw)
    broken["apps"]["photo_lab"]["home"] = "start"
    with pytest.raises(data.SpecError) as info:
        data.load_desktop(broken, None, 3)
    assert str(info.value) == _msg(
        "apps.photo_lab.home",
        "screen 'start' is not defined",
        "name one of its screens",
        data.APPS_FILE,
    )


def test_explored_resources_are_the_desktop_files_read(raw):
    desktop = data.load_desktop(raw, None, 3)
    observed = {
        # dst overwrites an existing desktop file, "junk" is no file: neither is an input resource
        "literals": {"src": "Desktop/photo1.png", "extra": "junk", "dst": "Desktop/photo2.jpg"},
        "created": "image",
        "path": [{"api": "click_input", "label": "launch:photo_lab"}],
    }
    cand = discovery.abstract_subtask(desktop, "photo_lab", "grayscale", observed)
    assert cand["input_resources"] == {"src": "image"}
    assert cand["output_resources"] == {"dst": "image"}
    assert cand["observed_path"] == observed["path"]


_PHOTO = "apps.photo_lab"


@pytest.mark.parametrize(
    ("edit", "where", "problem", "fix"),
    [
        (lambda a: a.pop("title"), _PHOTO, "missing key 'title'", "add it (see the other apps)"),
        (
            lambda a: a["screens"]["home"][0].update(type="Slider"),
            f"{_PHOTO}.screens.home[0]",
            "control type 'Slider'",
            "use one of ['Button', 'Edit', 'ListItem', 'MenuItem', 'TabItem']",
        ),
        (
            lambda a: a["screens"]["filters"][0].update(effect="sharpen"),
            f"{_PHOTO}.screens.filters[0].effect",
            f"dangling control: effect 'sharpen' is not in {_PHOTO}.effects",
            "add the effect or fix the name",
        ),
        (
            lambda a: a["screens"]["grayscale_dialog"].pop(2),
            f"{_PHOTO}.effects.grayscale",
            "no control triggers this effect",
            "add a Button with effect: grayscale",
        ),
        (
            lambda a: a["screens"]["home"].pop(0),
            f"{_PHOTO}.effects.grayscale",
            "its dialog 'grayscale_dialog' is unreachable from home",
            "add a goto to it",
        ),
        (
            lambda a: a["screens"]["grayscale_dialog"].pop(0),
            f"{_PHOTO}.effects.grayscale",
            "its dialog has no Edit for slots ['src']",
            "add Edit controls for them",
        ),
        (
            lambda a: a["effects"]["grayscale"].update(output="hologram"),
            f"{_PHOTO}.effects.grayscale",
            "resource types ['hologram'] have no desktop file",
            "add files of that type",
        ),
        (
            lambda a: a["effects"]["grayscale"].update(instruction="In PhotoLab, do {src}"),
            f"{_PHOTO}.effects.grayscale",
            "instruction 'In PhotoLab, do {src}' misses a slot",
            "mention every {slot}",
        ),
        (
            lambda a: a["screens"]["grayscale_dialog"][0].pop("slot"),
            f"{_PHOTO}.screens.grayscale_dialog[0]",
            "an Edit control without a slot",
            "name the slot it fills",
        ),
        (
            lambda a: a["screens"]["home"].append({"label": "help", "text": "x", "type": "Button"}),
            f"{_PHOTO}.screens.home",
            "duplicate control labels",
            "make labels unique",
        ),
    ],
)
def test_a_broken_app_spec_gives_the_whole_message(raw, edit, where, problem, fix):
    broken = copy.deepcopy(raw)
    edit(broken["apps"]["photo_lab"])
    with pytest.raises(data.SpecError) as info:
        data.load_desktop(broken, None, 3)
    assert str(info.value) == _msg(where, problem, fix, data.APPS_FILE)


def test_a_dangling_goto_lists_the_screens(raw):
    broken = copy.deepcopy(raw)
    broken["apps"]["photo_lab"]["screens"]["home"][0]["goto"] = "nowhere"
    screens = sorted(broken["apps"]["photo_lab"]["screens"])
    with pytest.raises(data.SpecError) as info:
        data.load_desktop(broken, None, 3)
    assert str(info.value) == _msg(
        f"{_PHOTO}.screens.home[0].goto",
        "dangling screen 'nowhere'",
        f"define screen 'nowhere' or point to one of {screens}",
        data.APPS_FILE,
    )


def test_explored_episodes_replay_and_save_to_fresh_paths(raw):
    from paper_pipelines.pipelines.omnibench.simulator import replay

    desktop = data.load_desktop(raw, None, 3)
    found = discovery.explore_app(desktop, "photo_lab", 40, 8, np.random.default_rng(0))
    for effect, record in found.items():
        dst = record["literals"]["dst"]
        assert dst.startswith("Desktop/out/explore_photo_lab_") and dst.endswith(".png"), effect
        # the recorded path is the episode: replayed on a fresh desktop it writes that file
        assert replay(desktop, record["path"]).files[dst]["type"] == record["created"]


def test_files_per_type_caps_each_type(raw):
    counts = {}
    for f in raw["files"]:
        counts[f["type"]] = counts.get(f["type"], 0) + 1
    assert max(counts.values()) >= 3  # a type with more files than the cap below
    files = data.load_desktop(raw, None, 2)["files"]
    kept = {}
    for f in files:
        kept[f["type"]] = kept.get(f["type"], 0) + 1
    assert kept == {t: min(n, 2) for t, n in counts.items()}


def test_phrasings_are_optional_and_carried_into_candidates(raw):
    desktop = data.load_desktop(raw, None, 3)
    spec = raw["apps"]["photo_lab"]["effects"]["grayscale"]
    cand = discovery.abstract_subtask(desktop, "photo_lab", "grayscale", None)
    assert cand["phrasings"] == spec["phrasings"] and cand["phrasings"]
    bare = copy.deepcopy(raw)
    del bare["apps"]["photo_lab"]["effects"]["grayscale"]["phrasings"]
    desktop = data.load_desktop(bare, None, 3)  # no phrasings: still a valid app
    assert discovery.abstract_subtask(desktop, "photo_lab", "grayscale", None)["phrasings"] == []
