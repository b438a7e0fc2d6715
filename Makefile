# jadpo — the developer entry points. Everything a fresh machine needs comes
# from the Go module proxy; nothing else is installed.
GO        ?= go
BIN       ?= bin/jadpo
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)

.PHONY: all build install editors test chromium test-worker test-editors test-dates race vet lint demo fuzz bench soak golden docs clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/jadpo

## install: bin/jadpo into $(PREFIX)/bin (~/.local/bin: on PATH in most shells).
PREFIX    ?= $(HOME)/.local
install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/jadpo
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "$(PREFIX)/bin is not on PATH: add it, e.g. export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

## test: vet, then every test (PostgreSQL tests use JADPO_TEST_DATABASE_URL),
## then the Worker's tests under miniflare.
test: vet chromium
	$(GO) test -count=1 -timeout 15m ./...
	@$(MAKE) --no-print-directory test-worker
	@$(MAKE) --no-print-directory test-editors

## chromium: Debian's chromium for the console's browser tests (cmd/jadpo
## TestConsole*), installed with apt-get when missing and run as root; else how
## to install it is printed (the tests skip without it unless JADPO_REQUIRE_CHROMIUM=1).
chromium:
	@if [ -x /usr/bin/chromium ] || command -v chromium >/dev/null 2>&1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "installing chromium (apt-get) for the console's browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "the console's browser tests need chromium: sudo apt-get install -y chromium (they skip without it; JADPO_REQUIRE_CHROMIUM=1 makes that an error)"; \
	fi

## test-worker: the Workers target's runtime (codegen/workers) under Node.js's test
## runner and miniflare, installed from the npm registry as package-lock.json pins
## it. Skipped with a message without Node.js, unless JADPO_REQUIRE_NODE=1.
test-worker: build
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  cd codegen/workers && npm ci --no-audit --no-fund --loglevel=error && JADPO_BIN=$(abspath $(BIN)) npm test --silent; \
	elif [ "$${JADPO_REQUIRE_NODE:-}" = 1 ]; then \
	  echo "the Worker's tests need Node.js (>= 18) and npm, and JADPO_REQUIRE_NODE=1 is set"; exit 1; \
	else \
	  echo "skipping the Worker's tests (codegen/workers): Node.js and npm are not installed; JADPO_REQUIRE_NODE=1 makes this an error"; \
	fi

## editors: the VS Code extension, editors/vscode/jadpo.vsix (code --install-extension
## editors/vscode/jadpo.vsix), packaged by @vscode/vsce with the language client bundled
## by esbuild, both as package-lock.json pins them. npm ci fetches them once (again only
## when the lock file changes); packaging then needs no network.
VSCODE_DEPS = editors/vscode/node_modules/.package-lock.json
editors: $(VSCODE_DEPS)
	cd editors/vscode && npm run --silent package
	@echo "built editors/vscode/jadpo.vsix: code --install-extension editors/vscode/jadpo.vsix"

$(VSCODE_DEPS): editors/vscode/package-lock.json
	cd editors/vscode && npm ci --no-audit --no-fund --loglevel=error

## test-editors: the TextMate grammar against the Go lexer's and parser's words of every
## source (cmd/internal/lsp TestGrammarTokens), and the packaged extension's manifest
## (editors/vscode/test). Skipped with a message without Node.js, unless JADPO_REQUIRE_NODE=1.
test-editors:
	@if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then \
	  $(MAKE) -s --no-print-directory $(VSCODE_DEPS) && cd editors/vscode && GO=$(GO) npm test --silent; \
	elif [ "$${JADPO_REQUIRE_NODE:-}" = 1 ]; then \
	  echo "the editors' tests need Node.js (>= 18) and npm, and JADPO_REQUIRE_NODE=1 is set"; exit 1; \
	else \
	  echo "skipping the editors' tests (editors/vscode): Node.js and npm are not installed; JADPO_REQUIRE_NODE=1 makes this an error"; \
	fi

## test-dates: the whole suite as if run on six other dates, each in UTC and
## at UTC+14 (docs/design/testing.md, "Clocks"); prints one line a run.
TEST_DATES = -1day -31days -400days +400days 2027-01-31T23:59:59Z 2027-02-01T00:00:01Z
test-dates: vet
	@fail=0; for d in $(TEST_DATES); do \
	  case $$d in [+-]*) e=$$(date -u -d "$$(echo $$d | sed 's/day/ day/')" +%Y-%m-%dT%H:%M:%SZ);; *) e=$$d;; esac; \
	  for tz in UTC Pacific/Kiritimati; do \
	    if JADPO_TEST_EPOCH=$$e TZ=$$tz $(GO) test -count=1 -timeout 15m ./... >/tmp/jadpo-test-dates.log 2>&1; \
	    then echo "ok   JADPO_TEST_EPOCH=$$e TZ=$$tz"; \
	    else echo "FAIL JADPO_TEST_EPOCH=$$e TZ=$$tz (see /tmp/jadpo-test-dates.log)"; grep -E '^(--- FAIL|FAIL)' /tmp/jadpo-test-dates.log | head -20; fail=1; fi; \
	  done; \
	done; exit $$fail

## race: every test in -short sizes under the race detector.
race:
	$(GO) test -race -short -count=1 -timeout 20m ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	  if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	@# The front end's comparison with CUE and HCL is a module of its own (its
	@# go.mod keeps them out of this one): vet it too, so that it keeps building
	@# against this module (docs/performance.md's figures come from it).
	cd lang/parser/compare && $(GO) vet ./...

## lint: staticcheck (a pinned version, fetched through the module proxy).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	$(GO) run $(STATICCHECK) ./...

## golden: rewrite the golden files; review the diff as a user would.
golden:
	$(GO) test ./cmd/jadpo -run Golden -update
	$(GO) test ./cmd/internal/lsp -run WireGolden -update

## docs: rewrite the generated pages: docs/diagnostics/ (every code's page and the
## codes' index, from the table in lang/diag/codes.go and the goldens: run after
## golden), docs/cli/ (from the command tree), the catalogue packages' pages.
docs:
	$(GO) test ./cmd/jadpo -run '^TestDocsPages$$' -update
	$(GO) test ./cmd/jadpo -run '^TestCLIReference$$' -update
	$(GO) test ./cmd/internal/catalogdoc -update

## demo: the whole receive loop on this machine (the README's first command).
demo: build
	$(BIN) dev examples/warehouse --demo

## fuzz: every fuzz target for FUZZTIME each (default 30s).
FUZZTIME ?= 30s
FUZZ_TARGETS = ./lang/parser:FuzzParse ./lang/format:FuzzFormat ./lang/lockfile:FuzzLock ./codegen:FuzzDecodePlan \
	./runtime:FuzzDotenv ./runtime/reading:FuzzRead ./runtime/reading:FuzzPattern \
	./providers/awsjson:FuzzDecodeAnswer ./providers/wire:FuzzDecodeItems ./providers/jsonhttp:FuzzDecodePullAnswer \
	./internal/jsonstring:FuzzAppend ./check/ir:FuzzValueProblem \
	./providers/fakes/sqsfake:FuzzRequest \
	./providers/fakes/cfqueuesfake:FuzzRequest ./cmd/internal/lsp:FuzzEditorAnswers ./cmd/internal/lsp:FuzzApplyChanges ./cmd/internal/lsp:FuzzEditorTokens \
	./cmd/jadpo:FuzzDevTypedLine ./cmd/internal/lsp:FuzzRequestParams ./runtime/console:FuzzBodyText \
	./providers/redisstreams:FuzzCredentialURL ./providers/rabbitmq:FuzzRemoteHost ./providers/natsjs:FuzzRedact
fuzz:
	@for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t##*:}; echo "== $$name ($$pkg)"; \
	  $(GO) test $$pkg -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) || exit 1; \
	done

## bench: the benchmarks named in docs/design/performance.md, once each (the figures
## there are from -count 6 runs; see its commands).
bench:
	$(GO) test ./check ./lang/parser ./providers/sigv4 ./providers/fakes/sqsfake ./runtime/reading -run '^$$' -bench . -benchmem
	$(GO) test ./runtime/store/postgres ./runtime/store/sqlite -run '^$$' -bench .
	$(GO) test ./runtime -run '^$$' -bench '^BenchmarkReceive$$' -benchtime 1000x
	$(GO) test ./runtime -run '^$$' -bench 'ReceiveCloudflare|ReceiveSQLInbox|ReceiveRedisStreams|Deliver' -benchtime 1000x
	$(GO) test ./runtime -run '^$$' -bench 'ReceiveRabbitMQ' -benchtime 200x
	$(GO) test ./cmd/internal/lsp -run '^$$' -bench . -benchmem
	$(GO) test ./runtime/console -run '^$$' -bench . -benchtime 100x

## soak: a million messages through PostgreSQL with a 2-day retention, the clock a
## day on every 100,000 (docs/design/performance.md, "Soak"); SOAK_MESSAGES to scale it.
SOAK_MESSAGES ?= 1000000
soak:
	JADPO_SOAK=1 JADPO_SOAK_MESSAGES=$(SOAK_MESSAGES) JADPO_REQUIRE_POSTGRES=1 $(GO) test ./runtime/store/postgres -run '^TestSoak$$' -count=1 -v -timeout 6h

clean:
	rm -rf bin
