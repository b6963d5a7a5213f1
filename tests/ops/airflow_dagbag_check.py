"""Run INSIDE the Airflow virtualenv: import a DAG folder with Airflow's own DagBag, print JSON.

    <airflow-venv>/bin/python tests/ops/airflow_dagbag_check.py <dag_folder>

Kept free of project imports: the Airflow venv only needs apache-airflow (the generated DAGs import
kedro inside their tasks, not at parse time).
"""

import json
import sys
import time

t0 = time.perf_counter()
from airflow.dag_processing.dagbag import DagBag  # noqa: E402

t_import = time.perf_counter() - t0
t1 = time.perf_counter()
bag = DagBag(dag_folder=sys.argv[1])
t_parse = time.perf_counter() - t1
report = {
    "import_errors": {str(k): str(v) for k, v in bag.import_errors.items()},
    "import_s": round(t_import, 2),
    "parse_s": round(t_parse, 2),
    "dags": {
        dag_id: {
            "fileloc": dag.fileloc,
            "max_active_runs": dag.max_active_runs,
            "catchup": dag.catchup,
            "schedule": getattr(dag.timetable, "summary", str(dag.timetable)),
            "tags": sorted(dag.tags),
            "tasks": {
                task.task_id: {
                    "upstream": sorted(task.upstream_task_ids),
                    "retries": task.retries,
                    "execution_timeout_s": task.execution_timeout.total_seconds()
                    if task.execution_timeout
                    else None,
                }
                for task in dag.tasks
            },
        }
        for dag_id, dag in bag.dags.items()
    },
}
print(json.dumps(report))
