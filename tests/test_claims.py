"""Claims as data: conditions over metrics, the claims table, and what happens when a claim fails."""

from __future__ import annotations

import pytest

from paper_pipelines.common.claims import Claim, claim_holds, evaluate_claims

METRICS = {"ppl_dlp": 150.0, "ppl_owl": 280.0, "ratio": 0.45, "nan_metric": None}


@pytest.mark.parametrize(
    ("condition", "holds"),
    [
        ("ppl_dlp < ppl_owl", True),
        ("ppl_dlp > ppl_owl", False),
        ("ppl_dlp / ppl_owl < 0.6 and ratio <= 0.5", True),
        ("abs(ratio - 0.5) < 0.01", False),
        ("0.4 < ratio < 0.5", True),
        ("not ratio > 1 or ppl_dlp > 1e9", True),
        ("max(ppl_dlp, ppl_owl) == 280", True),
    ],
)
def test_conditions_read_like_the_paper(condition, holds):
    assert claim_holds(Claim("c", "s", condition), METRICS, "toy") is holds


def test_a_claim_that_fails_is_shown_as_not_reproduced():
    claims = [
        Claim(
            "c1", "DLP beats OWL", "ppl_dlp < ppl_owl", paper={"ppl_dlp": 22.79}, source="Table 1"
        ),
        Claim("c2", "DLP halves OWL", "ppl_dlp < 0.5 * ppl_owl", gates=False),
    ]
    table = evaluate_claims(claims, METRICS, "toy")
    assert list(table["holds"]) == [True, False]
    assert table.loc[0, "ours"] == "ppl_dlp = 150, ppl_owl = 280"
    assert table.loc[0, "paper"] == "ppl_dlp = 22.79" and table.loc[0, "source"] == "Table 1"
    assert list(table["gates"]) == [True, False]


def test_a_metric_the_run_lacks_is_an_error_naming_the_key():
    with pytest.raises(KeyError, match=r"toy:c reads \['ppl_sparsegpt'\].*toy/report.py"):
        claim_holds(Claim("c", "s", "ppl_sparsegpt < ppl_owl"), METRICS, "toy")


def test_a_nan_metric_never_reproduces():
    assert claim_holds(Claim("c", "s", "nan_metric < 1"), METRICS, "toy") is False


def test_conditions_cannot_run_code():
    with pytest.raises(ValueError, match="unsupported expression"):
        Claim("c", "s", "__import__('os').getcwd() == ratio")
    with pytest.raises(ValueError, match="unsupported expression"):
        Claim("c", "s", "ratio.real > 0")
