"""Agents (protocol, oracles, planners), the learned dependency classifier and the capability suites."""

import numpy as np
import pytest

from paper_pipelines.pipelines.omnibench import agents as ag
from paper_pipelines.pipelines.omnibench import capabilities as cap
from paper_pipelines.pipelines.omnibench import planner as pl
from paper_pipelines.pipelines.omnibench import study
from paper_pipelines.pipelines.omnibench.taskgraph import (
    bind_node,
    compose_instruction,
    resource_edges,
)


def _task(gold_by_id, ambiguous=True):
    """n2 reads n0's image while n1 made a later one: "the image from an earlier step" is ambiguous."""
    gray, pdf = gold_by_id["photo_lab.grayscale"], gold_by_id["paint_pro.image_to_pdf"]
    zipper = gold_by_id["zip_tool.compress"]
    second = (
        bind_node(gray, "n1", {"src": "Desktop/photo2.jpg", "dst": "Desktop/out/h.png"})
        if ambiguous
        else bind_node(
            gold_by_id["sheet_calc.sort_rows"],
            "n1",
            {"src": "Desktop/sales.xlsx", "dst": "Desktop/out/s.xlsx"},
        )
    )
    nodes = [
        bind_node(gray, "n0", {"src": "Desktop/photo1.png", "dst": "Desktop/out/g.png"}),
        second,
        bind_node(pdf, "n2", {"src": "Desktop/out/g.png", "dst": "Desktop/out/g.pdf"}),
        bind_node(zipper, "n3", {"src": "Desktop/out/g.pdf", "dst": "Desktop/out/g.zip"}),
    ]
    task = {"task_id": "t", "nodes": nodes, "edges": resource_edges(nodes)}
    instruction = compose_instruction(
        task, {k: {**g, "phrasings": []} for k, g in gold_by_id.items()}, np.random.default_rng(0)
    )
    return {**task, "instruction": instruction}


def test_parse_action_and_prompt():
    assert ag.parse_action("I will click_input(filters) now") == {
        "api": "click_input",
        "label": "filters",
    }
    assert ag.parse_action("set_edit_text(src_box, 'Desktop/a.png')") == {
        "api": "set_edit_text",
        "label": "src_box",
        "text": "Desktop/a.png",
    }
    assert ag.parse_action("keyboard_input({ESC})") == {"api": "keyboard_input", "keys": "{ESC}"}
    assert ag.parse_action("done") == ag.FINISH
    obs = {"app": "x", "a11y": [{"label": "b", "text": "Go", "type": "Button"}], "files": ["f"]}
    prompt = ag.render_prompt("do it", obs)
    assert prompt.splitlines()[:4] == [
        "Task: do it",
        "Current app: x",
        "Controls:",
        "- [b] Go (Button)",
    ]
    agent = ag.LMAgent(lambda text: "click_input(b)" if "Task: go" in text else "FINISH")
    agent.reset("go", None)
    assert agent.act(obs) == {"api": "click_input", "label": "b"} and agent.name == "lm_agent"


def test_clauses_mentions_and_rule_resolver():
    text = "In A, do Desktop/x.png to Desktop/out/a.png. Then in B, use the previous result and the image from an earlier step as Desktop/out/b.pdf."
    clauses = ag.split_clauses(text)
    assert len(clauses) == 2 and not clauses[1].endswith(".")
    assert ag.mentions(clauses[1]) == [
        "the previous result",
        "the image from an earlier step",
        "Desktop/out/b.pdf",
    ]
    assert "Desktop" not in ag.strip_mentions(clauses[0])
    earlier = [("o/a.png", "image"), ("o/b.pdf", "pdf"), ("o/c.pdf", "pdf")]
    assert ag.resolve_rule("the previous result", "pdf", earlier) == "o/c.pdf"
    assert ag.resolve_rule("the image from an earlier step", "image", earlier) == "o/a.png"
    assert ag.resolve_rule("the text from an earlier step", "text", earlier) is None
    assert ag.resolve_rule("the previous result", "pdf", []) is None


def test_planner_parses_its_plan(gold_by_id, gold):
    task = _task(gold_by_id)
    retriever = ag.Retriever(gold, "tfidf")
    plan = ag.parse_plan(task["instruction"], retriever, ag.resolve_rule)
    assert [s["id"] for s, _ in plan] == [n["subtask"] for n in task["nodes"]]
    params = [p for _, p in plan]
    # the rule takes the latest image: wrong here (n0's image was meant), right on the other clauses
    assert params[2] == {"src": "Desktop/out/h.png", "dst": "Desktop/out/g.pdf"}
    assert [params[k] for k in (0, 1, 3)] == [task["nodes"][k]["params"] for k in (0, 1, 3)]
    clear = _task(gold_by_id, ambiguous=False)
    plan = ag.parse_plan(clear["instruction"], retriever, ag.resolve_rule)
    assert [p for _, p in plan] == [n["params"] for n in clear["nodes"]]
    assert retriever("In ZipTool, compress X into the archive Y")["id"] == "zip_tool.compress"
    assert len(retriever.cache) == 6
    # a clause whose mentions do not fit the retrieved subtask is skipped
    assert ag.parse_plan("In ZipTool, compress Desktop/a.pdf.", retriever, ag.resolve_rule) == []


@pytest.mark.parametrize(
    "name", ["oracle_contiguous", "oracle_random_order", "instruction_planner", "learned_planner"]
)
def test_capable_agents_solve_a_small_task(gold_by_id, gold, desktop, name):
    task = _task(gold_by_id, ambiguous=name.startswith("oracle"))
    agent = study.make_agent(
        name,
        gold_by_id,
        ag.Retriever(gold, "tfidf"),
        {"graph": None},
        0.0,
        np.random.default_rng(0),
    )
    episode = ag.run_episode(agent, task, desktop, study.node_checks(task, gold_by_id), 200, 20)
    assert episode["outcome"] == "Success" and sorted(episode["executed"]) == [
        "n0",
        "n1",
        "n2",
        "n3",
    ]
    assert episode["actions"][-1] == ag.FINISH and episode["steps"] == len(episode["actions"])


def test_contiguous_oracle_keeps_apps_together(gold_by_id, desktop):
    task = _task(gold_by_id)
    order = ag.contiguous_order(task)
    apps = [next(n["app"] for n in task["nodes"] if n["id"] == i) for i in order]
    assert apps[:2] == ["photo_lab", "photo_lab"]
    rng = np.random.default_rng(1)
    for _ in range(5):
        order = ag.random_topological_order(task, rng)
        assert order.index("n0") < order.index("n2") < order.index("n3")


def test_random_and_noisy_agents(gold_by_id, desktop):
    task = _task(gold_by_id)
    checks = study.node_checks(task, gold_by_id)
    random = ag.run_episode(
        ag.RandomAgent(np.random.default_rng(0)), task, desktop, checks, 200, 20
    )
    assert (
        random["outcome"] == "Fail (waited too long)"
        and random["steps"] == 21
        and random["executed"] == []
    )
    noisy = ag.OracleAgent("noisy", gold_by_id, "contiguous", 1.0, np.random.default_rng(0))
    noisy.reset("", task)
    planned = len(noisy.plan)
    actions = [
        noisy.act({"a11y": [{"label": "x", "text": "t", "type": "Edit"}], "files": ["f"]})
        for _ in range(planned)
    ]
    assert all(a["api"] == "set_edit_text" and a["label"] == "x" for a in actions)
    assert noisy.act({}) == ag.FINISH


def test_random_action_covers_control_kinds():
    rng = np.random.default_rng(0)
    obs = {
        "a11y": [
            {"label": "e", "type": "Edit", "text": ""},
            {"label": "b", "type": "Button", "text": ""},
        ],
        "files": ["Desktop/a"],
    }
    kinds = {ag.random_action(obs, rng)["api"] for _ in range(200)}
    assert kinds == {"set_edit_text", "click_input", "keyboard_input"}


def test_pair_features_by_hand():
    earlier = [("a", "image"), ("b", "pdf"), ("c", "image")]
    feats = pl.pair_features("the image from an earlier step", "image", earlier)
    assert feats.shape == (3, len(pl.FEATURES))
    np.testing.assert_allclose(feats[0], [0, 1 / 3, 1, 0, 0, 0, 1])
    np.testing.assert_allclose(feats[2], [1, 1, 1, 1, 0, 1, 1])
    prev = pl.pair_features(pl.PREVIOUS, "pdf", earlier)
    np.testing.assert_allclose(prev[1], [0, 0.5, 1, 1, 0, 0, 0])
    np.testing.assert_allclose(prev[2], [1, 1, 0, 0, 1, 0, 0])
    assert pl.pair_features(pl.PREVIOUS, "pdf", []).shape == (0, 7)


def test_reference_examples_label_the_true_producer(gold_by_id):
    task = _task(gold_by_id)
    x, y = pl.reference_examples([task], gold_by_id)
    # n2 reads n0's output (two candidates), n3 reads n2's (three candidates)
    assert x.shape == (5, 7) and list(y) == [1, 0, 0, 0, 1]
    assert (
        x[0, 5] == 1 or x[0, 0] == 0
    )  # n0 is not the previous clause of n2: an "earlier" reference
    empty_x, empty_y = pl.reference_examples([], gold_by_id)
    assert empty_x.shape == (0, 7) and empty_y.shape == (0,)


def test_resolver_fit_and_fallback():
    assert pl.fit_resolver(np.ones((3, 7)), np.ones(3, dtype=int), 1.0) is None
    assert pl.LearnedResolver(None)("x", "image", [("a", "image"), ("b", "pdf")]) == "a"
    assert pl.LearnedResolver(None)("x", "text", [("a", "image"), ("b", "pdf")]) == "b"
    assert pl.LearnedResolver(None)("x", "image", []) is None
    x = np.array([[1, 1, 1, 1, 0, 0, 0], [0, 0.5, 1, 0, 0, 0, 0]] * 10, dtype=float)
    y = np.array([0, 1] * 10)
    model = pl.fit_resolver(x, y, 1.0)
    resolver = pl.LearnedResolver(model)
    assert resolver("e", "image", [("a", "image"), ("b", "pdf")]) == "a"


def test_suites_and_bootstrap():
    tasks = [
        {"task_id": f"t{i}", "levels": {"width": lv, "nodes": "hard"}}
        for i, lv in enumerate(["hard", "easy", "hard", "hard"])
    ]
    rules = {
        "parallel": {"width": ["hard"]},
        "none": {"width": ["medium"]},
        "long": {"nodes": ["hard"], "width": ["easy", "hard"]},
    }
    suites = cap.build_suites(tasks, rules, 2, np.random.default_rng(0))
    assert len(suites["parallel"]) == 2 and set(suites["parallel"]) <= {"t0", "t2", "t3"}
    assert suites["none"] == [] and len(suites["long"]) == 2
    assert cap.build_suites(tasks, rules, 10, np.random.default_rng(0))["parallel"] == [
        "t0",
        "t2",
        "t3",
    ]
    assert cap.matches({"width": "hard", "nodes": "easy"}, {"width": ["hard"]})
    assert not cap.matches(
        {"width": "hard", "nodes": "easy"}, {"width": ["hard"], "nodes": ["hard"]}
    )
    assert cap.bootstrap_ci(np.array([0.5, 0.5]), 50, 0.95, np.random.default_rng(0)) == (0.5, 0.5)
    lo, hi = cap.bootstrap_ci(np.array([0.0, 1.0] * 20), 500, 0.9, np.random.default_rng(0))
    assert 0.3 < lo < 0.5 < hi < 0.7
    assert all(np.isnan(cap.bootstrap_ci(np.array([]), 10, 0.95, np.random.default_rng(0))))


def test_parse_action_strips_quotes_only():
    assert ag.parse_action('click_input("filters")') == {"api": "click_input", "label": "filters"}
    assert ag.parse_action("click_input('export_XLSX')") == {
        "api": "click_input",
        "label": "export_XLSX",
    }
    assert ag.parse_action('set_edit_text(dst_box, "Desktop/out/r.XLSX")') == {
        "api": "set_edit_text",
        "label": "dst_box",
        "text": "Desktop/out/r.XLSX",
    }
    # no text argument: an empty text
    assert ag.parse_action("set_edit_text(dst_box)") == {
        "api": "set_edit_text",
        "label": "dst_box",
        "text": "",
    }


def test_render_prompt_is_the_whole_screen_a11y_prompt():
    obs = {
        "app": "photo_lab",
        "a11y": [
            {"label": "b", "text": "Go", "type": "Button"},
            {"label": "e", "text": "", "type": "Edit"},
        ],
        "files": ["Desktop/a.png", "Desktop/b.txt"],
    }
    assert ag.render_prompt("do it", obs) == "\n".join(
        [
            "Task: do it",
            "Current app: photo_lab",
            "Controls:",
            "- [b] Go (Button)",
            "- [e]  (Edit)",
            "Files: Desktop/a.png, Desktop/b.txt",
            "Answer with one action, e.g. click_input(label) or set_edit_text(label, text) or FINISH.",
        ]
    )


def test_lm_agent_before_reset_has_an_empty_task():
    prompts = []
    agent = ag.LMAgent(lambda text: prompts.append(text) or "FINISH")
    obs = {"app": None, "a11y": [], "files": []}
    assert agent.act(obs) == ag.FINISH
    assert prompts[0].splitlines()[0] == "Task: "


def test_split_clauses_drops_only_the_final_period():
    assert ag.split_clauses("Rename Desktop/a.png to FIX. Then zip FIX.") == [
        "Rename Desktop/a.png to FIX",
        "zip FIX",
    ]


def test_random_action_types_a_visible_file_or_junk():
    rng = np.random.default_rng(0)
    obs = {"a11y": [{"label": "e", "type": "Edit", "text": ""}], "files": ["Desktop/a.png"]}
    texts = [ag.random_action(obs, rng)["text"] for _ in range(100)]
    assert all(isinstance(t, str) for t in texts)
    junk = [t for t in texts if t != "Desktop/a.png"]
    assert 20 < len(junk) < 80  # about half the time
    assert all(t.startswith("Desktop/out/r") and t.endswith(".txt") for t in junk)


def test_parse_plan_passes_a_missing_output_as_empty_path():
    seen = []
    first = {
        "slots": ["src"],
        "input_resources": {"src": "image"},
        "output_resources": {"dst": "image"},
    }
    second = {**first, "id": "second"}

    def retrieve(clause):
        return first if clause.startswith("Open") else second

    def resolver(mention, kind, earlier):
        seen.append(list(earlier))
        return earlier[-1][0]

    plan = ag.parse_plan("Open Desktop/a.png. Then open the previous result.", retrieve, resolver)
    assert [p for _, p in plan] == [{"src": "Desktop/a.png"}, {"src": ""}]
    assert seen == [[("", "image")]]


def test_tfidf_retrieval_matches_single_words(gold):
    retriever = ag.Retriever(gold, "tfidf")
    # unigrams count: one distinctive word finds its subtask
    assert retriever("grayscale")["effect"] == "grayscale"
    assert retriever("compress")["effect"] == "compress"


def test_minilm_retrieval_embeds_each_text_as_its_own_mean_pooled_vector(gold):
    import torch

    retriever = ag.Retriever(gold[:6], "minilm")
    assert retriever.matrix.shape == (6, 384)
    np.testing.assert_allclose(np.linalg.norm(retriever.matrix, axis=1), 1.0, rtol=1e-5)
    model, tokenizer = retriever.encoder
    texts = ["In ZipTool, compress", "Copy a file into a folder on the desktop please"]
    batch = retriever._embed(texts)  # padded together
    for text, vector in zip(texts, batch, strict=True):
        with torch.no_grad():
            states = model(**tokenizer(text, return_tensors="pt")).last_hidden_state[0]
        alone = torch.nn.functional.normalize(states.mean(0), dim=0).numpy()
        np.testing.assert_allclose(vector, alone, atol=1e-5)
    long = retriever._embed(["word " * 2000])  # cut to the model's window, not an error
    assert long.shape == (1, 384) and np.isfinite(long).all()
    assert (
        retriever("In FileExplorer, copy Desktop/a.pdf to Desktop/out/a.pdf")["id"] == gold[0]["id"]
    )


def test_reference_examples_rows_by_hand(gold_by_id):
    x, y = pl.reference_examples([_task(gold_by_id)], gold_by_id)
    # n2 reads n0's image through "an earlier step"; n3 reads n2's pdf, the previous result
    np.testing.assert_allclose(
        x,
        [
            [0, 1 / 2, 1, 0, 0, 0, 1],
            [1, 1, 1, 1, 0, 1, 1],
            [0, 1 / 3, 0, 0, 0, 0, 0],
            [0, 1 / 2, 0, 0, 0, 0, 0],
            [1, 1, 1, 1, 1, 0, 0],
        ],
    )
    assert list(y) == [1, 0, 0, 0, 1]


def test_learned_resolver_follows_the_mention():
    # trained: "the previous result" -> the previous clause; "an earlier step" -> the older output
    prev = pl.pair_features(pl.PREVIOUS, "pdf", [("a", "image"), ("b", "pdf")])
    older = pl.pair_features("earlier", "image", [("a", "image"), ("b", "image")])
    x = np.vstack([prev, older] * 10)
    y = np.array([0, 1, 1, 0] * 10)
    model = pl.fit_resolver(x, y, 1.0)
    assert list(model.classes_) == [0, 1]
    resolver = pl.LearnedResolver(model)
    both = [("a", "image"), ("b", "image")]
    assert resolver("earlier", "image", both) == "a"  # the untrained fallback would say "b"
    assert resolver(pl.PREVIOUS, "image", both) == "b"
    assert pl.LearnedResolver(None)("earlier", "image", both) == "b"


@pytest.mark.parametrize("seed", range(5))
def test_suites_draw_distinct_tasks(seed):
    tasks = [{"task_id": f"t{i:02d}", "levels": {"width": "hard"}} for i in range(30)]
    suite = cap.build_suites(tasks, {"p": {"width": ["hard"]}}, 10, np.random.default_rng(seed))[
        "p"
    ]
    # without replacement: ten different tasks, kept in the task list's order
    assert len(set(suite)) == len(suite) == 10 and suite == sorted(suite)


def test_parse_plan_hands_the_mention_to_the_resolver(gold_by_id, gold):
    task = _task(gold_by_id)
    mentions = []

    def resolver(mention, kind, earlier):
        mentions.append((mention, kind))
        return ag.resolve_rule(mention, kind, earlier)

    ag.parse_plan(task["instruction"], ag.Retriever(gold, "tfidf"), resolver)
    assert mentions == [("the image from an earlier step", "image"), ("the previous result", "pdf")]


def test_bootstrap_of_a_single_value_is_that_value():
    assert cap.bootstrap_ci(np.array([0.7]), 20, 0.95, np.random.default_rng(0)) == (0.7, 0.7)


def test_bootstrap_interval_is_the_central_share_of_the_means():
    # the resampled means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: the central 40 %
    # (quantiles 0.3 and 0.7) is 0.5 alone, the central 60 % (0.2 and 0.8) reaches both ends
    values = np.array([0.0, 1.0])
    assert cap.bootstrap_ci(values, 2000, 0.4, np.random.default_rng(0)) == (0.5, 0.5)
    assert cap.bootstrap_ci(values, 2000, 0.6, np.random.default_rng(0)) == (0.0, 1.0)


def test_fit_resolver_uses_the_given_regularisation():
    x = np.array([[1, 1, 1, 1, 0, 0, 0], [0, 0.5, 1, 0, 0, 0, 0]] * 10, dtype=float)
    y = np.array([0, 1] * 10)
    strong, weak = pl.fit_resolver(x, y, 0.01), pl.fit_resolver(x, y, 100.0)
    assert strong.C == 0.01 and weak.C == 100.0
    assert np.abs(strong.coef_).sum() < np.abs(weak.coef_).sum()


def test_retriever_defaults_to_tfidf(gold):
    retriever = ag.Retriever(gold[:4])
    assert retriever.kind == "tfidf" and retriever.matrix.shape[0] == 4


def test_random_order_oracle_varies_its_order(gold_by_id):
    task = _task(gold_by_id)
    plans = set()
    for seed in range(8):
        agent = ag.OracleAgent("o", gold_by_id, "random", 0.0, np.random.default_rng(seed))
        agent.reset("", task)
        plans.add(str(agent.plan))
    contiguous = ag.OracleAgent("c", gold_by_id, "contiguous", 0.0, np.random.default_rng(0))
    contiguous.reset("", task)
    assert len(plans) > 1 and contiguous.plan == ag.plan_actions(
        task, ag.contiguous_order(task), gold_by_id
    )
