"""`python -m paper_pipelines.ops ...`: see paper_pipelines.ops.cli."""

import sys

from paper_pipelines.ops.cli import main

if __name__ == "__main__":
    sys.exit(main())
