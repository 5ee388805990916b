################################################################################
#
# rootfs-trim
#
################################################################################

# Built from the checkout this br2-external tree lives in, so that the
# binary, the rules and the boot unit come from one commit. To build a
# release instead (this directory merged into another br2-external tree),
# set ROOTFS_TRIM_VERSION, a github SITE, no SITE_METHOD, and add a
# rootfs-trim.hash: Buildroot then vendors the modules at download time.
# The repository has no LICENSE file yet, hence no ROOTFS_TRIM_LICENSE.
ROOTFS_TRIM_SITE = $(abspath $(BR2_EXTERNAL_ROOTFS_TRIM_PATH)/..)
ROOTFS_TRIM_SITE_METHOD = local
# A developer's build products and benchmark data are no sources.
ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = \
	--exclude=/bin --exclude=/out --exclude=/.bench

ROOTFS_TRIM_GOMOD = github.com/rootfs-trim/rootfs-trim
ROOTFS_TRIM_BUILD_TARGETS = cmd/rootfs-trim
# Static whatever the toolchain: the boot step must run on any image,
# and the build-time step on any build host.
ROOTFS_TRIM_GO_ENV = CGO_ENABLED=0

HOST_ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS = \
	$(ROOTFS_TRIM_OVERRIDE_SRCDIR_RSYNC_EXCLUSIONS)
HOST_ROOTFS_TRIM_GOMOD = $(ROOTFS_TRIM_GOMOD)
HOST_ROOTFS_TRIM_BUILD_TARGETS = $(ROOTFS_TRIM_BUILD_TARGETS)
HOST_ROOTFS_TRIM_GO_ENV = $(ROOTFS_TRIM_GO_ENV)

# The golang infrastructure vendors modules in its download step (go mod
# vendor, in support/download/go-post-process), and builds with
# GOFLAGS=-mod=vendor GOPROXY=off; a local or overridden source skips the
# download step, so vendor here, with the same environment. A checkout
# that carries its own vendor/ is used as is (go build checks it against
# go.mod). Shared by both packages: PKG names the one being built.
define ROOTFS_TRIM_GO_VENDOR
	if [ -n "$($(PKG)_OVERRIDE_SRCDIR)" ] && \
		[ ! -e $($(PKG)_OVERRIDE_SRCDIR)/vendor/modules.txt ]; then \
		cd $(@D) && $($(PKG)_DL_ENV) $(GO_BIN) mod vendor -modcacherw; \
	fi
endef
ROOTFS_TRIM_PRE_BUILD_HOOKS += ROOTFS_TRIM_GO_VENDOR
HOST_ROOTFS_TRIM_PRE_BUILD_HOOKS += ROOTFS_TRIM_GO_VENDOR

# The binary goes to /usr/bin by the default install step. The boot unit,
# its drop-ins and its enablement link are installed by the package, not
# by a TARGET_FINALIZE hook or BR2_ROOTFS_OVERLAY, so that
# packages-file-list.txt names rootfs-trim as their owner, per-package
# directories hold them, and they are copied once, not on every make.
# Buildroot runs systemctl preset-all on the image: the preset keeps the
# unit enabled even under a "disable *" preset.
define ROOTFS_TRIM_INSTALL_INIT_SYSTEMD
	rsync -a --keep-dirlinks --chmod=u=rwX,go=rX \
		$(@D)/buildroot-overlay/ $(TARGET_DIR)/
	$(INSTALL) -D -m 0644 $(ROOTFS_TRIM_PKGDIR)/50-rootfs-trim.preset \
		$(TARGET_DIR)/usr/lib/systemd/system-preset/50-rootfs-trim.preset
endef

# scripts/post-build.sh takes its rules from here unless told otherwise.
# Removed first so that a rule deleted from the checkout does not linger.
define HOST_ROOTFS_TRIM_INSTALL_RULES
	rm -rf $(HOST_DIR)/share/rootfs-trim/rules
	mkdir -p $(HOST_DIR)/share/rootfs-trim
	cp -dR $(@D)/rules $(HOST_DIR)/share/rootfs-trim/rules
endef
HOST_ROOTFS_TRIM_POST_INSTALL_HOOKS += HOST_ROOTFS_TRIM_INSTALL_RULES

$(eval $(golang-package))
$(eval $(host-golang-package))
