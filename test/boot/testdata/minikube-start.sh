#!/bin/sh
# minikube's start sequence, replayed on a booted image made by `rootfs-trim
# apply` (test/boot, TestBootMinikube). It does to the node what minikube's
# Go code does to it over SSH, command for command where /etc, the runtime
# units or their sockets are concerned, read from minikube commit
# eb25dbc703701fa38c3f65c89a1896baa375e5ed (2026-08-23):
#
#   pkg/minikube/node/start.go     configureRuntimes
#   pkg/minikube/cni/cni.go        ConfigureLoopbackCNI, ConfigureDefaultBridgeCNIs
#                                  (disableAllBridgeCNIs, configureAllBridgeCNIs)
#   pkg/minikube/cruntime/*.go     Enable, Disable, disableOthers,
#                                  dockerBoundToContainerd
#   pkg/minikube/cruntime/cri.go   populateCRIConfig
#   pkg/minikube/cruntime/containerd.go, crio.go
#                                  generate*Config: rm -rf /etc/cni/net.mk
#   pkg/minikube/bootstrapper/kubeadm/kubeadm.go
#                                  applyCNI (at init, and at restart "because
#                                  reboots clear /etc/cni")
#   pkg/minikube/cni/bridge.go     the 1-k8s.conflist it writes
#
# Left out, as they do not touch /etc/cni, /etc/crictl.yaml or the units:
# the runtimes' own config files (containerd's config.toml, cri-o's
# 02-crio.conf, cri-dockerd's drop-in), ip forwarding, kubeadm and kubelet.
# `podman version` (run for cri-o) is left out too: the image has no podman
# (test/podman covers where podman writes its networks).
#
# REPLAY_FLOW (from the kernel command line, replay.flow=): "unchanged" is
# minikube as it is; "patched" replaces the loopback and bridge renames and
# rewrites with one `rootfs-trim render` call, as integrations/minikube
# does. Everything else is the same in both.
#
# The steps run on one VM, in sequence. minikube never changes the runtime
# or CNI of a running VM (a new choice is a new VM), so before each step
# but the first the node is put back as a freshly booted VM would be: /etc/cni/net.d and
# /etc/crictl.yaml as they were at boot, no recorded choice, the units
# minikube's Disable masked unmasked, every runtime started as at boot.
# After the steps the VM restarts; on the second boot the script checks
# what the boot left in /etc and which runtime runs before minikube
# reconnects, then replays minikube's restart (configureRuntimes and
# applyCNI again) for the last step's choice. Patched, render then records
# another runtime (containerd) and the VM restarts once more: the third
# boot must run that runtime alone.
#
# It reports on the serial console in sections, as init.sh does:
#   @@BEGIN name / ...output... / @@END name STATUS
# File contents go base64-encoded.
set -u
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH LC_ALL=C

POD_CIDR=10.244.0.0/16 # minikube's cni.DefaultPodCIDR
MANIFEST=/home/user/my-cni.yaml
# RUNTIME:CNI. dockershim is docker on Kubernetes before 1.24: no
# cri-dockerd, kubelet's own /var/run/dockershim.sock as the CRI socket.
STEPS="containerd:bridge crio:bridge docker:bridge dockershim:bridge
containerd:kindnet crio:true docker:kindnet
containerd:calico crio:cilium docker:flannel
containerd:$MANIFEST crio:$MANIFEST docker:$MANIFEST
containerd:false docker:false dockershim:false crio:false"
FLOW=$(sed -n 's/.*replay\.flow=\([a-z]*\).*/\1/p' /proc/cmdline)
BOOTS=/var/lib/minikube/replay-boots # on the persistent disk
SNAP=/run/replay-etc-at-boot

step() { # NAME COMMAND...: run COMMAND, report its output and exit status.
	_step=$1
	shift
	echo "@@BEGIN $_step"
	# Through a pipe, so that no command sees a tty (ls would use columns),
	# and streamed, so that a step that hangs shows how far it got.
	{
		"$@" 2>&1
		echo $? >/run/replay-step.rc
	} | cat
	echo "@@END $_step $(cat /run/replay-step.rc)"
	echo "@@T $(cut -d' ' -f1 /proc/uptime) $_step"
}

traced() { # COMMAND...: run COMMAND in a subshell, showing each command
	(
		set -x
		"$@"
	)
}

show() { # NAME FILE: FILE's exact bytes, or "absent".
	if [ -e "$2" ]; then step "$1" base64 "$2"; else step "$1" echo absent; fi
}

socket_of() {
	case $1 in
	containerd) echo /run/containerd/containerd.sock ;;
	crio) echo /var/run/crio/crio.sock ;;
	docker) echo /var/run/cri-dockerd.sock ;;
	dockershim) echo /var/run/dockershim.sock ;;
	esac
}

# Which runtime sockets a process serves (a stale socket file of a stopped
# socket unit is not served); who holds each goes to /run/replay-holders,
# which report shows as PREFIX/socket-holders.
live_sockets() {
	standin probe-all /run/containerd/containerd.sock /var/run/crio/crio.sock \
		/var/run/docker.sock /var/run/cri-dockerd.sock /var/run/dockershim.sock 2>/run/replay-holders
}

netd() { # every entry of /etc/cni/net.d with its SHA-256
	cd /etc/cni/net.d || return 1
	for f in $(ls -A | sort); do
		if [ -f "$f" ]; then echo "$f $(sha256sum <"$f" | cut -d' ' -f1)"; else echo "$f"; fi
	done
}

report() { # PREFIX: the node as kubelet and kubeadm would see it
	show "$1/crictl" /etc/crictl.yaml
	step "$1/sockets" live_sockets
	step "$1/socket-holders" cat /run/replay-holders
	step "$1/netd" netd
	for f in $(ls -A /etc/cni/net.d | sort); do
		case $f in *.conf | *.conflist | *.json) show "$1/file/$f" "/etc/cni/net.d/$f" ;; esac
	done
}

# --- minikube, step by step ---------------------------------------------

# cni.ConfigureLoopbackCNI(r, disable): disable for cri-o, else name it.
configure_loopback() {
	stat /etc/cni/net.d/*loopback.conf* >/dev/null 2>&1 || return 0
	if [ "$1" = crio ]; then
		find /etc/cni/net.d -maxdepth 1 -type f -name '*loopback.conf*' -not -name '*.mk_disabled' \
			-exec sh -c 'mv {} {}.mk_disabled' ';'
	else
		find /etc/cni/net.d -maxdepth 1 -type f -name '*loopback.conf*' -not -name '*.mk_disabled' \
			-exec sh -c "grep -q loopback {} && ( grep -q name {} || sed -i '/\"type\": \"loopback\"/i \\ \\ \\ \\ \"name\": \"loopback\",' {} ) && sed -i 's|\"cniVersion\": \".*\"|\"cniVersion\": \"1.0.0\"|g' {}" ';'
	fi
}

# cni.ConfigureDefaultBridgeCNIs(r, networkPlugin): networkPlugin is "cni"
# for every CNI but false (start_flags.go), "" for false.
configure_bridges() {
	if [ "$1" != false ]; then
		# disableAllBridgeCNIs
		find /etc/cni/net.d -maxdepth 1 -type f '(' '(' -name '*bridge*' -or -name '*podman*' ')' \
			-and -not -name '*.mk_disabled' ')' -exec sh -c 'mv {} {}.mk_disabled' ';'
		return
	fi
	# configureAllBridgeCNIs(r, DefaultPodCIDR): non-podman bridges lose
	# their IPv6 entries and get the pod CIDR; podman's get it with the
	# first address as gateway.
	find /etc/cni/net.d -maxdepth 1 -type f -name '*bridge*' -not -name '*podman*' -not -name '*.mk_disabled' \
		-exec sh -c "sed -i -r -e '/\"dst\": \".*:.*\"/d' -e 's|^(.*)\"dst\": (.*)[,*]$|\\1\"dst\": \\2|g' -e '/\"subnet\": \".*:.*\"/d' -e 's|^(.*)\"subnet\": \".*\"(.*)[,*]$|\\1\"subnet\": \"$POD_CIDR\"\\2|g' {}" ';'
	find /etc/cni/net.d -maxdepth 1 -type f -name '*podman*' -not -name '*.mk_disabled' \
		-exec sh -c "sed -i -r -e 's|^(.*)\"subnet\": \".*\"(.*)$|\\1\"subnet\": \"$POD_CIDR\"\\2|g' -e 's|^(.*)\"gateway\": \".*\"(.*)$|\\1\"gateway\": \"10.244.0.1\"\\2|g' {}" ';'
}

# cruntime populateCRIConfig
populate_cri() {
	mkdir -p /etc && printf %s "runtime-endpoint: unix://$(socket_of "$1")
" | tee /etc/crictl.yaml >/dev/null
}

active() { systemctl is-active --quiet "$1"; }

disable_runtime() {
	case $1 in
	containerd) systemctl stop -f containerd ;;
	crio) systemctl stop -f crio ;;
	docker)
		systemctl stop -f cri-docker.socket
		systemctl stop -f cri-docker.service
		systemctl disable cri-docker.socket
		systemctl mask cri-docker.service
		systemctl stop -f docker.socket
		systemctl stop -f docker.service
		systemctl disable docker.socket
		systemctl mask docker.service
		;;
	esac
}

# cruntime disableOthers
disable_others() {
	for r in containerd crio docker; do
		[ "$r" = "$1" ] && continue
		if [ "$1" = docker ] && [ "$r" = containerd ] &&
			systemctl cat docker.service | grep -q '^BindsTo=containerd'; then
			continue
		fi
		unit=$r
		[ "$r" = docker ] && unit=docker.service
		if [ "$1" = docker ] && ! active "$unit"; then continue; fi
		disable_runtime "$r"
		if active "$unit"; then echo "$r is still active" >&2; fi
	done
}

# The runtime's Enable(disableOthers=true)
enable_runtime() {
	case $1 in
	containerd)
		disable_others containerd
		populate_cri containerd
		rm -rf /etc/cni/net.mk
		systemctl restart containerd
		;;
	crio)
		disable_others crio
		populate_cri crio
		rm -rf /etc/cni/net.mk
		systemctl restart crio
		;;
	docker | dockershim)
		disable_others docker
		populate_cri "$1"
		systemctl unmask docker.service
		systemctl enable docker.socket
		systemctl restart docker
		# r.CRIService is empty for dockershim: cri-dockerd is left alone.
		[ "$1" = dockershim ] && return
		active cri-docker.socket && systemctl stop cri-docker.socket
		active cri-docker.service && systemctl stop cri-docker.service
		systemctl unmask cri-docker.socket
		systemctl enable cri-docker.socket
		systemctl restart cri-docker.socket
		systemctl restart cri-docker.service
		;;
	esac
}

# Waits until systemd has no job left but the replay's own: render queues
# the chosen runtime's start without waiting for it.
wait_jobs() {
	i=0
	while systemctl list-jobs --no-legend | grep -qv minikube-replay; do
		i=$((i + 1))
		[ $i -lt 60 ] || { systemctl list-jobs >&2; return 1; }
		sleep 1
	done
}

wait_socket() { # waitForCRISocket
	i=0
	while ! standin probe "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 60 ] || { echo "no CRI socket $1" >&2; return 1; }
		sleep 1
	done
}

# node/start.go configureRuntimes
configure_runtimes() { # RUNTIME CNI
	if [ "$FLOW" = patched ]; then
		# integrations/minikube: the runtime, the CNI cni.New resolved, the
		# pod CIDR kubeadm gets, cr.SocketPath().
		rt=$1
		[ "$rt" = dockershim ] && rt=docker
		rm -f /run/replay-render-sockets
		rootfs-trim render --runtime "$rt" --cni "$2" --pod-cidr "$POD_CIDR" --cri-socket "$(socket_of "$1")" || return 1
		# The runtimes render alone leaves running, before minikube's
		# own Enable and disableOthers.
		wait_jobs && live_sockets >/run/replay-render-sockets
	else
		configure_loopback "$1"
		configure_bridges "$2"
	fi
	if [ "$1" = docker ] || [ "$1" = dockershim ]; then
		# containerd.Enable(false): docker may be bound to containerd
		populate_cri containerd
		rm -rf /etc/cni/net.mk
		systemctl restart containerd
	fi
	enable_runtime "$1"
	# waitForCRISocket; kubelet, which serves dockershim's, is not here.
	[ "$1" = dockershim ] && s=/var/run/docker.sock || s=$(socket_of "$1")
	wait_socket "$s"
}

# kubeadm applyCNI: bridge is the only CNI whose config minikube itself
# writes (cni/bridge.go Apply, the bytes of its bridgeConf template for
# DefaultPodCIDR); false applies nothing; the others are manifests applied
# to the cluster.
apply_cni() {
	[ "$1" = bridge ] || return 0
	mkdir -p /etc/cni/net.d
	cat >/etc/cni/net.d/1-k8s.conflist <<-EOF

		{
		  "cniVersion": "0.4.0",
		  "name": "bridge",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "bridge",
		      "addIf": "true",
		      "isDefaultGateway": true,
		      "forceAddress": false,
		      "ipMasq": true,
		      "hairpinMode": true,
		      "ipam": {
		          "type": "host-local",
		          "subnet": "$POD_CIDR"
		      }
		    },
		    {
		      "type": "portmap",
		      "capabilities": {
		          "portMappings": true
		      }
		    },
		    {
		       "type": "firewall"
		    }
		  ]
		}
	EOF
}

# What the cluster CNI's own pod does once it runs on the node: kindnet's
# kindnetd writes 10-kindnet.conflist, calico's install-cni
# 10-calico.conflist (the manifest stands for a calico-like CNI too),
# cilium's agent 05-cilium.conflist, flannel's init container
# 10-flannel.conflist.
cni_pod() {
	case $1 in
	kindnet | true) name=10-kindnet.conflist net=kindnet ;;
	calico | /*) name=10-calico.conflist net=k8s-pod-network ;;
	cilium) name=05-cilium.conflist net=cilium ;;
	flannel) name=10-flannel.conflist net=cbr0 ;;
	*) return 0 ;;
	esac
	printf '{"cniVersion":"0.3.1","name":"%s","plugins":[{"type":"ptp","ipam":{"type":"host-local","ranges":[[{"subnet":"%s"}]]}}]}\n' \
		"$net" "$POD_CIDR" >"/etc/cni/net.d/$name"
}

# --- a fresh VM between steps ----------------------------------------------

snapshot() {
	rm -rf "$SNAP" && mkdir -p "$SNAP"
	cp -a /etc/cni/net.d "$SNAP/net.d"
	[ -e /etc/crictl.yaml ] && cp -a /etc/crictl.yaml "$SNAP/crictl.yaml"
	return 0
}

fresh_vm() {
	rm -rf /etc/cni/net.d /etc/crictl.yaml /etc/cni/net.mk
	cp -a "$SNAP/net.d" /etc/cni/net.d
	[ -e "$SNAP/crictl.yaml" ] && cp -a "$SNAP/crictl.yaml" /etc/crictl.yaml
	rm -rf /var/lib/minikube/rootfs-trim
	systemctl unmask docker.service cri-docker.service
	systemctl enable docker.socket cri-docker.socket
	systemctl start containerd crio docker.socket docker cri-docker.socket cri-docker
}

unit_times() { # one block per unit, Id= first
	systemctl show -p Id -p InactiveExitTimestampMonotonic -p ExecMainExitTimestampMonotonic \
		-p ExecMainStatus -p Result rootfs-trim-render.service minikube-automount.service \
		containerd.service crio.service docker.socket docker.service cri-docker.socket cri-docker.service
}

at_boot() { # PREFIX: what the boot did, before minikube connects
	step "$1/jobs" wait_jobs
	step "$1/units" unit_times
	step "$1/render-journal" journalctl -b -u rootfs-trim-render.service --no-pager -o cat
	step "$1/failed" systemctl list-units --failed --no-legend --plain
	report "$1"
}

# --- main ----------------------------------------------------------------

echo
echo "@@START"
step flow echo "$FLOW"
boots=$(cat "$BOOTS" 2>/dev/null || echo 0)
boots=$((boots + 1))
echo "$boots" >"$BOOTS"
sync
step boot echo "$boots"

if [ "$boots" = 1 ]; then
	at_boot b1
	snapshot
	n=0
	for s in $STEPS; do
		n=$((n + 1))
		r=${s%%:*} c=${s#*:}
		name=$(printf 's%02d' $n)
		[ $n = 1 ] || step "$name/fresh-vm" traced fresh_vm
		step "$name/choice" echo "$r $c"
		step "$name/configure-runtimes" traced configure_runtimes "$r" "$c"
		[ "$FLOW" = patched ] && step "$name/render-sockets" cat /run/replay-render-sockets
		step "$name/apply-cni" traced apply_cni "$c"
		report "$name"
		step "$name/cni-pod" traced cni_pod "$c"
		report "$name/with-cni-pod"
		last="$r $c"
	done
	echo "$last" >/var/lib/minikube/replay-last
	sync
	echo "@@REBOOT"
	systemctl reboot
	exit 0
fi

if [ "$boots" = 2 ]; then
	# The second boot: /etc is the image's again, the disk kept the record.
	set -- $(cat /var/lib/minikube/replay-last)
	step restart/choice echo "$1 $2"
	at_boot b2
	step restart/configure-runtimes traced configure_runtimes "$1" "$2"
	[ "$FLOW" = patched ] && step restart/render-sockets cat /run/replay-render-sockets
	step restart/apply-cni traced apply_cni "$2"
	report restart
	step restart/cni-pod traced cni_pod "$2"
	report restart/with-cni-pod
	if [ "$FLOW" = patched ]; then
		# minikube's call for another runtime records it; the next boot
		# renders it before any runtime starts.
		step next/render traced rootfs-trim render --runtime containerd --cni bridge \
			--pod-cidr "$POD_CIDR" --cri-socket "$(socket_of containerd)"
		sync
		echo "@@REBOOT"
		systemctl reboot
		exit 0
	fi
	echo "@@DONE"
	sync
	systemctl poweroff
	exit 0
fi

# The third boot (patched): the record names containerd now.
at_boot b3
echo "@@DONE"
sync
systemctl poweroff
