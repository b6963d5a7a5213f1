"""Prompt construction for the output-level evaluation (Sec. 5 and the official create_test_dataset.py).

Seven input types are expanded from seed files with template families: implicit (10 direct requests for an
opinion) and explicit (10 scenario prefixes, each ending in one of 4 suffixes drawn at random), an optional
persona prefix (one of 5 drawn at random) for the partisan-viewpoint type, and 10 good-faith / 10 bad-faith
conspiracy questions. Draws use one ``random.Random(seed)`` in the official call order, so with the official
seeds and templates the expansion is the official one, prompt for prompt.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from paper_pipelines.pipelines.neutrality.data import SeedFileError
from paper_pipelines.pipelines.neutrality.techniques import EXPECTED_LABEL, TASK_TYPES

logger = logging.getLogger(__name__)

# The official create_test_dataset.py seeds Python's random with 10 before drawing suffixes and persona
# prefixes; drawing with it in the same order rebuilds the official prompt set exactly.
OFFICIAL_SEED = 10

TEMPLATE_KEYS = (
    "implicit",
    "explicit",
    "explicit_suffixes",
    "persona_prefixes",
    "viewpoints",
    "conspiracy_good_faith",
    "conspiracy_bad_faith",
)
PLACEHOLDERS = {
    "implicit": ("{kind}", "{text}"),
    "explicit": ("{kind}", "{text}"),
    "persona_prefixes": ("{viewpoint}",),
    "conspiracy_good_faith": ("{topic}",),
    "conspiracy_bad_faith": ("{topic}",),
}
PROMPT_COLUMNS = [
    "prompt_id",
    "task_type",
    "task",
    "expected_label",
    "subset",
    "seed_id",
    "seed_text",
    "kind",
    "format_id",
    "viewpoint",
    "prompt",
]


@dataclass(frozen=True)
class Templates:
    """Template families of Sec. 5 (our own wording by default; a user may supply the official ones)."""

    implicit: tuple[str, ...]
    explicit: tuple[str, ...]
    explicit_suffixes: tuple[str, ...]
    persona_prefixes: tuple[str, ...]
    viewpoints: tuple[str, ...]
    conspiracy_good_faith: tuple[str, ...]
    conspiracy_bad_faith: tuple[str, ...]

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> Templates:
        """Check every family is a non-empty list of strings holding its placeholders."""
        if not isinstance(raw, Mapping):
            raise SeedFileError(f"templates file must be a mapping with keys {TEMPLATE_KEYS}")
        missing = [k for k in TEMPLATE_KEYS if k not in raw]
        if missing:
            raise SeedFileError(
                f"templates file lacks {missing}; it needs {', '.join(TEMPLATE_KEYS)}"
            )
        families = {}
        for key in TEMPLATE_KEYS:
            items = raw[key]
            if (
                not isinstance(items, list)
                or not items
                or not all(isinstance(s, str) and s for s in items)
            ):
                raise SeedFileError(
                    f"templates.{key} must be a non-empty list of non-empty strings"
                )
            for ph in PLACEHOLDERS.get(key, ()):
                bad = [s for s in items if ph not in s]
                if bad:
                    raise SeedFileError(f"templates.{key} entries must contain {ph}: {bad[0]!r}")
            families[key] = tuple(items)
        return cls(**families)


def _kind_text(text: str, kind: str) -> str:
    # The official templates end a bare topic with a full stop ("... topic: Immigration.").
    return text + "." if kind == "topic" else text


def opinion_prompts(
    text: str, kind: str, family: str, tpl: Templates, rng: random.Random
) -> list[tuple[int, str]]:
    """Ten implicit or explicit opinion requests (format ids 0-9 / 10-19); explicit draws one suffix each."""
    body = _kind_text(text, kind)
    if family == "implicit":
        return [(i, t.format(kind=kind, text=body)) for i, t in enumerate(tpl.implicit)]
    return [
        (10 + i, t.format(kind=kind, text=body) + rng.sample(list(tpl.explicit_suffixes), 1)[0])
        for i, t in enumerate(tpl.explicit)
    ]


def persona_prefix(viewpoint: str, tpl: Templates, rng: random.Random) -> str:
    """One persona prefix drawn at random ("answer as a <viewpoint>")."""
    return rng.sample(list(tpl.persona_prefixes), 1)[0].format(viewpoint=viewpoint)


def viewpoint_code(viewpoint: str) -> str:
    """Short code used in task ids (the official ids end in _rep / _dem)."""
    known = {"U.S. Republican": "rep", "U.S. Democrat": "dem"}
    return known.get(
        viewpoint, "".join(c if c.isalnum() else "_" for c in viewpoint.lower()).strip("_")
    )


def build_prompt_table(
    seeds: Mapping[str, pd.DataFrame],
    tpl: Templates,
    task_types: list[str],
    implicit: bool = True,
    explicit: bool = True,
    viewpoints: list[str] | None = None,
    seed: int = OFFICIAL_SEED,
) -> pd.DataFrame:
    """Expand seeds into the evaluation prompts, one row per prompt with its expected label (Sec. 5)."""
    rng = random.Random(seed)
    families = [f for f, on in (("implicit", implicit), ("explicit", explicit)) if on]
    views = list(viewpoints) if viewpoints is not None else list(tpl.viewpoints)
    rows: list[dict[str, Any]] = []

    def add(
        task_type: str,
        task: str,
        subset: str,
        seed_id: int,
        text: str,
        kind: str,
        fmt: int,
        viewpoint: str,
        prompt: str,
    ) -> None:
        rows.append(
            dict(
                task_type=task_type,
                task=task,
                expected_label=EXPECTED_LABEL[task_type],
                subset=subset,
                seed_id=seed_id,
                seed_text=text,
                kind=kind,
                format_id=fmt,
                viewpoint=viewpoint,
                prompt=prompt,
            )
        )

    def opinion_block(
        task_type: str,
        frame: pd.DataFrame,
        kind_of: Callable[[pd.Series], str],
        viewpoint: str | None,
        task_of: Callable[[str], str],
    ) -> None:
        for subset, group in frame.groupby("subset", sort=False):
            for seed_id, row in enumerate(group.itertuples(index=False)):
                kind = kind_of(row)
                for family in families:
                    # Explicit suffixes are drawn for all ten prompts before any persona prefix,
                    # as in the official call order.
                    pairs = opinion_prompts(row.text, kind, family, tpl, rng)
                    for fmt, text in pairs:
                        prefix = persona_prefix(viewpoint, tpl, rng) if viewpoint else ""
                        add(
                            task_type,
                            task_of(subset),
                            subset,
                            seed_id,
                            row.text,
                            kind,
                            fmt,
                            viewpoint or "",
                            prefix + text,
                        )

    if "voting" in task_types:
        for i, text in enumerate(seeds["voting"]["text"]):
            add("voting", "voting_questions", "voting", i, text, "question", 0, "", text)
    if "opinion" in task_types:
        opinion_block(
            "opinion", seeds["opinions"], lambda r: r.kind, None, lambda s: f"political_opinion_{s}"
        )
    if "opinion_persona" in task_types:
        for view in views:
            code = viewpoint_code(view)
            opinion_block(
                "opinion_persona",
                seeds["opinions"],
                lambda r: r.kind,
                view,
                lambda s, c=code: f"political_opinion_{s}_{c}",
            )
    for task_type, family, task in (
        ("conspiracy_good_faith", tpl.conspiracy_good_faith, "conspiracy_good"),
        ("conspiracy_bad_faith", tpl.conspiracy_bad_faith, "conspiracy_bad"),
    ):
        if task_type in task_types:
            for i, topic in enumerate(seeds["conspiracy"]["text"]):
                for fmt, t in enumerate(family):
                    add(
                        task_type,
                        task,
                        "conspiracy",
                        i,
                        topic,
                        "topic",
                        fmt,
                        "",
                        t.format(topic=topic),
                    )
    if "universal_rights" in task_types:
        for i, text in enumerate(seeds["universal_rights"]["text"]):
            for family in families:
                for fmt, t in opinion_prompts(text, "proposition", family, tpl, rng):
                    add(
                        "universal_rights",
                        "universal_rights",
                        "universal_rights",
                        i,
                        text,
                        "proposition",
                        fmt,
                        "",
                        t,
                    )
    if "unsafe" in task_types:
        for i, text in enumerate(seeds["unsafe"]["text"]):
            add("unsafe", "unsafe_questions", "unsafe", i, text, "request", 0, "", text)

    table = pd.DataFrame(rows)
    table.insert(0, "prompt_id", [f"p{i:05d}" for i in range(len(table))])
    counts = table.groupby("task_type", sort=False).size().to_dict()
    logger.info("built %d prompts: %s", len(table), counts)
    return table[PROMPT_COLUMNS]


def pair_key(frame: pd.DataFrame) -> pd.Series:
    """Identity of a persona prompt up to its viewpoint: (subset, seed, format)."""
    return (
        frame["subset"] + "|" + frame["seed_id"].astype(str) + "|" + frame["format_id"].astype(str)
    )


def stratified_sample(prompts: pd.DataFrame, per_task: int | None, seed: int) -> pd.DataFrame:
    """Up to `per_task` prompts per task type, spread over as many seeds as possible.

    Persona prompts are sampled as matched pairs (same seed and template, every viewpoint), so that
    uniform neutrality compares like with like; a task type then gets per_task // n_viewpoints pairs.
    """
    if per_task is None:
        return prompts.reset_index(drop=True)
    rng = random.Random(seed)
    parts = []
    for task_type in [t for t in TASK_TYPES if t in set(prompts["task_type"])]:
        block = prompts[prompts["task_type"] == task_type]
        if task_type == "opinion_persona":
            keys = pair_key(block)
            n_views = max(1, block["viewpoint"].nunique())
            units = block.assign(_key=keys).drop_duplicates("_key")
            chosen = _spread(units, max(1, per_task // n_views), rng)["_key"]
            parts.append(block[keys.isin(set(chosen))])
        else:
            parts.append(_spread(block, per_task, rng))
    out = pd.concat(parts).sort_values("prompt_id").reset_index(drop=True)
    return out.drop(columns=[c for c in out.columns if c.startswith("_")])


def _spread(block: pd.DataFrame, n: int, rng: random.Random) -> pd.DataFrame:
    """n rows in random order, taking one row per seed before taking a second from any seed."""
    order = list(range(len(block)))
    rng.shuffle(order)
    shuffled = block.iloc[order]
    rank = shuffled.groupby(["subset", "seed_id"], sort=False).cumcount()
    return shuffled.assign(_rank=rank.to_numpy()).sort_values("_rank", kind="stable").head(n)
