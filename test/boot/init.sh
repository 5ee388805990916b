#!/bin/sh
# PID 1 of the boot test's guest (see boot_test.go). It runs what the image
# runs at boot and reports through the serial console, which is all the test
# can see of the guest. Every report is a section:
#   @@BEGIN name
#   ...output...
#   @@END name STATUS
# File contents go base64-encoded: the console's tty turns \n into \r\n and
# would glue an unterminated last line to the END marker.
export PATH=/usr/bin:/usr/sbin:/bin:/sbin

# Kernel messages would interleave with the report; keep only emergencies
# (an "Initramfs unpacking failed" was printed before we got here anyway).
dmesg -n 1

# SeaBIOS's and the kernel's terminal escapes end up on this line, not on a
# marker.
echo
echo "@@START"

step() { # NAME COMMAND...: run COMMAND, report its output and exit status.
	name=$1
	shift
	# Through a file, so that no command sees a tty (ls would use columns).
	"$@" >/tmp/step.out 2>&1
	rc=$?
	echo "@@BEGIN $name"
	cat /tmp/step.out
	echo "@@END $name $rc"
}

show() { # NAME FILE: report FILE's exact bytes.
	step "$1" base64 "$2"
}

# One line per entry of the unpacked initramfs, in the same form the test
# builds from GNU cpio's extraction of the archive: what the kernel made of
# every entry (type, mode, hard links, content, symlink target).
manifest() {
	find / -xdev | sort | while IFS= read -r p; do
		if [ "$p" = / ]; then
			continue
		elif [ -L "$p" ]; then
			echo "l|$(readlink "$p")|$p"
		elif [ -f "$p" ]; then
			sum=$(sha256sum "$p")
			echo "f|$(stat -c '%a|%h' "$p")|${sum%% *}|$p"
		elif [ -d "$p" ]; then
			echo "d|$(stat -c %a "$p")|$p"
		elif [ -p "$p" ]; then
			echo "p|$(stat -c %a "$p")|$p"
		else
			echo "o|$(stat -c %f "$p")|$p"
		fi
	done
}

# First, before anything is mounted or written (so not through step's
# file): the rootfs as unpacked.
echo "@@BEGIN manifest"
manifest
echo "@@END manifest $?"

mkdir -p /proc /sys /dev
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

step netd-initial ls -a1 /etc/cni/net.d

# Run the boot unit as systemd would: its condition, then its ExecStart
# (without systemd's prefixes such as "-"), which renders the recorded
# choice: on a first boot there is none, and it writes nothing.
unit=/usr/lib/systemd/system/rootfs-trim-render.service
step unit-enabled test -f /etc/systemd/system/multi-user.target.wants/rootfs-trim-render.service
condition_met() { # PATH: the unit's ConditionPathExists= holds.
	echo "$1"
	[ -n "$1" ] && [ -e "$1" ]
}
step unit-condition condition_met "$(sed -n 's/^ConditionPathExists=//p' "$unit")"
exec_start=$(sed -n 's/^ExecStart=[-@:+!]*//p' "$unit")
# shellcheck disable=SC2086 # split into words, as systemd does
step render-boot $exec_start
show crictl-boot /etc/crictl.yaml
step netd-boot ls -a1 /etc/cni/net.d

# minikube (patched) chooses cri-o with its bridge CNI.
step render-crio rootfs-trim render --runtime crio --cni bridge --pod-cidr 10.244.0.0/16
show crictl-crio /etc/crictl.yaml
step netd-crio ls -a1 /etc/cni/net.d
show conflist-crio /etc/cni/net.d/1-k8s.conflist
show podman-conflist /etc/containers/net.d/87-podman-bridge.conflist
show containers-conf /etc/containers/containers.conf
# The boot unit again, now with a recorded choice: it changes nothing.
# shellcheck disable=SC2086
step render-again $exec_start

# minikube chose again: containerd with kindnet, which deploys its own config.
step render-containerd rootfs-trim render --runtime containerd --cni kindnet --pod-cidr 10.244.0.0/16
show crictl-containerd /etc/crictl.yaml
step netd-containerd ls -a1 /etc/cni/net.d

# cri-o with no cluster CNI: the bridge config apply deferred comes back,
# on the pod CIDR.
step render-crio-false rootfs-trim render --runtime crio --cni false --pod-cidr 10.244.0.0/16
show crictl-crio-false /etc/crictl.yaml
step netd-crio-false ls -a1 /etc/cni/net.d
show crio-bridge /etc/cni/net.d/100-crio-bridge.conf

echo "@@DONE"
sync
# Without -f busybox would signal init, which is us. If this fails, the
# script ends, the kernel panics (panic=-1) and QEMU (-no-reboot) exits.
poweroff -f
