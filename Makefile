# rootfs-trim: every developer and CI entry point. `make help` lists them.
GO        ?= go
BIN       := bin/rootfs-trim
PKGS      := ./...
FUZZTIME  ?= 30s
STATICCHECK_VERSION := v0.8.2
# The binary goes into images: static, no cgo, paths and VCS stamps trimmed
# so that two builds of one commit are byte-identical.
BUILDFLAGS := -trimpath -buildvcs=false -ldflags='-s -w'
export CGO_ENABLED := 0

.PHONY: help build test test-short lint fuzz bench demo clean

help:
	@echo 'make build  build bin/rootfs-trim (static)'
	@echo 'make test   run every test, interoperability tests included'
	@echo 'make lint   gofmt, go vet, staticcheck'
	@echo 'make fuzz   run each fuzz target for FUZZTIME ($(FUZZTIME))'
	@echo 'make bench  benchmarks side by side with the peer tools (see bench/)'
	@echo 'make demo   run apply on the bundled example rootfs'

build:
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/rootfs-trim

# test/boot's two systemd VMs take about 5 min of CPU each under TCG:
# more than go test's default 10 min on a busy 2-core machine.
test:
	$(GO) test -count=1 -timeout 30m $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) $(PKGS)

# Every target, one go test -fuzz each; test/fuzz/run.sh says why a bare
# deadline error from Go's fuzz coordinator is not a failure.
fuzz:
	GO=$(GO) FUZZTIME=$(FUZZTIME) ./test/fuzz/run.sh

bench: build
	./bench/run.sh

demo: build
	./examples/demo.sh

clean:
	rm -rf bin out .bench
