"""FedDDA, its ablations and the baselines as data: prompt layout, adapters on/off, what is shared.

All run through the same protocol (:func:`.federated.run_federated`) on the same frozen towers, data,
rounds and optimiser. ``dual_prompt`` is a simplified stand-in for the feature-level dual-prompt
methods FedDDA compares with (FedOTP / FedPGP: a global and a local prompt encoded separately and
combined as text features), not a reimplementation of either.
"""

from __future__ import annotations

from dataclasses import dataclass

SHARED_ADAPTER = ("shared_adapter.w1", "shared_adapter.w2")


@dataclass(frozen=True)
class MethodSpec:
    """How one method builds its prompts and image features, and which state keys the server averages.

    ``blocks`` maps each context block to its length in units of n_ctx (L).
    """

    name: str
    layout: str
    blocks: tuple[tuple[str, int], ...]
    vda: bool
    shared: tuple[str, ...]

    @property
    def trains(self) -> bool:
        return bool(self.blocks)


DUAL = (("global_ctx", 1), ("personal_ctx", 1))
SPECS: dict[str, MethodSpec] = {
    "zero_shot": MethodSpec("zero_shot", "hand", (), False, ()),
    "local_coop": MethodSpec("local_coop", "front", (("ctx", 2),), False, ()),
    "promptfl": MethodSpec("promptfl", "front", (("ctx", 2),), False, ("ctx",)),
    "dual_prompt": MethodSpec("dual_prompt", "dual_separate", DUAL, False, ("global_ctx",)),
    "dual_prompt_vda": MethodSpec(
        "dual_prompt_vda", "dual_separate", DUAL, True, ("global_ctx", *SHARED_ADAPTER)
    ),
    "fedda_no_tpd": MethodSpec(
        "fedda_no_tpd", "front_concat", DUAL, True, ("global_ctx", *SHARED_ADAPTER)
    ),
    "fedda_no_vda": MethodSpec("fedda_no_vda", "middle_link", DUAL, False, ("global_ctx",)),
    "fedda": MethodSpec("fedda", "middle_link", DUAL, True, ("global_ctx", *SHARED_ADAPTER)),
}


def spec(name: str) -> MethodSpec:
    """The spec of a method by name (a clear error for an unknown one)."""
    if name not in SPECS:
        raise ValueError(f"unknown method {name!r}; choose from {sorted(SPECS)}")
    return SPECS[name]
