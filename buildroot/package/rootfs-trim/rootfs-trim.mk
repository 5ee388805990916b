################################################################################
#
# rootfs-trim
#
################################################################################

# Built from the checkout this br2-external tree lives in, so that the
# binary, the rules and the boot unit come from one commit. The checkout
# carries vendor/: Buildroot builds Go packages with GOFLAGS=-mod=vendor
# GOPROXY=off (HOST_GO_COMMON_ENV in package/go/go.mk), and a local
# package skips the download step where Buildroot would vendor
# (support/download/go-post-process), so the build needs no network.
# The version is the checkout's VERSION file, which the binary embeds
# too: show-info, legal-info, `rootfs-trim version` and each manifest
# agree. To build a release instead (this directory merged into another
# br2-external tree), set a github SITE, no SITE_METHOD, and add a
# rootfs-trim.hash: the release tarball carries vendor/ as well.
ROOTFS_TRIM_SITE = $(abspath $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/..)
ROOTFS_TRIM_SITE_METHOD = local
ROOTFS_TRIM_VERSION = $(shell cat $(ROOTFS_TRIM_SITE)/VERSION)
# rootfs-trim's own license, then those of the vendored modules linked
# into the binary (test/buildroot checks this list against vendor/).
ROOTFS_TRIM_LICENSE = Apache-2.0, BSD-3-Clause, MIT
ROOTFS_TRIM_LICENSE_FILES = \
	LICENSE \
	vendor/github.com/CycloneDX/cyclonedx-go/LICENSE \
	vendor/github.com/CycloneDX/cyclonedx-go/NOTICE \
	vendor/github.com/bmatcuk/doublestar/v4/LICENSE \
	vendor/github.com/google/go-containerregistry/LICENSE \
	vendor/github.com/klauspost/compress/LICENSE \
	vendor/github.com/klauspost/compress/internal/snapref/LICENSE \
	vendor/github.com/klauspost/compress/zstd/internal/xxhash/LICENSE.txt \
	vendor/github.com/pelletier/go-toml/v2/LICENSE \
	vendor/github.com/pierrec/lz4/v4/LICENSE \
	vendor/github.com/ulikunitz/xz/LICENSE \
	vendor/go.yaml.in/yaml/v3/LICENSE \
	vendor/go.yaml.in/yaml/v3/NOTICE \
	vendor/golang.org/x/sys/LICENSE \
	vendor/golang.org/x/sys/PATENTS
# A developer's build products and benchmark data are no sources, nor is
# an output directory (O=) inside the checkout: copied into itself, it
# changes under rsync (legal-info then fails with rsync's code 24).
ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = \
	--exclude=/bin --exclude=/out --exclude=/.bench \
	$(patsubst $(realpath $(ROOTFS_TRIM_SITE))/%,--exclude=/%, \
		$(filter $(realpath $(ROOTFS_TRIM_SITE))/%,$(BASE_DIR)))

ROOTFS_TRIM_GOMOD = github.com/rootfs-trim/rootfs-trim
ROOTFS_TRIM_BUILD_TARGETS = cmd/rootfs-trim
# Static whatever the toolchain: the boot step must run on any image,
# and the build-time step on any build host.
ROOTFS_TRIM_GO_ENV = CGO_ENABLED=0

# Not inherited from the target package: by then the golang
# infrastructure has appended its remark on vendored licenses to it.
HOST_ROOTFS_TRIM_LICENSE = Apache-2.0, BSD-3-Clause, MIT
HOST_ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = \
	$(ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS)
HOST_ROOTFS_TRIM_GOMOD = $(ROOTFS_TRIM_GOMOD)
HOST_ROOTFS_TRIM_BUILD_TARGETS = $(ROOTFS_TRIM_BUILD_TARGETS)
HOST_ROOTFS_TRIM_GO_ENV = $(ROOTFS_TRIM_GO_ENV)

# legal-info copies a local package's source with RSYNC_VCS_EXCLUSIONS
# only (pkg-generic.mk), not with the exclusions above: add them, for
# these two targets alone.
rootfs-trim-legal-info host-rootfs-trim-legal-info: private \
	RSYNC_VCS_EXCLUSIONS += $(ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS)

# Buildroot's rsync of the checkout into the build directory has no
# --delete: a file removed from the checkout (a rule, a unit, a .go file)
# would stay there, and <pkg>-rebuild would build and install it again.
# So each rsync starts from an empty copy; what Buildroot keeps there
# (stamps, file lists) starts with a dot and stays.
define ROOTFS_TRIM_RSYNC_FROM_EMPTY
	find $(@D) -mindepth 1 -maxdepth 1 ! -name '.*' -exec rm -rf {} +
endef
ROOTFS_TRIM_PRE_RSYNC_HOOKS += ROOTFS_TRIM_RSYNC_FROM_EMPTY
HOST_ROOTFS_TRIM_PRE_RSYNC_HOOKS += ROOTFS_TRIM_RSYNC_FROM_EMPTY

# The package never selects BR2_PACKAGE_HOST_GO: that would switch the
# host-go provider to host-go-src, and minikube builds with host-go-bin
# and its own GO_VERSION. It takes the host-go it is given, and needs at
# least the Go of go.mod's go line (os.Root alone needs 1.24); Buildroot
# 2025.02.14's host-go is 1.23.12. Say so before go build fails.
define ROOTFS_TRIM_CHECK_GO_VERSION
	need=go$$(sed -n 's/^go[[:space:]]\{1,\}//p' $(@D)/go.mod) && \
	have=$$(cd / && $(HOST_GO_COMMON_ENV) $(GO_BIN) env GOVERSION) && \
	if [ "$$(printf '%s\n' "$$need" "$$have" | sort -V | head -n 1)" != "$$need" ]; then \
		printf '%s\n' \
			"rootfs-trim needs Go $${need#go} or later (the go line of its go.mod); host-go is Go $${have#go} (GO_VERSION = $(GO_VERSION))." \
			"Build with a newer host-go, for example make GO_VERSION=1.26.5 with the host-go-bin provider and a go-bin.hash for it in BR2_GLOBAL_PATCH_DIR, as minikube does." >&2; \
		exit 1; \
	fi
endef
ROOTFS_TRIM_PRE_CONFIGURE_HOOKS += ROOTFS_TRIM_CHECK_GO_VERSION
HOST_ROOTFS_TRIM_PRE_CONFIGURE_HOOKS += ROOTFS_TRIM_CHECK_GO_VERSION

# The binary goes to /usr/bin by the default install step. The boot unit
# and its drop-ins are installed by the package, not by a TARGET_FINALIZE
# hook or BR2_ROOTFS_OVERLAY, so that packages-file-list.txt names
# rootfs-trim as their owner, per-package directories hold them, and they
# are copied once, not on every make. The unit is enabled by the preset:
# Buildroot runs systemctl preset-all on every image (SYSTEMD_PRESET_ALL
# in package/systemd/systemd.mk), which makes its multi-user.target.wants
# link, even under a "disable *" preset.
define ROOTFS_TRIM_INSTALL_INIT_SYSTEMD
	rsync -a --keep-dirlinks --chmod=u=rwX,go=rX \
		$(@D)/buildroot-overlay/ $(TARGET_DIR)/
	$(INSTALL) -D -m 0644 $(ROOTFS_TRIM_PKGDIR)/50-rootfs-trim.preset \
		$(TARGET_DIR)/usr/lib/systemd/system-preset/50-rootfs-trim.preset
endef

# scripts/post-build.sh takes its rules from here unless told otherwise,
# and so does $(HOST_DIR)/bin/rootfs-trim given no --rules: the rules at
# ../share/rootfs-trim/rules from its directory, as make install lays out.
# Removed first so that a rule deleted from the checkout does not linger.
define HOST_ROOTFS_TRIM_INSTALL_RULES
	rm -rf $(HOST_DIR)/share/rootfs-trim/rules
	mkdir -p $(HOST_DIR)/share/rootfs-trim
	cp -dR $(@D)/rules $(HOST_DIR)/share/rootfs-trim/rules
endef
HOST_ROOTFS_TRIM_POST_INSTALL_HOOKS += HOST_ROOTFS_TRIM_INSTALL_RULES

$(eval $(golang-package))
$(eval $(host-golang-package))
