"""The claims of les_molecules: the expressions claims asked again of SELFIES molecules.

The paper's SELFIES cells could not be retrieved (spec), so no number stands beside ours and none of
these gate: they are reported.
"""

from __future__ import annotations

from paper_pipelines.common.claims import Claim

SOURCE = (
    "abstract (5 tasks incl. SELFIES molecules); the paper's SELFIES cells were not retrievable"
)
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="les_detects_low_quality",
        statement="LES predicts whether the argmax decoding is a quality molecule (sanitises, no "
        "PAINS / Brenk alert) with AUROC >= 0.75 over encoded, prior and far latents.",
        condition="auroc_les >= 0.75",
        source=SOURCE,
        gates=False,
    ),
    Claim(
        id="les_beats_prior",
        statement="LES beats the prior's -||z||^2 by at least 0.15 AUROC.",
        condition="auroc_les >= auroc_prior + 0.15",
        source=SOURCE,
        gates=False,
    ),
    Claim(
        id="les_beats_polarity",
        statement="LES beats the polarity volume score by at least 0.10 AUROC.",
        condition="auroc_les >= auroc_polarity + 0.10",
        source=SOURCE,
        gates=False,
    ),
    Claim(
        id="les_raises_valid_fraction",
        statement="Adding LES to gradient-ascent LSO raises the quality fraction by >= 10 points "
        "over no penalty.",
        condition="valid_frac_les >= valid_frac_none + 0.10",
        source="abstract: 'LES always enhances the quality of the solutions'",
        gates=False,
    ),
    Claim(
        id="les_keeps_objective",
        statement="...while the best valid objective drops by at most 0.5.",
        condition="best_valid_objective_les_minus_none >= -0.5",
        source="abstract: 'while maintaining high objective values'",
        gates=False,
    ),
)

HEADLINE_FIGURE = "auroc_plot"
