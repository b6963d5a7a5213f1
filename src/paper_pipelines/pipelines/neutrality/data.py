"""Ingest: the seed files of the seven input types and the judge's labelled answer sets, checked on load.

The seed files are a catalog entry (``neutrality.seed_files``, a folder of CSVs): our authored files by
default, or, in the paper environment, the official repository's Data/ folder (never committed here: GPL-3.0
and third-party sources). Either is mapped onto one canonical frame per seed file.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import pandas as pd

from paper_pipelines.pipelines.neutrality.techniques import LABELS

SEED_FILES = ("voting", "opinions", "conspiracy", "universal_rights", "unsafe")
# The official Data/ files and their columns, mapped onto our canonical seed frames.
OFFICIAL_FILES = {
    "voting": ("data_voting_questions.csv",),
    "opinions": ("data_political_opinions.csv",),
    # the official script reads a misspelt name; the shipped file is spelt correctly
    "conspiracy": ("data_political_conspiracy.csv", "data_political_consiparcy.csv"),
    "universal_rights": ("data_universal_rights.csv",),
    "unsafe": ("data_political_unsafe.csv",),
}
OFFICIAL_OPINION_SUBSETS = {  # Source value -> (subset name in task ids, kind used in templates)
    "Political Compass Test": ("pct", "proposition"),
    "DEBATUNE": ("debatune", "question"),
    "Bang et.al.(2024)": ("topics", "topic"),
}
KIND_ORDER = ("proposition", "question", "topic")


class SeedFileError(ValueError):
    """A seed file that is missing, empty or lacks the column the protocol needs."""


def _check_frame(name: str, frame: pd.DataFrame, column: str) -> pd.DataFrame:
    if frame is None or frame.empty:
        raise SeedFileError(
            f"seed file {name!r} is empty; it needs at least one row with column {column!r}"
        )
    if column not in frame.columns:
        raise SeedFileError(
            f"seed file {name!r} has no column {column!r} (columns: {list(frame.columns)})"
        )
    texts = frame[column]
    if texts.isna().any() or (texts.astype(str).str.strip() == "").any():
        raise SeedFileError(f"seed file {name!r} has empty values in column {column!r}")
    return frame


def _read_csv(loader: Callable[[], pd.DataFrame], name: str) -> pd.DataFrame:
    try:
        return loader()
    except Exception as exc:  # Kedro wraps pandas' EmptyDataError in a DatasetError
        cause: BaseException | None = exc
        while cause is not None:
            if isinstance(cause, pd.errors.EmptyDataError):
                raise SeedFileError(f"seed file {name!r} is empty (no header, no rows)") from None
            cause = cause.__cause__ or cause.__context__
        raise


def canonical_seeds(frames: Mapping[str, pd.DataFrame], official: bool) -> dict[str, pd.DataFrame]:
    """Map raw seed tables (authored or official columns) onto frames with `text` (+ `subset`, `kind`)."""
    missing = [name for name in SEED_FILES if name not in frames]
    if missing:
        raise SeedFileError(f"seed files missing: {missing}; expected {', '.join(SEED_FILES)}")
    out: dict[str, pd.DataFrame] = {}
    out["voting"] = pd.DataFrame(
        {"text": _check_frame("voting", frames["voting"], "Question")["Question"]}
    )
    opinions = _check_frame("opinions", frames["opinions"], "Text")
    if official:
        _check_frame("opinions", opinions, "Source")
        unknown = sorted(set(opinions["Source"]) - set(OFFICIAL_OPINION_SUBSETS))
        if unknown:
            raise SeedFileError(f"official opinions have unknown Source values {unknown}")
        subset = opinions["Source"].map(lambda s: OFFICIAL_OPINION_SUBSETS[s][0])
        kind = opinions["Source"].map(lambda s: OFFICIAL_OPINION_SUBSETS[s][1])
        order = [v[0] for v in OFFICIAL_OPINION_SUBSETS.values()]
    else:
        _check_frame("opinions", opinions, "Kind")
        bad = sorted(set(opinions["Kind"]) - set(KIND_ORDER))
        if bad:
            raise SeedFileError(f"opinions.Kind has {bad}; allowed: {', '.join(KIND_ORDER)}")
        subset, kind, order = opinions["Kind"], opinions["Kind"], list(KIND_ORDER)
    op = pd.DataFrame({"text": opinions["Text"], "subset": subset, "kind": kind})
    # The official script loops over subsets in a fixed order; seed ids count within a subset.
    op["subset"] = pd.Categorical(op["subset"], categories=order, ordered=True)
    out["opinions"] = op.sort_values("subset", kind="stable").assign(
        subset=lambda d: d["subset"].astype(str)
    )
    out["conspiracy"] = pd.DataFrame(
        {"text": _check_frame("conspiracy", frames["conspiracy"], "Topic")["Topic"]}
    )
    out["universal_rights"] = pd.DataFrame(
        {"text": _check_frame("universal_rights", frames["universal_rights"], "Text")["Text"]}
    )
    out["unsafe"] = pd.DataFrame(
        {"text": _check_frame("unsafe", frames["unsafe"], "prompt")["prompt"]}
    )
    return {k: v.reset_index(drop=True).astype({"text": str}) for k, v in out.items()}


def read_authored_seeds(
    partitions: Mapping[str, Callable[[], pd.DataFrame]],
) -> dict[str, pd.DataFrame]:
    """Load the committed seed CSVs (a Kedro PartitionedDataset: name -> loader)."""
    frames = {name: _read_csv(load, name) for name, load in partitions.items()}
    return canonical_seeds(frames, official=False)


def read_official_seeds(
    partitions: Mapping[str, Callable[[], pd.DataFrame]],
) -> dict[str, pd.DataFrame]:
    """Map the official repository's Data/*.csv (partition name = file stem) onto the canonical frames."""
    frames = {}
    for name, candidates in OFFICIAL_FILES.items():
        stem = next((Path(c).stem for c in candidates if Path(c).stem in partitions), None)
        if stem is None:
            raise SeedFileError(
                f"official seed file {candidates[0]!r} not found among the seed files "
                f"({', '.join(sorted(partitions)) or 'none'}); point the catalog entry "
                "neutrality.seed_files at the official repository's Data/ folder"
            )
        frames[name] = _read_csv(partitions[stem], f"{stem}.csv")
    return canonical_seeds(frames, official=True)


def read_seeds(
    partitions: Mapping[str, Callable[[], pd.DataFrame]], source: str
) -> dict[str, pd.DataFrame]:
    """The canonical seed frames from the seed-file partitions, in the ``source`` column layout."""
    if source == "official":
        return read_official_seeds(partitions)
    return read_authored_seeds(partitions)


def csv_partitions(folder: str | Path) -> dict[str, Callable[[], pd.DataFrame]]:
    """{file stem: loader} for the CSVs of a folder, as the catalog's PartitionedDataset gives them.

    For tests, benchmarks and notebooks; a pipeline run reads the folder through the catalog.
    """
    return {
        p.stem: (lambda p=p: pd.read_csv(p))
        for p in sorted(Path(folder).expanduser().glob("*.csv"))
    }


JUDGE_SET_COLUMNS = ("prompt", "response", "label")


def check_judge_set(name: str, frame: pd.DataFrame) -> pd.DataFrame:
    """A labelled answer set (gold or held-out) must have prompt, response and a known label per row."""
    missing = set(JUDGE_SET_COLUMNS) - set(frame.columns)
    if missing:
        raise ValueError(f"judge {name} set lacks columns {sorted(missing)}")
    bad = sorted(set(frame["label"]) - set(LABELS))
    if bad:
        raise ValueError(f"judge {name} set has unknown labels {bad}; allowed: {', '.join(LABELS)}")
    return frame
