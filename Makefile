# Giro: `make run` serves the app with demo data; `make test` runs the suite.
VENV    ?= .venv
PYTHON  ?= python3
BIN      = $(VENV)/bin
FLASK    = $(BIN)/flask --app app
HOST    ?= 127.0.0.1
PORT    ?= 8000
WORKERS ?= 3
JOB_WORKERS ?= 2
PYTEST_ARGS ?= --durations=15

.PHONY: install browser run test test-sqlite test-postgres lint migrate demo bench clean

install: $(VENV)/.installed static/vendor/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e ".[dev]"
	touch $@

static/vendor/.installed: package.json package-lock.json scripts/vendor_assets.sh
	npm ci --no-audit --no-fund --loglevel=error
	scripts/vendor_assets.sh
	touch $@

# Browser tests drive Debian's chromium (no browser download): installed here when root.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "chromium is missing: 'sudo apt-get install chromium' to run the browser tests"; \
	  fi; \
	fi

migrate: install
	$(FLASK) db upgrade

demo: migrate
	$(FLASK) demo load --if-empty

# Without REDIS_URL, jobs run in threads of the web processes; with it, JOB_WORKERS RQ workers
# start next to gunicorn and stop with it.
run: demo
	@echo "Giro on http://$(HOST):$(PORT)  (remanejamento API /api/v1/docs, tracker API /tracker/api/v1/docs)"
	@if [ -n "$$REDIS_URL" ]; then \
	  echo "REDIS_URL set: starting $(JOB_WORKERS) job worker(s)"; \
	  for i in $$(seq $(JOB_WORKERS)); do $(FLASK) worker --name "make-run-$$$$-$$i" & done; \
	  trap 'kill $$(jobs -p) 2>/dev/null; wait' EXIT INT TERM; \
	fi; \
	$(BIN)/gunicorn "app:create_app()" --bind $(HOST):$(PORT) --workers $(WORKERS)

# The suite runs on SQLite; with TEST_DATABASE_URL set it runs on that database too, both at
# once (one core each; each suite's output is printed whole when it ends). What proves nothing
# about the database (tests marked any_database) then runs in one of the two: the browser
# flows on SQLite, the OpenAPI fuzz on PostgreSQL. The PostgreSQL run takes Redis database 14 unless TEST_REDIS_URL says
# otherwise, so that the two runs' Redis tests never read each other's keys.
test: install browser
	@if [ -n "$$TEST_DATABASE_URL" ]; then \
	  TEST_BOTH_DATABASES=1 $(MAKE) --no-print-directory -j2 --output-sync=target test-sqlite test-postgres; \
	else \
	  $(MAKE) --no-print-directory test-sqlite; \
	fi

test-sqlite:
	env -u TEST_DATABASE_URL $(BIN)/pytest $(PYTEST_ARGS)

test-postgres:
	TEST_REDIS_URL=$${TEST_REDIS_URL:-redis://127.0.0.1:6379/14} $(BIN)/pytest $(PYTEST_ARGS)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

bench: install
	$(BIN)/python benchmarks/import_sales.py

clean:
	rm -rf $(VENV) node_modules static/vendor .pytest_cache
