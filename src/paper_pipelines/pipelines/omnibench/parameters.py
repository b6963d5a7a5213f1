"""Parameter blocks of omnibench (conf/*/parameters/omnibench.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Bins
are checked here (empty or overlapping bins are errors), capability names are a Literal, and the rule
that spans blocks (the held-out categories exist, a capability's levels can be composed) is
:func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "AgentParams",
    "CapabilityParams",
    "CompositionParams",
    "DataParams",
    "DiscoveryParams",
    "EvaluationParams",
    "RuntimeParams",
    "Seed",
    "SynthesisParams",
    "TrainParams",
    "check_across_blocks",
]

Level = Literal["easy", "medium", "hard"]
Dimension = Literal["edges", "nodes", "categories", "depth", "width"]
DIMENSIONS: tuple[str, ...] = ("edges", "nodes", "categories", "depth", "width")
AgentName = Literal[
    "random",
    "oracle_contiguous",
    "oracle_random_order",
    "noisy_oracle",
    "instruction_planner",
    "learned_planner",
    "lm_agent",
]
# The seven capabilities the paper names, then three slots whose names we could not verify (spec 4c).
Capability = Literal[
    "parallel_planning",
    "long_range_planning",
    "long_instruction_following",
    "subtask_identification",
    "dependency_identification",
    "cross_domain_decision_making",
    "sequential_decision_making",
    "unverified_slot_8",
    "unverified_slot_9",
    "unverified_slot_10",
]
# Smallest value each measure can take (a task has at least one node, one category, depth 1, width 1).
MIN_VALUE = {"edges": 0, "nodes": 1, "categories": 1, "depth": 1, "width": 1}


class DataParams(ParamsModel):
    """Which authored applications make up the desktop, and whether the authored tasks join the benchmark."""

    files_per_type: int = Field(
        3, ge=1
    )  # desktop files of each resource type kept (authored order)
    authored_tasks: bool = True
    apps: list[str] | None = None  # null = every app of data/authored/omnibench/apps.yml


class DiscoveryParams(ParamsModel):
    """Subtask discovery (process 1): random exploration of each app's UI graph, or enumeration."""

    mode: Literal["explore", "enumerate"] = "explore"
    episodes_per_app: int = Field(60, ge=1)
    max_depth: int = Field(8, ge=2)
    max_bindings: int = Field(6, ge=1)


class SynthesisParams(ParamsModel):
    """Iterative synthesis with cross-verification (process 2): faults injected, up to max_iters tries."""

    max_iters: int = Field(3, ge=1)
    fault_rate: float = Field(0.15, ge=0, le=1)


class Bins(ParamsModel):
    """Easy <= lo < Medium <= hi < Hard for each measure (paper Table 2: edges <= 1, 2-3, >= 4)."""

    edges: tuple[int, int] = (1, 3)
    nodes: tuple[int, int] = (2, 4)
    categories: tuple[int, int] = (1, 2)
    depth: tuple[int, int] = (2, 3)
    width: tuple[int, int] = (1, 2)

    @model_validator(mode="after")
    def _non_empty_and_ordered(self) -> Bins:
        for dim in DIMENSIONS:
            lo, hi = getattr(self, dim)
            if lo < MIN_VALUE[dim]:
                raise ValueError(
                    f"composition.bins.{dim} = [{lo}, {hi}] leaves the Easy bin empty: the lower "
                    f"bound must be >= {MIN_VALUE[dim]} (the smallest {dim} a task can have)"
                )
            if hi <= lo:
                raise ValueError(
                    f"composition.bins.{dim} = [{lo}, {hi}] gives an empty or overlapping Medium "
                    f"bin: Easy is <= {lo}, Medium {lo + 1}..{hi}, Hard > {hi}; use lo < hi"
                )
        return self


class CompositionParams(ParamsModel):
    """Task composition by resource matching (process 3), rejection-sampled into the requested bins."""

    n_tasks: int = Field(1000, ge=1)
    max_tries: int = Field(200, ge=1)
    max_nodes: int = Field(8, ge=2, le=12)
    capability_share: float = Field(0.6, ge=0, le=1)
    bins: Bins = Bins()


class CapabilityParams(ParamsModel):
    """The ten capability suites as level filters: each names levels per complexity dimension."""

    per_capability: int = Field(40, ge=1)
    suites: dict[Capability, dict[Dimension, list[Level]]]

    @field_validator("suites")
    @classmethod
    def _ten_non_empty_filters(cls, value: dict) -> dict:
        empty = [
            name for name, rule in value.items() if not rule or any(not v for v in rule.values())
        ]
        if empty:
            raise ValueError(f"capabilities.suites {empty}: every filter needs at least one level")
        return value


class LMAgentParams(ParamsModel):
    """The LM agent: a causal LM (catalog entry ``omnibench.agent_lm``) prompted with each observation.

    A model is slow next to the scripted agents (seconds per step on a CPU), so it runs on the first
    ``tasks_per_capability`` tasks of every capability suite rather than on the whole benchmark.
    """

    tasks_per_capability: int = Field(1, ge=1)
    max_new_tokens: int = Field(32, ge=1)
    system_prompt: str | None = (
        "You operate a desktop app. Reply with exactly one action and nothing else: "
        "click_input(<label>), set_edit_text(<label>, <text>), keyboard_input(<keys>) or FINISH."
    )


class AgentParams(ParamsModel):
    """The agents evaluated on the benchmark and their knobs."""

    noise_p: float = Field(0.05, ge=0, le=1)
    retrieval: Literal["tfidf", "minilm"] = "tfidf"
    run_on: Literal["all", "suites"] = "all"
    names: list[AgentName] = Field(
        default_factory=lambda: [
            "random",
            "oracle_contiguous",
            "oracle_random_order",
            "noisy_oracle",
            "instruction_planner",
            "learned_planner",
        ],
        min_length=1,
    )
    lm: LMAgentParams = Field(default_factory=LMAgentParams)


class TrainParams(ParamsModel):
    """Training analogue: a next-subtask (dependency) classifier trained on graph vs chain-only tasks."""

    n_train_tasks: int = Field(300, ge=10)
    n_test_tasks: int = Field(150, ge=5)
    c: float = Field(1.0, gt=0)
    holdout_categories: list[str] = Field(
        default_factory=lambda: ["media", "archive"], min_length=1
    )


class EvaluationParams(ParamsModel):
    """OmniEval's stop rules (official MAX_STEP and WAIT_LIMIT) and the bootstrap of capability scores."""

    max_steps: int = Field(200, ge=1)
    wait_limit: int = Field(20, ge=1)
    bootstrap: int = Field(1000, ge=10)
    ci: float = Field(0.95, gt=0, lt=1)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks: the learned planner needs its training block; a suite's levels exist."""
    agents, composition = blocks.get("agents"), blocks.get("composition")
    if agents is not None and "noisy_oracle" not in agents.names:
        # the metrics contract reads noisy_oracle (the success gap, the capability profile difference)
        raise ValueError(
            "omnibench.agents.names must include noisy_oracle (the metrics contract reads it); "
            f"got {agents.names}"
        )
    if composition is not None and composition.bins.nodes[1] >= composition.max_nodes:
        raise ValueError(
            f"omnibench.composition.max_nodes = {composition.max_nodes} leaves the Hard nodes bin "
            f"(> {composition.bins.nodes[1]}) empty; raise max_nodes or lower bins.nodes"
        )
