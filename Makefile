# rootfs-trim: every developer and CI entry point. `make help` lists them.
GO        ?= go
BIN       := bin/rootfs-trim
PKGS      := ./...
FUZZTIME  ?= 30s
# make install: as Go, Debian and Buildroot users expect (DESTDIR for
# staging). The binary finds the rules at ../share/rootfs-trim/rules from
# its own directory when --rules is not given: with BINDIR and DATADIR as
# they are here, whatever PREFIX is.
PREFIX    ?= /usr/local
BINDIR    ?= $(PREFIX)/bin
DATADIR   ?= $(PREFIX)/share
MANDIR    ?= $(DATADIR)/man
STATICCHECK_VERSION := v0.8.2
# The binary goes into images: static, no cgo, paths and VCS stamps trimmed
# so that two builds of one commit are byte-identical.
BUILDFLAGS := -trimpath -buildvcs=false -ldflags='-s -w'
export CGO_ENABLED := 0

.PHONY: help build install test test-short lint fuzz bench demo man clean

help:
	@echo 'make build  build bin/rootfs-trim (static)'
	@echo 'make install  install it under $$(DESTDIR)$$(PREFIX) (PREFIX: /usr/local): bin/rootfs-trim, the rules'
	@echo '             (share/rootfs-trim/rules, what --rules defaults to), the man page, bash, zsh and fish completions'
	@echo 'make test   run every test, interoperability tests included, and summarise'
	@echo 'make lint   gofmt, go vet, staticcheck'
	@echo 'make fuzz   run each fuzz target for FUZZTIME ($(FUZZTIME))'
	@echo 'make bench  benchmarks side by side with the peer tools (see bench/)'
	@echo 'make demo   the bundled example, start to end: audit, apply, audit, render'
	@echo 'make man    the man page, bin/rootfs-trim.1 (man -l bin/rootfs-trim.1)'

build:
	@echo '== build $(BIN) (a minute or two on a cold Go cache, seconds after)'
	$(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/rootfs-trim

# The rules directory is replaced whole, so that a rule deleted from the
# checkout does not linger (as the Buildroot package does). The man page
# and the completions come from the binary just built (make man).
install: build
	install -D -m 0755 $(BIN) $(DESTDIR)$(BINDIR)/rootfs-trim
	rm -rf $(DESTDIR)$(DATADIR)/rootfs-trim/rules
	install -d -m 0755 $(DESTDIR)$(DATADIR)/rootfs-trim/rules
	cp -R rules/. $(DESTDIR)$(DATADIR)/rootfs-trim/rules
	chmod -R u=rwX,go=rX $(DESTDIR)$(DATADIR)/rootfs-trim/rules
	install -d -m 0755 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(DATADIR)/bash-completion/completions \
		$(DESTDIR)$(DATADIR)/zsh/site-functions $(DESTDIR)$(DATADIR)/fish/vendor_completions.d
	$(BIN) man > $(DESTDIR)$(MANDIR)/man1/rootfs-trim.1
	$(BIN) completion bash > $(DESTDIR)$(DATADIR)/bash-completion/completions/rootfs-trim
	$(BIN) completion zsh > $(DESTDIR)$(DATADIR)/zsh/site-functions/_rootfs-trim
	$(BIN) completion fish > $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/rootfs-trim.fish
	chmod 0644 $(DESTDIR)$(MANDIR)/man1/rootfs-trim.1 $(DESTDIR)$(DATADIR)/bash-completion/completions/rootfs-trim \
		$(DESTDIR)$(DATADIR)/zsh/site-functions/_rootfs-trim $(DESTDIR)$(DATADIR)/fish/vendor_completions.d/rootfs-trim.fish

# The boot test's kernel (test/boot): ROOTFS_TRIM_KERNEL, else /boot's, else
# the one .ci/run fetched into KERNEL_CACHE, else fetched there the same way
# (apt's lists and Debian's archive needed; without them the boot test skips
# and the summary says why).
KERNEL_CACHE ?= $(if $(shell test -w /var/cache -o -d /var/cache/rootfs-trim-kernel && echo y),/var/cache/rootfs-trim-kernel,$(HOME)/.cache/rootfs-trim-kernel)

# The SARIF tests' schema and validator (test/sarif/fetch-multitool.sh, npm
# needed; without them those tests skip and the summary says why), cached
# like the kernel.
SARIF_CACHE ?= $(if $(shell test -w /var/cache -o -d /var/cache/rootfs-trim-sarif && echo y),/var/cache/rootfs-trim-sarif,$(HOME)/.cache/rootfs-trim-sarif)

# go test -json through test/summary: each package's result line, failed
# tests' output, each skip with its reason, and "N passed, N failed, N
# skipped"; the exit status is go test's. test/boot's two systemd VMs take
# about 5 min of CPU each under TCG: more than go test's default 10 min on a
# busy 2-core machine, hence -timeout.
test:
	@$(GO) build -o bin/test-summary ./test/summary
	@kernel=$${ROOTFS_TRIM_KERNEL:-}; \
	if [ -z "$$kernel" ] && ! ls /boot/vmlinuz-* >/dev/null 2>&1; then \
		echo '== the boot tests'"'"' kernel: from $(KERNEL_CACHE), else fetched there from Debian (once, under a minute)'; \
		kernel=$$(test/boot/fetch-kernel.sh "$(KERNEL_CACHE)" | tail -n 1) || kernel=; \
	fi; \
	sarif=$${ROOTFS_TRIM_SARIF:-}; \
	if [ -z "$$sarif" ]; then \
		sarif=$$(test/sarif/fetch-multitool.sh "$(SARIF_CACHE)" | tail -n 1) || sarif=; \
	fi; \
	echo '== go test, every package: about 16 min on 2 idle cores, most of it test/boot'"'"'s VMs; a "..." line names each long test as it starts'; \
	ROOTFS_TRIM_KERNEL=$$kernel ROOTFS_TRIM_SARIF=$$sarif bin/test-summary $(GO) test -count=1 -timeout 30m -json $(PKGS)

test-short:
	$(GO) test -short $(PKGS)

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' ':!:vendor/')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
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

# The page comes from the binary's own flag table and help texts (the
# hidden 'rootfs-trim man'), so it describes the binary it ships with.
man: build
	$(BIN) man > $(BIN).1.tmp && mv $(BIN).1.tmp $(BIN).1

clean:
	rm -rf bin out .bench
