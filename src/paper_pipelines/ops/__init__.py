"""Operations: scheduled retraining (APScheduler, cron --once, Airflow DAGs) and lineage across runs.

See docs/operations.md. Entry points: ``python -m paper_pipelines.ops`` (cli.py),
``paper-pipelines-schedule`` and ``make schedule`` / ``make schedule-once`` / ``make runs``.
"""
