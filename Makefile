# `make test` and `make demo` work on a fresh machine: each builds the
# virtual environment it needs first (pinned by constraints.txt).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.ppy-installed

.PHONY: test test-torch lint typecheck demo check venv clean bench opdata records gpu gpu-dry

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	# The distribution was called `ppy` before it became `ppy-regions`: drop that install's stale metadata.
	@$(PY) -m pip show --quiet ppy >/dev/null 2>&1 && $(PY) -m pip uninstall --quiet --yes ppy || true
	# editable_mode=compat: a plain path in a .pth file, which mypy (and so the plugin's tests) can follow.
	$(PY) -m pip install --quiet --disable-pip-version-check -c constraints.txt --config-settings editable_mode=compat -e '.[dev]'
	@touch $(STAMP)

# Two workers: C++ builds already use both cores, but the mypy, checker and verification tests between
# them are single-threaded Python. Builds are shared through the cache's locks (each is made once).
# --dist loadfile: a file's tests run in one worker, in order, and its module-scoped builds are made once.
# lint and typecheck first: a finding stops the run before the minutes of pytest.
test: lint typecheck
	$(PY) -m pytest --ppy-verify -n 2 --dist loadfile

# The declared torch range (README.md, "Install"): the torch and compiler groups with --ppy-verify, the torch
# stack and the mypy plugin's tests under release $(TORCH), in a venv of its own under $(TORCH_VENVS) (a CUDA
# build of several GB: never inside the repository), with ppy installed editable from this tree. Slow (every
# build is made again against that torch's headers); writes bench/results/torch_range.* and README's table.
TORCH ?=
TORCH_VENVS ?= $(HOME)/.cache/ppy/venvs
test-torch: $(STAMP)
	@test -n "$(TORCH)" || { echo "make test-torch: name a release, e.g. make test-torch TORCH=2.11.0"; exit 2; }
	$(PY) bench/torch_range.py --torch $(TORCH) --venvs $(TORCH_VENVS) --python $(PYTHON) --update-readme

# ruff's rules and files are in pyproject.toml ([tool.ruff]).
lint: $(STAMP)
	$(VENV)/bin/ruff check

# mypy --strict over ppy's packages and bench/ (pyproject.toml's [tool.mypy]); .mypy_cache keeps a rerun to seconds.
typecheck: $(STAMP)
	$(PY) -m mypy

check: $(STAMP)
	$(VENV)/bin/ppy-check .

demo: $(STAMP)
	$(VENV)/bin/ppy-check examples
	$(PY) examples/gpt2/gpt2.py
	$(PY) examples/gpt2/gpt2_modules.py

bench: $(STAMP)
	$(PY) bench/check_speed.py

# The prepared GPU run (README.md, "GPU run"): on a lent machine as it is, with its own python3 and torch, so
# no virtual environment and nothing installed. gpu-dry is the same steps on this CPU, with the venv.
gpu:
	$(PYTHON) bench/gpu_run.py

gpu-dry: $(STAMP)
	$(PY) bench/gpu_run.py --dry-run

opdata: $(STAMP)
	$(PY) -m ppy_check.gen_opdata

# The tables of ppy's dataclass methods (ppy_check/records.py), after a record's fields change: this venv's
# Python, then each other supported one on PATH (python3.10 ... python3.13). A table is made from the standard
# library and ppy alone, so those interpreters need nothing installed.
records: $(STAMP)
	$(PY) -m ppy_check.gen_records
	@own=$$($(PY) -c 'import sys; print("%d.%d" % sys.version_info[:2])'); for v in 3.10 3.11 3.12 3.13; do \
	  if [ "$$v" != "$$own" ] && command -v python$$v >/dev/null; then \
	    PYTHONPATH=$(CURDIR) python$$v -m ppy_check.gen_records; fi; done

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .mypy_cache .ruff_cache
