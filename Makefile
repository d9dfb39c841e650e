# beamjoin's two commands are `make run` and `make test`; both download what
# they need through the Go module proxy, so a machine with only Go works.

GO          ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
# Packages whose concurrency the race detector checks on every `make test`.
RACE_PKGS   ?= ./transforms/join/match/... ./transforms/streamjoiner/...

.PHONY: run test lint bench fuzz tools

# The main job: reconcile the sample orders and payments on Prism, in
# process. A payment belongs to an order if it comes 0-15 min after it; a
# left outer join with final emission lists the unpaid orders.
run:
	$(GO) run ./cmd/beamjoin interval \
		--left 'testdata/orders.jsonl' --right 'testdata/payments.jsonl' \
		--key order_id --time ts \
		--lower 0 --upper 15m --type left --emit final \
		--dead-letter /dev/stderr

test:
	$(GO) vet ./...
	$(GO) test ./...
	$(GO) test -race $(RACE_PKGS)

lint:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

bench:
	./scripts/bench.sh

# A longer fuzz run of the matching core against its brute-force oracle.
fuzz:
	$(GO) test ./transforms/join/match -run '^$$' -fuzz FuzzBuffer -fuzztime 60s
