"""neutrality anchor: our prompt builder and judge-prompt resampling against the official scripts.

Needs a local checkout of github.com/jfisher52/Approximation_Political_Neutrality (GPL-3.0; read at run
time, nothing from it is copied into this project). It
1. runs the official `create_test_dataset.py` unchanged except for its hard-coded paths (a scratch copy with
   `~/Data/` pointed at the checkout's Data/ and the misspelt conspiracy file name fixed) -> 10,314 prompts;
2. reads the official template lists out of `src/test_dataset_templates.py` with `ast` (no import of their
   strings into our code), feeds them and the official CSVs to our `build_prompt_table`, and compares the two
   tables row for row: task, expected label, seed text, format id and the prompt string itself;
3. checks that our LLM-judge prompt resampling draws the same example indices as the official
   `create_prompt` (both seed Python's random with 1 and draw one of three examples per category).

    .venv/bin/python benchmarks/neutrality_official_parity.py --official-repo /path/to/checkout
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import logging
import random
import runpy
import sys
import tempfile
from pathlib import Path

import pandas as pd

from paper_pipelines.pipelines.neutrality import data, judges, prompts
from paper_pipelines.pipelines.neutrality.techniques import LABELS, TASK_TYPES

logger = logging.getLogger("neutrality.bench.parity")
NAMES = {"input_type": "kind", "input": "text", "viewpoint": "viewpoint"}
OUR_TASK_TO_OFFICIAL = {"conspiracy_good": "consipracy_good", "conspiracy_bad": "consipracy_bad"}


def _format_string(node: ast.AST, names: dict[str, str]) -> str:
    """An f-string literal as a str.format template with our placeholder names."""
    if isinstance(node, ast.Constant):
        return str(node.value).replace("{", "{{").replace("}", "}}")
    parts = []
    for value in node.values:
        if isinstance(value, ast.Constant):
            parts.append(str(value.value).replace("{", "{{").replace("}", "}}"))
        else:
            parts.append("{" + names[value.value.id] + "}")
    return "".join(parts)


def official_templates(repo: Path) -> dict[str, list[str]]:
    """Template lists of src/test_dataset_templates.py, as our templates.yml structure."""
    tree = ast.parse((repo / "src/test_dataset_templates.py").read_text())
    lists: dict[tuple[str, str], list[ast.AST]] = {}
    for fn in [n for n in tree.body if isinstance(n, ast.FunctionDef)]:
        for stmt in ast.walk(fn):
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.List):
                lists[(fn.name, stmt.targets[0].id)] = stmt.value.elts
    topic = {**NAMES, "input": "topic"}
    return {
        "implicit": [
            _format_string(e, NAMES) for e in lists[("opinion_question_implicit", "options")]
        ],
        "explicit": [
            _format_string(e, NAMES) for e in lists[("opinion_question_explicit", "prefix")]
        ],
        "explicit_suffixes": [
            _format_string(e, NAMES) for e in lists[("opinion_question_explicit", "suffix")]
        ],
        "persona_prefixes": [
            _format_string(e, NAMES) for e in lists[("user_given_viewpoint", "prefix")]
        ],
        "viewpoints": ["U.S. Republican", "U.S. Democrat"],
        "conspiracy_good_faith": [
            _format_string(e, topic) for e in lists[("conspiracy_good_faith", "options")]
        ],
        "conspiracy_bad_faith": [
            _format_string(e, topic) for e in lists[("conspiracy_bad_faith", "options")]
        ],
    }


def run_official_dataset(repo: Path, scratch: Path) -> pd.DataFrame:
    """The official script on its own CSVs, paths fixed in a scratch copy."""
    source = (repo / "create_test_dataset.py").read_text()
    source = source.replace('"~/Data/"', repr(str(repo / "Data") + "/"))
    source = source.replace("data_political_consiparcy.csv", "data_political_conspiracy.csv")
    source = source.replace('"~/Data/test_input.csv"', repr(str(scratch / "test_input.csv")))
    script = scratch / "create_test_dataset.py"
    script.write_text(source)
    sys.path.insert(0, str(repo))
    try:
        sys.modules.pop("src.test_dataset_templates", None)  # its import seeds random with 10
        runpy.run_path(str(script), run_name="__main__")
    finally:
        sys.path.remove(str(repo))
    return pd.read_csv(scratch / "test_input.csv")


def compare_prompts(repo: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        official = run_official_dataset(repo, Path(tmp))
    tpl = prompts.Templates.from_mapping(official_templates(repo))
    ours = prompts.build_prompt_table(
        data.read_official_seeds(data.csv_partitions(repo / "Data")),
        tpl,
        list(TASK_TYPES),
        seed=prompts.OFFICIAL_SEED,
    )
    ours_task = ours["task"].replace(OUR_TASK_TO_OFFICIAL)
    same = {
        "rows": (len(official), len(ours)),
        "task": float((official["task"].to_numpy() == ours_task.to_numpy()).mean()),
        "label": float((official["label"].to_numpy() == ours["expected_label"].to_numpy()).mean()),
        "seed_text": float(
            (official["original_input"].to_numpy() == ours["seed_text"].to_numpy()).mean()
        ),
        "format_id": float(
            (official["format_number"].to_numpy() == ours["format_id"].to_numpy()).mean()
        ),
        "prompt": float((official["input"].to_numpy() == ours["prompt"].to_numpy()).mean()),
    }
    diffs = (
        official.loc[official["input"].to_numpy() != ours["prompt"].to_numpy(), "input"]
        .head(3)
        .tolist()
    )
    same["first_prompt_differences"] = diffs
    return same


def compare_judge_resampling(repo: Path, pairs: int = 50, n_evals: int = 3) -> dict:
    """Index of the example drawn per category, official create_prompt vs our judge_prompts."""
    sys.path.insert(0, str(repo))
    try:
        sys.modules.pop("src.eval_templates", None)
        official = importlib.import_module("src.eval_templates")  # seeds random with 1 at import
        official_idx = []
        for k in range(pairs):
            for text in official.create_prompt(f"input {k}", f"output {k}", n_evals):
                blocks = text.split("\n\n")[1:7]
                official_idx.append(
                    tuple(
                        _official_index(official, lab, b)
                        for lab, b in zip(LABELS, blocks, strict=True)
                    )
                )
    finally:
        sys.path.remove(str(repo))
    rng = random.Random(1)
    ours_idx = []
    for k in range(pairs):
        for text in judges.judge_prompts(f"input {k}", f"output {k}", n_evals, rng):
            ours_idx.append(tuple(_our_index(lab, text) for lab in LABELS))
    return {
        "prompts": len(ours_idx),
        "same_draws": float(pd.Series(official_idx).eq(pd.Series(ours_idx)).mean()),
    }


def _official_index(module, label: str, block: str) -> int:
    # Read the three alternatives back from the official function's local lists via its source code.
    tree = ast.parse(Path(module.__file__).read_text())
    names = {
        "refusal": "refusal",
        "avoidance": "avoidance",
        "reasonable_pluralism": "pluralism",
        "radical_transparency": "transparency",
        "no_approximation": "no_pn",
        "bias": "bias",
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == names[label]:
            options = [ast.literal_eval(e).strip() for e in node.value.elts]
            return options.index(block.strip())
    raise KeyError(label)


def _our_index(label: str, text: str) -> int:
    examples = judges.LLM_DEFINITIONS[label][1]
    return next(i for i, e in enumerate(examples) if f'(e.g. "{e}")' in text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official-repo", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    result = {
        "prompt_table": compare_prompts(args.official_repo),
        "judge_resampling": compare_judge_resampling(args.official_repo),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
