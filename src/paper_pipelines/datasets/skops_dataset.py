"""SkopsDataset: scikit-learn estimators (or containers of them) saved with skops instead of pickle.

skops.io stores an estimator as a zip of JSON and arrays and, on load, builds only the types it is told
to trust; a pickle would run any code the file names. On load this dataset trusts the types skops
reports as not trusted by default only when they come from scikit-learn, numpy, scipy or this
project; a file that names anything else is refused with the list of those types.

Example catalog entry (the ``{ns}.{name}_skops`` factory in conf/base/catalog/_shared.yml)::

    srca.baseline_models_skops:
      type: paper_pipelines.datasets.SkopsDataset
      filepath: data/06_models/srca/baseline_models.skops
      versioned: true
"""

from __future__ import annotations

from typing import Any

from kedro.io.core import DatasetError

from paper_pipelines.datasets._versioned_file import VersionedFileDataset

# builtins (functions such as eval among them) are never trusted wholesale: a file naming one is refused.
TRUSTED_PREFIXES = ("sklearn.", "numpy.", "scipy.", "paper_pipelines.")


class SkopsDataset(VersionedFileDataset):
    def save(self, data: Any) -> None:
        import skops.io as sio

        try:
            payload = sio.dumps(data)
        except TypeError as exc:
            raise DatasetError(f"SkopsDataset cannot store a {type(data).__name__}: {exc}") from exc
        self._write_bytes(payload)

    def load(self) -> Any:
        import skops.io as sio

        load_path, payload = self._read_bytes()
        untrusted = sio.get_untrusted_types(data=payload)
        refused = [t for t in untrusted if not t.startswith(TRUSTED_PREFIXES)]
        if refused:
            raise DatasetError(
                f"{load_path} names types outside scikit-learn, numpy, scipy and paper_pipelines: "
                f"{refused}; refusing to load it. If you wrote this file, load it yourself with "
                "skops.io.load(..., trusted=[...]) after reading those types."
            )
        return sio.loads(payload, trusted=untrusted)
