#!/usr/bin/env bash
# make demo: rootfs-trim on the bundled example (examples/minikube: a small
# Buildroot target with the minikube ISO's runtime packages), from the
# problem to the image booted for two runtimes. Everything goes to out/demo;
# the README's examples use what it leaves there. Needs the rootfs-trim
# binary (make demo builds it); GNU cpio when present, to archive the target
# exactly as Buildroot does.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${ROOTFS_TRIM:-bin/rootfs-trim}
ex=examples/minikube
out=out/demo
rm -rf "$out"
mkdir -p "$out"
# Buildroot exports these when BR2_REPRODUCIBLE is set; the demo does too,
# so that its output is the same on every machine.
export SOURCE_DATE_EPOCH=1700000000 TZ=UTC LC_ALL=C.UTF-8

bold='' plain=''
if [ -t 1 ]; then bold=$'\033[1m' plain=$'\033[0m'; fi
step() { printf '\n%s== %s%s\n' "$bold" "$*" "$plain"; }
say() { printf '%s\n' "$@"; }
# run 'COMMAND': print it as typed from the top of the tree (to copy), then
# run it; its status is the command's.
run() {
	local shown=${1//\$bin/$bin}
	shown=${shown//\$out/$out}
	shown=${shown//\$ex/$ex}
	shown=${shown//\$SOURCE_DATE_EPOCH/$SOURCE_DATE_EPOCH}
	printf '%s$ %s%s\n' "$bold" "$shown" "$plain"
	eval "$1"
}

step "1. The problem"
say "A Kubernetes node image carries several container runtimes (containerd, cri-o," \
	"docker, podman) and picks one when the cluster starts. Their packages each" \
	"install configuration that is right only if that runtime is the one in use:" \
	"  - a network definition in /etc/cni/net.d: the kubelet uses the first file there," \
	"    so a packaged one takes the place of the network the cluster installs later;" \
	"  - /etc/crictl.yaml, which tells crictl and kubeadm which runtime's socket to use." \
	"The example image, archived as Buildroot does (out/demo/rootfs.cpio.gz):"
# Buildroot builds the cpio from a copy of the target under fakeroot:
# owners 0:0, mtimes clamped to SOURCE_DATE_EPOCH, find | sort | cpio.
run 'cp -R $ex/target $out/target'
run 'chmod -R u=rwX,go=rX $out/target'
run 'find $out/target -exec touch -h -d @$SOURCE_DATE_EPOCH {} +'
if command -v cpio >/dev/null; then
	run '(cd $out/target && find . | LC_ALL=C sort | cpio --quiet -o -H newc --reproducible -R 0:0) | gzip -9 -n > $out/rootfs.cpio.gz'
else
	run '$bin repack --archive-format newc --compress gzip $out/target $out/rootfs.cpio.gz'
fi
run '$bin list $out/rootfs.cpio.gz | grep -E "^#| etc/(cni/net.d/|crictl)"'

step "2. audit: what the packages ship that they must not, and who shipped it"
say "(Buildroot's packages-file-list.txt says which package installed each file.)"
run '$bin audit --rules rules --packages-file-list $ex/packages-file-list.txt $out/rootfs.cpio.gz' || [ $? -eq 1 ]

step "3. apply: strip, defer, relocate; the archive streams through"
say "Deferred files wait under /usr/share/minikube for the boot step; the rules' templates" \
	"and an index go there too. (Directories apply creates are left out below.)"
run '$bin apply --rules rules --packages-file-list $ex/packages-file-list.txt --manifest $out/manifest.json $out/rootfs.cpio.gz $out/rootfs-trimmed.cpio.gz | grep -v "^created "'

step "4. audit again: no offender; the notes say which runtime starts at boot"
run '$bin audit --rules rules --packages-file-list $ex/packages-file-list.txt $out/rootfs-trimmed.cpio.gz'

step "5. minikube chose cri-o with minikube's own bridge network"
say "rootfs-trim render (which minikube runs with its choice, and the boot unit again after a restart) writes /etc;" \
	"here into a scratch root, out/demo/root, unpacked from the trimmed image."
run '$bin repack --archive-format dir $out/rootfs-trimmed.cpio.gz $out/root'
run '$bin render --root $out/root --runtime crio --cni bridge --pod-cidr 10.244.0.0/16'
run 'cat $out/root/etc/crictl.yaml'
run 'ls -A $out/root/etc/cni/net.d'

step "6. Next start: containerd, --cni=false (containerd's own network comes back, on the pod CIDR)"
run '$bin render --root $out/root --runtime containerd --cni false --pod-cidr 10.244.0.0/16'
run 'cat $out/root/etc/crictl.yaml'
run 'ls -A $out/root/etc/cni/net.d'

step "7. Then containerd with kindnet, which its pod installs: nothing may be in its way"
run '$bin render --root $out/root --runtime containerd --cni kindnet'
run 'ls -A $out/root/etc/cni/net.d'

printf '\nWhat apply changed, with each rule and reason: %s\n' "$out/manifest.json"
