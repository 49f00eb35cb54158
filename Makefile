# Every target is a thin wrapper around a script or a go command, so the
# same thing runs with or without make. See CONTRIBUTING.md.

# Fuzzing: time per target.
FUZZTIME ?= 10s
# Benchmarks: which packages, which benchmarks, how many runs (compare
# before and after a change with benchstat, or by eye over 3+ runs).
PKG ?= ./...
BENCH ?= .
COUNT ?= 3
# Chaos: how long the random SIGKILL/restart run lasts, and the cluster's
# network settings (lan or wan: wan's slower elections leave the run
# without a metastore leader for longer).
CHAOS_DURATION ?= 10m
CHAOS_NETWORK ?= lan
# Network chaos: how long the network-fault soak cycles through its faults.
NETCHAOS_DURATION ?= 5m
# The replication model's cases for `make model` (the suite runs 10,000).
MODEL_CHECKS ?= 200000

.PHONY: test lint fuzz bench figures chaos netchaos model mutate

# The whole suite, exactly what CI runs: lint, then every test with -race.
test:
	./scripts/test.sh

# gofmt, go vet, staticcheck (pinned), the one-way arrows.
lint:
	./scripts/lint.sh

# Every fuzz target for FUZZTIME each.
fuzz:
	FUZZTIME=$(FUZZTIME) ./scripts/fuzz.sh

bench:
	go test -run '^$$' -bench '$(BENCH)' -count $(COUNT) $(PKG)

# The performance round's figures against a fresh node and a fresh 3-node
# cluster (narad bench, median of ROUNDS runs): scripts/bench.sh.
figures:
	./scripts/bench.sh

# Long chaos runs of a 3-node cluster, single-copy topics then a
# replicated one with disks wiped (the suite runs short ones).
chaos:
	NARAD_CHAOS_DURATION=$(CHAOS_DURATION) NARAD_CHAOS_NETWORK=$(CHAOS_NETWORK) go test -count=1 -run '^TestChaos(Replicated)?$$' -timeout 2h -v ./test/e2e/

# The network-fault soak (every fault kind in turn, each healed, on a lan
# and a wan cluster) for NETCHAOS_DURATION; the suite runs each kind once.
netchaos:
	NARAD_NETSOAK_DURATION=$(NETCHAOS_DURATION) go test -count=1 -run '^TestNetworkFaultSoak$$' -timeout 1h -v ./test/e2e/

# The replication model (package replica) at MODEL_CHECKS cases, twice:
# run it after touching replica or meta's replication rules.
model:
	go test -count=1 -run '^TestModel' -timeout 1h ./internal/replica/ -rapid.checks=$(MODEL_CHECKS)
	go test -count=1 -run '^TestModel' -timeout 1h ./internal/replica/ -rapid.checks=$(MODEL_CHECKS)

# The mutation check: breaks rules on purpose, one at a time, and reports
# which breakages the tests catch (scripts/mutate.sh).
mutate:
	@if [ -x scripts/mutate.sh ]; then ./scripts/mutate.sh; \
	else echo "make mutate: scripts/mutate.sh is not in this checkout" >&2; exit 1; fi
