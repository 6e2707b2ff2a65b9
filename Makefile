# Bloodraven. `make test` installs what it needs and runs every tier.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

CACHE        ?= $(or $(BLOODRAVEN_CACHE),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/bloodraven)
KUBE_VERSION ?= v1.36.3
TOOLS        := $(CACHE)/bin
CONTROLLER_GEN := $(TOOLS)/controller-gen
HELM         := $(TOOLS)/helm
export KUBEBUILDER_ASSETS ?= $(CACHE)/kube/$(KUBE_VERSION)
export BLOODRAVEN_CACHE := $(CACHE)
export GOTOOLCHAIN ?= local

GO_TEST ?= go test -count=1
# Packages whose tests carry a tier's build tag.
tier_pkgs = $(shell grep -rl --include='*_test.go' '^//go:build.*\b$(1)\b' . 2>/dev/null | xargs -r -n1 dirname | sort -u)

.PHONY: all build generate verify-generate lint deps test test-unit test-db test-envtest \
        sim bench-db fuzz helm-check check-alerts clean

all: build

build:
	go build ./...
	@mkdir -p bin
	go build -o bin/ ./cmd/...
	go build -o bin/playground ./playground/cmd/playground

deps:
	@hack/deps.sh

generate: $(CONTROLLER_GEN)
	$(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./apis/...
	$(CONTROLLER_GEN) crd:allowDangerousTypes=false paths=./apis/... output:crd:artifacts:config=charts/bloodraven/crds
	@cp "$$(go env GOMODCACHE)/sigs.k8s.io/external-dns@v0.22.0/config/crd/standard/dnsendpoints.externaldns.k8s.io.yaml" test/crds/dnsendpoints.externaldns.k8s.io.yaml
	@chmod 644 test/crds/*.yaml

$(CONTROLLER_GEN):
	@hack/deps.sh

verify-generate: generate
	@if [ -n "$$(git status --porcelain -- apis charts/bloodraven/crds test/crds)" ]; then \
	  echo "generated files are stale: run 'make generate' and commit"; \
	  git status --porcelain -- apis charts/bloodraven/crds test/crds; exit 1; fi

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...
	go vet -tags db,envtest,localcluster,e2e,playground,scale ./...
	@if [ -x "$(TOOLS)/golangci-lint" ]; then echo "golangci-lint run"; "$(TOOLS)/golangci-lint" run ./...; \
	  else echo "lint: golangci-lint not installed (make deps tries); gofmt and go vet passed"; fi

test: deps verify-generate lint helm-check check-alerts test-unit test-db test-envtest test-localcluster test-e2e test-playground

test-unit:
	$(GO_TEST) ./...
	@# The seeded simulation: the real operator loop, sidecar Loop, decision
	@# and failover code, 2,000 seeds.
	$(MAKE) --no-print-directory sim SEEDS=2000

test-db:
	$(GO_TEST) -tags db $(call tier_pkgs,db)

test-envtest:
	$(GO_TEST) -tags envtest $(call tier_pkgs,envtest)

clean:
	rm -rf bin

# A local cluster whose Pods are processes (needs root and network namespaces; see docs/localcluster.md).
.PHONY: test-localcluster
test-localcluster:
	go vet -tags localcluster ./playground/...
	$(GO_TEST) -tags localcluster ./playground/...

# The whole system on this machine (docs/playground.md): a local cluster in the
# background with Bloodraven installed by its Helm chart, the failover group
# "orders" (sites iad and pdx, MariaDB), healthy, with a writer. playground-down
# stops it all and removes its state folder.
.PHONY: playground playground-down
playground: deps build
	bin/playground demo

playground-down:
	@test -x bin/playground || go build -o bin/playground ./playground/cmd/playground
	bin/playground down -purge

# End to end: the chart-installed operator, sidecars and MariaDB in Pods of the local cluster.
.PHONY: test-e2e
test-e2e: build
	go vet -tags e2e ./test/e2e/...
	$(GO_TEST) -tags e2e ./test/e2e/...

# The Helm chart lints cleanly and renders with default and namespaced values.
# The chart's alert rules: promtool's syntax check, then one unit test per
# alert (charts/bloodraven/files/alerts_test.yaml).
check-alerts: deps
	$(TOOLS)/promtool check rules charts/bloodraven/files/alerts.yaml
	cd charts/bloodraven/files && $(TOOLS)/promtool test rules alerts_test.yaml

helm-check: $(CONTROLLER_GEN)
	$(HELM) lint --strict charts/bloodraven
	$(HELM) template bloodraven charts/bloodraven --namespace bloodraven-system >/dev/null
	$(HELM) template bloodraven charts/bloodraven --namespace bloodraven-system --set metrics.serviceMonitor.enabled=true \
	  --set prometheusRule.enabled=true --set grafanaDashboard.enabled=true | grep -q 'alert: BloodravenOperatorDown'
	$(HELM) template bloodraven charts/bloodraven --namespace bloodraven-system --set sidecarPodMonitor.enabled=true \
	  | grep -q 'kind: PodMonitor'
	$(HELM) template bloodraven charts/bloodraven --namespace bloodraven-system --set sidecarPodMonitor.enabled=true \
	  --set 'watchNamespaces={shop}' | grep -A2 'matchNames' | grep -q -- '- shop'
	$(HELM) template bloodraven charts/bloodraven --namespace bloodraven-system \
	  --set 'watchNamespaces={shop,billing}' --set leaderElection.enabled=false --set metrics.enabled=false --set networkPolicy.enabled=false >/dev/null
	@echo "helm-check: ok"

# Deterministic simulation of the real operator, sidecar Loop and failover code
# over many seeds: make sim SEEDS=5000 [STEPS=600], or replay one seed with its
# trace: make sim SEED=51 [SCHEDULE=file]. REAL=1 and REALOP=1, which chose the
# real code over models now deleted, are still accepted and change nothing.
SEEDS ?= 2000
STEPS ?= 600
sim:
	go run ./cmd/simulate -seeds=$(SEEDS) -steps=$(STEPS) $(if $(SEED),-seed=$(SEED)) $(if $(SCHEDULE),-schedule=$(SCHEDULE))

# Switchover by SQL between two real MariaDB servers under four writers; prints
# switchover-{writable,window}-{p50,p99} in ms. BLOODRAVEN_BENCH_ROUNDS=n for more rounds.
bench-db:
	@out=$$(go test -count=1 -tags db -run '^$$' -bench '^BenchmarkSwitchover$$' -benchtime 1x ./pkg/mysql 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^switchover-' <<<"$$out"

# What semi-sync costs a commit: a real MariaDB primary and one replica over
# loopback, four writers, asynchronous then semi-sync (set as the operator
# sets it, required), in alternating phases. Prints async-commit-p50,
# semisync-commit-{p50,p99} in ms and semisync-throughput-ratio (semi-sync
# writes/s over async). BLOODRAVEN_BENCH_SECONDS (per phase, default 3) and
# BLOODRAVEN_BENCH_ROUNDS (phase pairs, default 3).
# A physical clone between two real MariaDB servers through the donor
# sidecar's mutual-TLS endpoint, against its anchor (mariadb-backup streamed
# into a local folder by mbstream): prints clone-seconds-per-gib,
# clone-raw-seconds-per-gib and clone-overhead-ratio (goal <= 1.25). The
# dataset is 1 GiB; BLOODRAVEN_BENCH_CLONE_MIB=n for another size.
.PHONY: bench-clone
bench-clone:
	@out=$$(go test -count=1 -tags db -run '^$$' -bench '^BenchmarkClone$$' -benchtime 1x -timeout 30m ./pkg/clone 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^clone-' <<<"$$out"

.PHONY: bench-semisync
bench-semisync:
	@out=$$(go test -count=1 -tags db -run '^$$' -bench '^BenchmarkSemiSyncCommit$$' -benchtime 1x -timeout 10m ./pkg/mysql 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^(async|semisync)-' <<<"$$out"

# An idle sidecar, the built binary with default timings, next to a real MariaDB
# with a stub operator and a stub peer, measured from /proc over 60 s
# (BLOODRAVEN_BENCH_SECONDS=n to change): prints sidecar-idle-rss (peak, MiB)
# and sidecar-idle-cpu (percent of one core). The goal is an RSS of 25 MiB or less.
.PHONY: bench-sidecar
bench-sidecar:
	@mkdir -p bin
	go build -o bin/sidecar ./cmd/sidecar
	@out=$$(BLOODRAVEN_SIDECAR_BIN=$(CURDIR)/bin/sidecar go test -count=1 -tags db -run '^$$' \
	  -bench '^BenchmarkSidecarIdle$$' -benchtime 1x -timeout 5m ./cmd/sidecar 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^sidecar-idle-' <<<"$$out"

# The real operator binary against an envtest API server and GROUPS (default
# 1000) groups of two MySQL-protocol stand-ins (internal/scalebench), measured
# over MEASURE (default 60s): prints scale-groups, poll-lag-{p50,p99} (ms),
# operator-cpu-cores, operator-rss-mib and apiserver-status-writes-per-second,
# and says what is absent (sidecars) and left (failover-rto-at-scale). Needs root
# (unshare --mount). A 50-group version, TestScaleSmall, is `make test-scale`:
# not yet in `make test`, since it is flaky under load (startup of 50 loops
# through one reconcile worker) and takes two minutes or more.
.PHONY: bench-scale test-scale
test-scale:
	$(GO_TEST) -tags scale -run '^TestScaleSmall$$' -timeout 20m ./internal/scalebench

bench-scale:
	@out=$$(env GROUPS=$(or $(GROUPS),1000) go test -count=1 -tags scale -run '^TestBenchScale$$' -timeout 60m \
	  ./internal/scalebench 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^(scale-|startup-|poll-lag-|operator-|apiserver-|# )' <<<"$$out"

# A planned switchover (the planned-failover annotation) of a caught-up pair under
# four writers that go through the -primary endpoint, with the real operator, real
# sidecars and real MariaDB on envtest, back and forth for at least 10 rounds
# (BLOODRAVEN_BENCH_ROUNDS=n for more). Prints planned-duration-{median,max} in s
# (annotation to Succeeded) and planned-window-{median,max} in ms (last write acked
# by the old primary to the first acked through -primary by the new one).
.PHONY: bench-planned
bench-planned:
	@out=$$(go test -count=1 -tags envtest -run '^$$' -bench '^BenchmarkPlannedSwitchover$$' -benchtime 1x \
	  -timeout 15m ./pkg/controller 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^planned-' <<<"$$out"

# Operator restarts in the middle of failovers (issue 24), envtest with real
# sidecars and MariaDB, the new process started at once (the kubelet's restart
# delay is not counted). Prints operator-restart-planned-window,
# operator-killed-mid-failover and operator-restart-ready, {median,max} in ms
# (BLOODRAVEN_BENCH_ROUNDS=n for more than 4 rounds of each).
.PHONY: bench-restart
bench-restart:
	@out=$$(go test -count=1 -tags envtest -run '^$$' -bench '^BenchmarkOperatorRestart$$' -benchtime 1x \
	  -timeout 15m ./pkg/controller 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^(operator|restart)-' <<<"$$out"

# Playground scenarios: the real operator, sidecars and MariaDB in the local
# cluster, broken on purpose under a recorded load (playground/scenario). The
# CI subset is 1 (primary killed), 3 (planned failover under load), 5
# (isolated primary), 13 (forged messages), 14 (frozen site), 15 (errant
# former primary), 20 and 21 (isolated primary and lagging replica loss
# with semi-sync required: issue 15's tests), 22 (binlog salvage) and 23
# (rolling update: issue 18); `make chaos` runs every scenario.
PLAYGROUND_CI := Scenario(PrimaryKilled|PlannedUnderLoad|IsolatedPrimary|ForgedMessages|FrozenSite|ErrantFormerPrimary|IsolatedPrimaryRequired|LaggingReplicaLossRequired|PrimaryKilledSalvage|RollingUpdate)$$
.PHONY: test-playground chaos playground-bench
test-playground: build
	go vet -tags playground ./playground/...
	$(GO_TEST) -tags playground -timeout 30m -run '$(PLAYGROUND_CI)' -v ./playground/scenario

chaos: build
	go vet -tags playground ./playground/...
	$(GO_TEST) -tags playground -timeout 90m -run 'Scenario' -v ./playground/scenario

# Figures over BLOODRAVEN_BENCH_RUNS runs (at least 5) of each measured scenario:
# emergency RTO with default settings, planned window and duration, stale and
# isolated fence latencies, the acknowledged writes the isolated primary
# lost, asynchronous and with semi-sync required (counts: the total over the
# runs), and the ordered update's longest write gap and duration. One figure
# a line. BLOODRAVEN_BENCH_ONLY=<measure> (emergency-rto, planned,
# stale-fence, isolated-fence, isolated-required, rolling-update) runs one measure alone,
# and then allows fewer runs: for investigating, not for the figures.
playground-bench: build
	@out=$$($(GO_TEST) -tags playground -timeout 90m -run '^TestPlaygroundBench$$' -v ./playground/scenario 2>&1) || { echo "$$out"; exit 1; }; \
	  grep -E '^(emergency|planned|stale|isolated|rolling-update)-' <<<"$$out"
