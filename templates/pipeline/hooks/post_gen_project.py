"""After `kedro pipeline create <slug>`: place the fast / paper environments and the doc page.

Kedro itself copies the folder's tests/ to tests/pipelines/<slug>/ and config/ to conf/base/; the
files for the other two environments and docs/papers/<slug>.md travel in _project/ and are moved
here without overwriting anything that already exists.
"""

import shutil
from pathlib import Path

room = Path.cwd()  # src/paper_pipelines/pipelines/<slug>
project = room.parents[3]
staged = room / "_project"
for source in sorted(p for p in staged.rglob("*") if p.is_file()):
    target = project / source.relative_to(staged)
    if target.exists():
        print(f"kept existing {target.relative_to(project)}")
        continue
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    print(f"created {target.relative_to(project)}")
shutil.rmtree(staged)
