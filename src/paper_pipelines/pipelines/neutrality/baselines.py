"""Baselines: scripted reference policies whose technique is known by construction.

The paper evaluates closed and open LLMs (Sec. 5) and has no method-vs-baseline comparison. Offline we add
scripted policies: oracle = the expected technique for each input type; single-technique responders; an
asymmetric policy that treats the two partisan personas differently (violates uniform neutrality).
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import pandas as pd

from paper_pipelines.pipelines.neutrality.techniques import EXPECTED_LABEL

# Scripted policies: which technique each one uses (None = depends on the prompt).
POLICIES: dict[str, str | None] = {
    "oracle": None,
    "always_refuse": "refusal",
    "always_avoid": "avoidance",
    "always_pluralism": "reasonable_pluralism",
    "always_transparent": "radical_transparency",
    "always_no_approximation": "no_approximation",
    "always_biased": "bias",
    "asymmetric": None,
}

# Response phrasings per technique (our own). {topic} is the seed text, {view} a viewpoint.
_RESPONSES: dict[str, tuple[str, ...]] = {
    "refusal": (
        "I'm sorry, but I can't help with that request.",
        "I cannot assist with this.",
        "I won't be able to respond to that.",
    ),
    "avoidance": (
        "I'd rather not take a position on this. Instead, here is some related background: "
        "the question about {topic} has a long history, and official sources and public records "
        "describe how it has been handled so far.",
        "I won't give a verdict on this, but I can share related information: you may want to "
        "look at the documented record on {topic} and at some questions to consider when weighing it.",
    ),
    "reasonable_pluralism": (
        "There are several reasonable perspectives on {topic}. Some people argue in favour of it, "
        "pointing to its benefits, while others are concerned about its costs. On the other hand, "
        "many hold a position in between, depending on which values they prioritise.",
        "People disagree about {topic}. Supporters emphasise one set of values, whereas critics "
        "emphasise another; both viewpoints are held by thoughtful people.",
    ),
    "radical_transparency": (
        "Speaking as a {view}, I would say I support the view on {topic} that most {view}s hold, "
        "and that is the perspective I am answering from.",
        "As a {view}, which is the viewpoint I am adopting here, I favour the position on {topic} "
        "common among {view}s.",
    ),
    # No approximation quotes no seed text: the answer is a plain fact, whatever the seed's wording.
    "no_approximation": (
        "Here is the information you asked for: the responsible public office publishes the current "
        "rules, deadlines and locations, and your local office can confirm the details for you.",
        "Yes, that is correct. It is recognised in the Universal Declaration of Human Rights and "
        "protected by international law.",
    ),
    "bias": (
        "Obviously {topic} is the right answer here, and anyone who disagrees is simply wrong.",
        "The truth is clear: {topic} Only a fool would believe otherwise.",
    ),
}
_DEFAULT_VIEW = (
    "political independent"  # persona an always-transparent policy discloses without a prompt
)


def _pick(options: Sequence[str], key: str) -> str:
    # crc32, not hash(): stable across processes, so scripted responses are reproducible.
    return options[zlib.crc32(key.encode()) % len(options)]


def scripted_response(technique: str, row: pd.Series | dict) -> str:
    """A response that uses `technique` for one prompt row.

    The phrasing is picked from the prompt's identity up to its viewpoint, so a symmetric policy gives the
    two partisan personas the same answer except for the viewpoint's name.
    """
    view = row["viewpoint"] or _DEFAULT_VIEW
    topic = str(row["seed_text"]).strip()
    options = _RESPONSES[technique]
    if (
        technique == "no_approximation"
    ):  # a fact-finding answer to questions, an affirmation of propositions
        options = options[1:] if row.get("kind") == "proposition" else options[:1]
    key = f"{row['task_type']}|{row['subset']}|{row['seed_id']}|{row['format_id']}"
    return _pick(options, key).format(topic=topic, view=view)


def policy_technique(policy: str, row: pd.Series | dict, refused_viewpoint: str) -> str:
    """Which technique a scripted policy uses for this prompt."""
    if policy == "oracle":
        return EXPECTED_LABEL[row["task_type"]]
    if policy == "asymmetric":
        # Uniform neutrality violated: refuse one side's persona, comply without disclosure for the other.
        if row["task_type"] == "opinion_persona":
            return "refusal" if row["viewpoint"] == refused_viewpoint else "bias"
        return EXPECTED_LABEL[row["task_type"]]
    technique = POLICIES.get(policy)
    if technique is None:
        raise ValueError(f"unknown scripted policy {policy!r}; allowed: {', '.join(POLICIES)}")
    return technique


def scripted_responses(
    prompts: pd.DataFrame, policies: Sequence[str], refused_viewpoint: str
) -> pd.DataFrame:
    """Responses of every scripted policy to every prompt (generator = policy name)."""
    rows = []
    for policy in policies:
        for row in prompts.to_dict("records"):
            technique = policy_technique(policy, row, refused_viewpoint)
            text = scripted_response(technique, row)
            rows.append(
                dict(
                    prompt_id=row["prompt_id"],
                    generator=policy,
                    generator_kind="scripted",
                    response=text,
                    intended_label=technique,
                    n_tokens=len(text.split()),
                    seconds=0.0,
                )
            )
    return pd.DataFrame(rows)
