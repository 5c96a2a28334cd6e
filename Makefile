# okey101: the two set-up commands are `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
EXTRAS := client,bench,test
# Generated gRPC code (never committed): protos/ -> build/gen, importable as `okey.v1`.
PROTOS := $(wildcard protos/okey/v1/*.proto)
GEN := build/gen
GEN_STAMP := $(GEN)/.generated
# The tag the stable API is checked against (make lint: buf breaking).
API_TAG := api-v1
# The web client (web/, docs/web.md): its npm packages are installed again only when
# package-lock.json is newer than their stamp, and the page (web/dist, which the edge serves
# at /) is built again only when a source, a build setting or a proto is newer than its stamp.
WEB_DEPS := web/node_modules/.installed
WEB_BUILT := web/dist/.built
WEB_SOURCES := $(shell find web/src -type f -not -path 'web/src/gen/*' 2>/dev/null) \
	web/index.html web/package.json web/tsconfig.json web/vite.config.ts web/buf.gen.yaml
THIRD_PARTY_PROTOS := $(wildcard protos/third_party/google/rpc/*.proto)

.PHONY: help install gen run test lint typecheck unit bench bench-expert clean docs k8s soak \
	screenshot web web-screenshots

help:
	@echo "make run    set up and start the stack (the five services and the edge)"
	@echo "make test   set up, lint, type-check and run the tests"
	@echo "make lint   ruff, mypy, buf lint and breaking, hadolint only"
	@echo "make gen    generate the gRPC code from protos/ into build/gen"
	@echo "make web    build the web client (web/ -> web/dist, served by the edge at /)"
	@echo "make bench  benchmarks that print figures"
	@echo "make bench-expert  the expert's 2,000-deal runs (hours; resumable: var/journals/)"
	@echo "make soak   the long versions of the abuse and fault tests, and a 30-minute load run"
	@echo "make docs   regenerate docs/api.md from the protos' comments"
	@echo "make screenshot  redraw docs/terminal-client.svg (the README's) from a real position"
	@echo "make web-screenshots  redraw docs/web-*.png (the README's) from a hand played in chromium"
	@echo "make k8s    render every k8s/ overlay into build/k8s/<overlay>.yaml"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# The package with the extras local use and the tests need: the terminal client, the
# benchmarks' reference and the test tools (the servers' image has none of them: Dockerfile).
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $(STAMP)

# Regenerated only when a proto (or the installed toolchain) is newer than the stamp. The .pth
# file puts build/gen on the venv's sys.path, so `from okey.v1 import rules_pb2` works in the
# services, the tests and mypy without installing the generated code.
$(GEN_STAMP): $(PROTOS) $(STAMP)
	rm -rf $(GEN)/okey
	mkdir -p $(GEN)
	$(BIN)/python -m grpc_tools.protoc -I protos -I protos/third_party --python_out=$(GEN) \
		--pyi_out=$(GEN) --grpc_python_out=$(GEN) $(PROTOS)
	touch $(GEN)/okey/__init__.py $(GEN)/okey/v1/__init__.py $(GEN)/okey/py.typed
	echo "$(abspath $(GEN))" > "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/okey101_gen.pth"
	touch $@

gen: $(GEN_STAMP)

install: $(STAMP) gen

# npm ci installs exactly package-lock.json. A machine without Node gets a line saying so and
# no page (the browser tests then skip, saying why); every Python target still works.
$(WEB_DEPS): web/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the web client is not built (docs/web.md)"; \
	else \
		cd web && npm ci --no-audit --no-fund && touch $(abspath $@); \
	fi

# buf generate (protos -> web/src/gen), tsc --noEmit, vite build (-> web/dist): npm run build.
$(WEB_BUILT): $(WEB_DEPS) $(WEB_SOURCES) $(PROTOS) $(THIRD_PARTY_PROTOS)
	@if [ -f $(WEB_DEPS) ]; then cd web && npm run build && touch $(abspath $@); fi

web: $(WEB_BUILT)

lint: install
	$(BIN)/ruff check services tests
	$(BIN)/mypy -p okey101
	$(BIN)/buf lint
	@# The API is stable from the api-v1 tag on (its commit is also in protos/api-v1.ref, for a
	@# clone without tags): every later change is checked against it for breaking changes. Our
	@# protos only (the vendored google.rpc module beside them is Google's): built into one image
	@# first, since the tag's workspace has one module and today's two.
	@mkdir -p build
	@$(BIN)/buf build --path protos/okey -o build/okey-api.binpb
	@if git rev-parse -q --verify "refs/tags/$(API_TAG)^{commit}" >/dev/null 2>&1; then \
		echo "buf breaking --against .git#tag=$(API_TAG)"; \
		$(BIN)/buf breaking build/okey-api.binpb --against '.git#tag=$(API_TAG)'; \
	elif git cat-file -e "$$(cat protos/api-v1.ref)^{commit}" 2>/dev/null; then \
		echo "buf breaking --against .git#ref=$$(cat protos/api-v1.ref)"; \
		$(BIN)/buf breaking build/okey-api.binpb --against ".git#ref=$$(cat protos/api-v1.ref)"; \
	else \
		echo "buf breaking: neither the $(API_TAG) tag nor its commit is in this clone (git fetch --tags)"; \
	fi
	$(BIN)/hadolint Dockerfile

# pytest's exit 5 means it collected no tests: say so rather than fail the build.
unit: install web
	$(BIN)/pytest -n 2 -q || { status=$$?; [ $$status -eq 5 ] && echo "pytest: no tests collected" || exit $$status; }

test: lint unit

# The long versions of the abuse tests (tests/abuse/test_abuse*.py, marked soak): many more fuzz
# examples per RPC and more hands scanned for leaks. make test skips them (OKEY_SOAK unset).
# Then the fault tests with longer outages and more tables (tests/abuse/test_faults.py reads
# OKEY_SOAK), and half an hour of human-paced tables on the whole stack (bench load).
soak: install
	OKEY_SOAK=1 $(BIN)/pytest -n 2 -q -m soak
	OKEY_SOAK=1 $(BIN)/pytest -n 2 -q tests/abuse/test_faults.py
	$(BIN)/okey101 bench load --tables 60 --minutes 30 --pace 0.5 --json

run: install web
	$(BIN)/okey101 up

bench: install
	$(BIN)/okey101 bench solver --hands 20000 --json
	$(BIN)/okey101 bench engine --hands 10000 --json
	$(BIN)/okey101 bench rules --seconds 10 --concurrency 8 --json
	$(BIN)/okey101 bench edge --calls 2000 --json
	$(BIN)/okey101 bench bots --deals 2000 --candidate hard --reference normal --json
	$(BIN)/okey101 bench bots --deals 2000 --candidate normal --reference easy --json
	$(BIN)/okey101 bench bots --deals 2000 --candidate easy --reference random --json
	$(BIN)/okey101 bench load --tables 20 --minutes 1 --json
	$(BIN)/okey101 bench load --tables 60 --minutes 3 --pace 0.5 --json
	$(BIN)/okey101 bench players --players 10000 --events 2000 --json

# The expert's figures of issue #22 (docs/bots.md): 2,000 deals a run, four experts and expert
# against hard for each preset, 96 rollouts a decision and no time bound (so that the figures do
# not depend on the machine's load, and a run is deterministic: the same code plays the same
# deals). Each run takes hours of both cores, so each is journaled in var/journals/ (git-ignored)
# and resumes where it stopped: stop it when you must and run this again; run again once whole,
# it reads each journal and prints its figures without playing (a journal of other engine code is
# refused: then delete it and start over).
# Boombala first: it is the preset whose four experts are furthest from issue #22's 50%.
JOURNALS := var/journals
EXPERT_RUNS := expert-expert-boombala expert-expert-oyna expert-expert-north_sultan \
	expert-hard-boombala expert-hard-oyna expert-hard-north_sultan
bench-expert: install
	@mkdir -p $(JOURNALS)
	@for run in $(EXPERT_RUNS); do \
		set -- $$(echo $$run | tr - ' '); \
		$(BIN)/okey101 bench bots --deals 2000 --candidate $$1 --reference $$2 --rules $$3 \
			--seed 0 --expert-seconds 0 --journal $(JOURNALS)/$$run-seed0.jsonl --json \
			|| exit $$?; \
	done

# The Kubernetes manifests: each overlay rendered with `kubectl kustomize` (the pinned kubectl of
# the `k8s` extra when installed, else the machine's; .ci/run installs it where there is none).
# The dev overlay's secrets are generated once, locally, into k8s/overlays/dev/secrets/.
K8S_OVERLAYS := dev prod
KUBECTL = $(or $(wildcard $(BIN)/kubectl),$(shell command -v kubectl 2>/dev/null))

k8s: install
	@test -n "$(KUBECTL)" || { echo "kubectl not found: $(BIN)/pip install -e '.[k8s]'"; exit 1; }
	$(BIN)/python k8s/overlays/dev/make_secrets.py k8s/overlays/dev/secrets
	mkdir -p build/k8s
	for overlay in $(K8S_OVERLAYS); do \
		$(KUBECTL) kustomize k8s/overlays/$$overlay > build/k8s/$$overlay.yaml || exit 1; \
		echo "build/k8s/$$overlay.yaml"; \
	done

# The README's screenshot of the terminal client, drawn by a test from a real position.
screenshot: install
	OKEY_SCREENSHOT=$(abspath docs/terminal-client.svg) $(BIN)/pytest -q -p no:xdist \
		tests/client/test_client_ui.py -k readme_screenshot

# The README's screenshots of the web client (docs/web-hand.png, web-reveal.png, web-phone.png),
# taken by the browser tests from a hand played against bots.
web-screenshots: install web
	OKEY_WEB_SCREENSHOTS=$(abspath docs) $(BIN)/pytest -q -p no:xdist tests/web/test_web.py \
		-k "whole_hand or phone"

# The API reference, generated from the protos' comments (a test checks it is up to date).
docs: install
	$(BIN)/python -m okey101.apidocs --out docs/api.md

clean:
	rm -rf $(VENV) build .mypy_cache .ruff_cache .pytest_cache web/node_modules web/dist web/src/gen
