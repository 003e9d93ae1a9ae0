# ctrljudge: `make run` starts the web server, `make test` runs every test.
# Needs Go 1.26 and gcc (cgo, for SQLite); the browser test needs chromium
# and the PostgreSQL tests Debian's postgresql, which `make test` installs
# where they are missing.

GO      ?= go
BIN     := bin/judge
ADDR    ?= localhost:8080
DATA    ?= ./data
# Fixed iteration counts keep latency percentiles comparable between runs;
# a web iteration is a round of 1 or 20 concurrent submissions.
BENCHTIME ?= 20x
WEB_BENCHTIME ?= 5x

.PHONY: all build run test check bench web browser postgres vet clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/judge

run: build
	./$(BIN) serve --addr $(ADDR) --data $(DATA)

vet:
	$(GO) vet ./...

# The author's gate (judge check) runs inside go test, as
# TestExercisesPassTheirCheck: once, not twice. The timeout is per package
# and generous, so that a machine busy with other work slows the tests
# without failing them.
test: build browser postgres vet
	$(GO) test -timeout 45m ./...

# The author's gate for every built-in exercise.
check: build
	./$(BIN) check

bench: build
	$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./judge/
	$(GO) test -run '^$$' -bench Meter ./sandbox/
	$(GO) test -run '^$$' -bench Build -benchtime 10x ./sandbox/
	$(GO) test -run '^$$' -bench LinkerCollector -benchtime 20x ./sandbox/
	$(GO) test -run '^$$' -bench CompilerCollector -benchtime 20x ./sandbox/
	$(GO) test -run '^$$' -bench CLIvsGoBuild -benchtime 10x ./cmd/judge/
	$(GO) test -run '^$$' -bench . -benchtime $(WEB_BENCHTIME) ./web/
	$(GO) test -run '^$$' -bench Workers -benchtime 1x ./web/integration_test/

# Rebuild the editor bundle (web/static/editor.js, committed) from npm.
web:
	cd web/assets && npm ci --no-audit --no-fund && npm run build

# The end-to-end test drives a real headless Chromium.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing chromium for the browser test"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Tests that need PostgreSQL start their own server in a temporary folder
# (judge/records/pgtest), as the unprivileged user nobody when run as root,
# from Debian's server programs, installed here where missing.
postgres:
	@command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || { \
		echo "installing postgresql for the tests"; \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; }

clean:
	rm -rf bin
