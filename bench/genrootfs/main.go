package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	out := flag.String("out", "", "directory to create (must not exist or be empty)")
	sizeMB := flag.Int("size-mb", 400, "approximate total size of the regular files, in MiB")
	seed := flag.Uint64("seed", 1, "PRNG seed")
	pkgList := flag.String("pkglist", "", "where to write packages-file-list.txt (default: beside -out)")
	jobs := flag.Int("j", runtime.GOMAXPROCS(0), "files written in parallel")
	flag.Parse()
	if *out == "" || *sizeMB <= 0 || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: genrootfs -out DIR [-size-mb N] [-seed N] [-pkglist FILE] [-j N]")
		os.Exit(2)
	}
	mtime := time.Unix(1700000000, 0)
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			fatalf("SOURCE_DATE_EPOCH=%q: %v", s, err)
		}
		mtime = time.Unix(v, 0)
	}
	if *pkgList == "" {
		*pkgList = filepath.Join(filepath.Dir(filepath.Clean(*out)), "packages-file-list.txt")
	}
	start := time.Now()
	p := plan(*seed, int64(*sizeMB)<<20)
	if err := p.write(*out, *pkgList, mtime, max(*jobs, 1)); err != nil {
		fatalf("%v", err)
	}
	var files int
	var bytes int64
	for _, e := range p.entries {
		if e.kind == kFile {
			files++
			bytes += e.size
		}
	}
	fmt.Fprintf(os.Stderr, "genrootfs: %s: %d entries (%d regular files, %d dirs), %.1f MiB, in %.1fs\n",
		*out, len(p.entries)+len(p.dirs), files, len(p.dirs), float64(bytes)/(1<<20), time.Since(start).Seconds())
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "genrootfs: "+format+"\n", args...)
	os.Exit(1)
}

// ---------------------------------------------------------------------------
// The plan: every entry with its size and seed, decided up front.

type kind uint8

const (
	kFile kind = iota
	kSymlink
	kHardlink
)

type content uint8

const (
	cFixed content = iota
	cGoBin
	cELF
	cSharedLib
	cKmod
	cFirmware
	cBinData // zoneinfo, terminfo, .mo, .pyc: small structured binary
	cText    // style says which
)

type style uint8

const (
	sPlain style = iota
	sConfig
	sShell
	sUnit
	sPython
	sPerl
	sRules
	sCert
)

type entry struct {
	path    string // relative, no leading "./"
	kind    kind
	content content
	style   style
	size    int64
	mode    uint32 // permission bits plus setuid/setgid/sticky (octal, as chmod)
	target  string // symlink target, or hard-link source path
	pkg     string
	seed    uint64
	fixed   string
}

type planner struct {
	r       *rand.Rand
	entries []*entry
	dirs    map[string]uint32
	used    map[string]bool
	total   int64
}

func (p *planner) mkdir(dir string, mode uint32) {
	for d := dir; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, ok := p.dirs[d]; ok {
			if d == dir && mode != 0 {
				p.dirs[d] = mode
			}
			break
		}
		m := uint32(0o755)
		if d == dir && mode != 0 {
			m = mode
		}
		p.dirs[d] = m
	}
}

// unique returns name, or name with a numeric suffix, so that no two
// entries share a path.
func (p *planner) unique(dir, name, ext string) string {
	full := path.Join(dir, name+ext)
	for i := 2; p.taken(full); i++ {
		full = path.Join(dir, fmt.Sprintf("%s%d%s", name, i, ext))
	}
	return full
}

func (p *planner) taken(pth string) bool {
	_, isDir := p.dirs[pth]
	return p.used[pth] || isDir
}

// remove drops the entry at pth (a busybox applet that a full program
// replaces, as Buildroot's busybox install does not clobber).
func (p *planner) remove(pth string) {
	if !p.used[pth] {
		return
	}
	delete(p.used, pth)
	for i, e := range p.entries {
		if e.path == pth {
			p.entries = append(p.entries[:i], p.entries[i+1:]...)
			return
		}
	}
}

func (p *planner) add(e *entry) *entry {
	if p.taken(e.path) {
		panic("duplicate path " + e.path)
	}
	for d := path.Dir(e.path); d != "."; d = path.Dir(d) {
		if p.used[d] {
			panic("parent of " + e.path + " is not a directory")
		}
	}
	p.used[e.path] = true
	p.mkdir(path.Dir(e.path), 0)
	if e.mode == 0 {
		e.mode = 0o644
	}
	if e.kind == kFile {
		e.seed = p.r.Uint64()
		if e.content == cFixed {
			e.size = int64(len(e.fixed))
		}
		p.total += e.size
	}
	p.entries = append(p.entries, e)
	return e
}

func (p *planner) file(pth string, c content, size int64, mode uint32, pkg string) *entry {
	return p.add(&entry{path: pth, kind: kFile, content: c, size: max(size, 1), mode: mode, pkg: pkg})
}

func (p *planner) text(pth string, st style, size int64, mode uint32, pkg string) *entry {
	e := p.file(pth, cText, size, mode, pkg)
	e.style = st
	return e
}

func (p *planner) symlink(pth, target, pkg string) {
	p.add(&entry{path: pth, kind: kSymlink, target: target, mode: 0o777, pkg: pkg})
}

func (p *planner) hardlink(pth string, src *entry) {
	p.add(&entry{path: pth, kind: kHardlink, target: src.path, mode: src.mode, pkg: src.pkg})
}

// sizes splits budget over n files with a log-normal spread (sigma), no file
// smaller than minSize.
func (p *planner) sizes(n int, budget int64, sigma float64, minSize int64) []int64 {
	if n <= 0 {
		return nil
	}
	w := make([]float64, n)
	var sum float64
	for i := range w {
		w[i] = math.Exp(sigma * p.r.NormFloat64())
		sum += w[i]
	}
	out := make([]int64, n)
	for i := range w {
		out[i] = max(minSize, int64(float64(budget)*w[i]/sum))
	}
	return out
}

func (p *planner) word() string { return words[zipf(p.r, len(words))] }

// zipf picks an index in [0,n) with a heavy bias towards small indices.
func zipf(r *rand.Rand, n int) int { return r.IntN(r.IntN(n) + 1) }

// tree hands out directories below root for files of one category: new
// subdirectories are made as files arrive, up to depth levels below root,
// so that a category of many files spreads over a plausible hierarchy.
type tree struct {
	p       *planner
	dirs    []string
	depth   map[string]int
	max     int
	perDir  int
	namer   func() string
	newSeen int
}

func (p *planner) newTree(root string, maxDepth, perDir int, namer func() string) *tree {
	if namer == nil {
		namer = p.word
	}
	t := &tree{p: p, dirs: []string{root}, depth: map[string]int{root: 0}, max: maxDepth, perDir: perDir, namer: namer}
	return t
}

func (t *tree) pick() string {
	r := t.p.r
	t.newSeen++
	if t.newSeen >= t.perDir || (len(t.dirs) == 1 && t.max > 0 && t.newSeen > 2) {
		t.newSeen = 0
		// Grow below a random existing directory that is not too deep; prefer
		// recent ones so that the hierarchy gets deep as well as wide.
		for try := 0; try < 8; try++ {
			var parent string
			if r.IntN(2) == 0 {
				parent = t.dirs[len(t.dirs)-1-r.IntN(min(len(t.dirs), 4))]
			} else {
				parent = t.dirs[r.IntN(len(t.dirs))]
			}
			if t.depth[parent] >= t.max {
				continue
			}
			d := path.Join(parent, t.namer())
			if _, ok := t.depth[d]; ok || t.p.used[d] {
				continue
			}
			t.depth[d] = t.depth[parent] + 1
			t.dirs = append(t.dirs, d)
			return d
		}
	}
	// Mostly the newest directories, like a package's files installed together.
	if r.IntN(3) > 0 {
		return t.dirs[len(t.dirs)-1-r.IntN(min(len(t.dirs), 3))]
	}
	return t.dirs[r.IntN(len(t.dirs))]
}

// Budget shares of the regular-file bytes, in percent. The shares of the
// file count (of about 50 files per MiB) are in plan.
const (
	shGoBin    = 38
	shFirmware = 3
	shELF      = 10
	shLib      = 20
	shKmod     = 8
	shPython   = 6
	shText     = 10
	shBinData  = 5
)

func plan(seed uint64, total int64) *planner {
	p := &planner{
		r:    rand.New(rand.NewPCG(seed, 0x726f6f7466737472)),
		dirs: map[string]uint32{},
		used: map[string]bool{},
	}
	mb := float64(total) / (1 << 20)
	nFiles := max(300, int(50*mb))
	share := func(pct int) int64 { return total * int64(pct) / 100 }
	count := func(frac float64) int { return max(3, int(frac*float64(nFiles))) }

	p.skeleton()
	p.runtimeOffenders()
	p.goBinaries(share(shGoBin))
	p.busybox()
	p.elfBinaries(count(0.03), share(shELF))
	p.sharedLibs(count(0.04), share(shLib))
	p.kernelModules(count(0.10), share(shKmod))
	p.python(count(0.25), share(shPython))
	p.textFiles(count(0.36), share(shText))
	p.binData(count(0.15), share(shBinData))
	p.firmware(count(0.005), share(shFirmware))
	p.misc()
	return p
}

func (p *planner) skeleton() {
	pkg := "skeleton-init-systemd"
	for _, d := range []string{"dev", "etc", "home", "media", "mnt", "opt", "proc", "run", "sys", "usr/bin", "usr/sbin", "usr/lib", "var/lib", "var/log", "var/cache", "srv"} {
		p.mkdir(d, 0o755)
	}
	p.mkdir("root", 0o700)
	p.mkdir("tmp", 0o1777)
	p.mkdir("var/tmp", 0o1777)
	for _, l := range [][2]string{{"bin", "usr/bin"}, {"sbin", "usr/sbin"}, {"lib", "usr/lib"}, {"lib64", "lib"}, {"usr/lib64", "lib"}} {
		p.symlink(l[0], l[1], "skeleton-init-common")
	}
	p.symlink("etc/mtab", "../proc/self/mounts", "skeleton-init-common")
	p.symlink("etc/resolv.conf", "../run/systemd/resolve/resolv.conf", "skeleton-init-systemd")
	p.symlink("etc/localtime", "../usr/share/zoneinfo/Etc/UTC", "tzdata")
	p.symlink("var/run", "../run", pkg)
	fixed := func(pth, text string, mode uint32, pkg string) {
		e := p.file(pth, cFixed, 0, mode, pkg)
		e.fixed = text
		e.size = int64(len(text))
	}
	fixed("etc/hostname", "minikube\n", 0o644, "skeleton-init-common")
	fixed("etc/hosts", "127.0.0.1\tlocalhost\n127.0.1.1\tminikube\n", 0o644, "skeleton-init-common")
	fixed("etc/passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/bin/false\nbin:x:2:2:bin:/bin:/bin/false\nsys:x:3:3:sys:/dev:/bin/false\nsync:x:4:100:sync:/bin:/bin/sync\nmail:x:8:8:mail:/var/spool/mail:/bin/false\nwww-data:x:33:33:www-data:/var/www:/bin/false\noperator:x:37:37:Operator:/var:/bin/false\nnobody:x:65534:65534:nobody:/home:/bin/false\ndocker:x:1000:1000::/home/docker:/bin/bash\n", 0o644, "skeleton-init-common")
	fixed("etc/group", "root:x:0:\ndaemon:x:1:\nbin:x:2:\nsys:x:3:\nadm:x:4:\ntty:x:5:\ndisk:x:6:\nwheel:x:10:root\naudio:x:29:\nvideo:x:44:\ndocker:x:1000:docker\nnogroup:x:65534:\n", 0o644, "skeleton-init-common")
	fixed("etc/shadow", "root::19000:0:99999:7:::\ndaemon:*:::::::\nbin:*:::::::\nsys:*:::::::\nnobody:*:::::::\ndocker:*:::::::\n", 0o600, "skeleton-init-common")
	fixed("etc/os-release", "NAME=Buildroot\nVERSION=2023.02.9\nID=buildroot\nVERSION_ID=2023.02.9\nPRETTY_NAME=\"Buildroot 2023.02.9\"\n", 0o644, "skeleton-init-common")
	fixed("etc/fstab", "# <file system>\t<mount pt>\t<type>\t<options>\t<dump>\t<pass>\n/dev/root\t/\text2\trw,noauto\t0\t1\n", 0o644, "skeleton-init-common")
}

// The files rootfs-trim exists for: container-runtime configuration that
// packages install into the image.
func (p *planner) runtimeOffenders() {
	fixed := func(pth, text, pkg string) {
		e := p.file(pth, cFixed, 0, 0o644, pkg)
		e.fixed = text
	}
	fixed("etc/cni/net.d/87-podman-bridge.conflist", `{
  "cniVersion": "0.4.0",
  "name": "podman",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "cni-podman0",
      "isGateway": true,
      "ipMasq": true,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "routes": [{ "dst": "0.0.0.0/0" }],
        "ranges": [
          [
            {
              "subnet": "10.88.0.0/16",
              "gateway": "10.88.0.1"
            }
          ]
        ]
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
    },
    {
      "type": "tuning"
    }
  ]
}
`, "podman")
	fixed("etc/crictl.yaml", "runtime-endpoint: unix:///run/containerd/containerd.sock\nimage-endpoint: unix:///run/containerd/containerd.sock\ntimeout: 10\ndebug: false\n", "cri-containerd-cni")
	fixed("etc/systemd/system/containerd.service", `# Copyright The containerd Authors.
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.

[Unit]
Description=containerd container runtime
Documentation=https://containerd.io
After=network.target local-fs.target

[Service]
ExecStartPre=-/sbin/modprobe overlay
ExecStart=/usr/bin/containerd

Type=notify
Delegate=yes
KillMode=process
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
LimitNOFILE=infinity
TasksMax=infinity
OOMScoreAdjust=-999

[Install]
WantedBy=multi-user.target
`, "containerd")
	p.symlink("etc/systemd/system/multi-user.target.wants/containerd.service", "../containerd.service", "containerd")
	fixed("etc/containerd/config.toml", "version = 2\nroot = \"/var/lib/containerd\"\nstate = \"/run/containerd\"\n\n[grpc]\n  address = \"/run/containerd/containerd.sock\"\n\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n  snapshotter = \"overlayfs\"\n", "containerd")
}

// Large statically linked Go binaries: the bulk of a minikube-like image.
func (p *planner) goBinaries(budget int64) {
	type gb struct {
		path, pkg string
		weight    float64
	}
	list := []gb{
		{"usr/bin/dockerd", "docker-engine", 80}, {"usr/bin/docker", "docker-cli", 35},
		{"usr/bin/docker-proxy", "docker-proxy", 3}, {"usr/bin/containerd", "containerd", 40},
		{"usr/bin/containerd-shim-runc-v2", "containerd", 12}, {"usr/bin/ctr", "containerd", 20},
		{"usr/bin/runc", "runc", 10}, {"usr/bin/crictl", "crictl-bin", 40},
		{"usr/bin/podman", "podman", 45}, {"usr/bin/cri-dockerd", "cri-dockerd", 45},
		{"usr/bin/buildkitd", "buildkit-bin", 50}, {"usr/bin/buildctl", "buildkit-bin", 25},
		{"usr/libexec/docker/cli-plugins/docker-buildx", "docker-buildx", 55},
		{"usr/libexec/podman/rootlessport", "podman", 4},
	}
	for _, plugin := range []string{"bandwidth", "bridge", "dhcp", "dummy", "firewall", "host-device", "host-local", "ipvlan", "loopback", "macvlan", "portmap", "ptp", "sbr", "static", "tap", "tuning", "vlan", "vrf"} {
		list = append(list, gb{"opt/cni/bin/" + plugin, "cni-plugins", 4})
	}
	var sum float64
	for _, b := range list {
		sum += b.weight
	}
	for _, b := range list {
		size := int64(float64(budget) * b.weight / sum * (0.85 + 0.3*p.r.Float64()))
		p.file(b.path, cGoBin, size, 0o755, b.pkg)
		if strings.HasPrefix(b.path, "opt/cni/bin/") {
			name := path.Base(b.path)
			p.symlink("usr/libexec/cni/"+name, "../../../opt/cni/bin/"+name, "cni-plugins")
		}
	}
	// The layout the brief of these benchmarks asks for: usr/bin/x -> ../../opt/cni/bin/x.
	for _, name := range []string{"host-local", "loopback", "bridge", "portmap"} {
		p.symlink("usr/bin/cni-"+name, "../../opt/cni/bin/"+name, "cni-plugins")
	}
	p.symlink("usr/bin/docker-init", "../libexec/docker/docker-init", "docker-engine")
	p.file("usr/libexec/docker/docker-init", cELF, 70<<10, 0o755, "docker-engine")
}

var busyboxApplets = strings.Fields(`[ [[ acpid addgroup adduser adjtimex ar arch arp arping ash awk base32 base64
basename bc beep blkdiscard blkid blockdev bootchartd brctl bunzip2 bzcat bzip2 cal cat chat chattr chcon
chgrp chmod chown chpasswd chpst chroot chrt chvt cksum clear cmp comm conspy cp cpio crc32 crond crontab
cryptpw cttyhack cut date dc dd deallocvt delgroup deluser depmod devmem df dhcprelay diff dirname dmesg
dnsd dnsdomainname dos2unix dpkg du dumpkmap dumpleases echo ed egrep eject env envdir envuidgid ether-wake
expand expr factor fakeidentd fallocate false fatattr fbset fbsplash fdflush fdformat fdisk fgconsole fgrep
find findfs flock fold free freeramdisk fsck fsfreeze fstrim fsync ftpd ftpget ftpput fuser getopt getty grep
groups gunzip gzip halt hd hdparm head hexdump hexedit hostid hostname httpd hush hwclock i2cdetect i2cdump
i2cget i2cset i2ctransfer id ifconfig ifdown ifenslave ifplugd ifup inetd init insmod install ionice iostat ip
ipaddr ipcalc ipcrm ipcs iplink ipneigh iproute iprule iptunnel kbd_mode kill killall killall5 klogd last less
link linux32 linux64 linuxrc ln loadfont loadkmap logger login logname logread losetup lpd lpq lpr ls lsattr
lsmod lsof lspci lsscsi lsusb lzcat lzma lzop makedevs makemime man md5sum mdev mesg microcom mim mkdir
mkdosfs mke2fs mkfifo mkfs.ext2 mkfs.minix mkfs.vfat mknod mkpasswd mkswap mktemp modinfo modprobe more
mount mountpoint mpstat mt mv nameif nanddump nandwrite nbd-client nc netstat nice nl nmeter nohup nologin
nproc nsenter nslookup ntpd nuke od openvt partprobe passwd paste patch pgrep pidof ping ping6 pipe_progress
pivot_root pkill pmap popmaildir poweroff powertop printenv printf ps pscan pstree pwd pwdx raidautorun rdate
rdev readahead readlink readprofile realpath reboot reformime remove-shell renice reset resize resume rev rm
rmdir rmmod route rpm rpm2cpio rtcwake run-init run-parts runlevel runsv runsvdir rx script scriptreplay sed
sendmail seq setarch setconsole setfattr setfont setkeycodes setlogcons setpriv setserial setsid setuidgid sh
sha1sum sha256sum sha3sum sha512sum showkey shred shuf slattach sleep smemcap softlimit sort split ssl_client
start-stop-daemon stat strings stty su sulogin sum sv svc svlogd svok swapoff swapon switch_root sync sysctl
syslogd tac tail tar taskset tc tcpsvd tee telnet telnetd test tftp tftpd time timeout top touch tr traceroute
traceroute6 tree true truncate ts tty ttysize tunctl ubiattach ubidetach ubimkvol ubirename ubirmvol ubirsvol
ubiupdatevol udhcpc udhcpc6 udhcpd udpsvd uevent umount uname unexpand uniq unix2dos unlink unlzma unshare
unxz unzip uptime users usleep uudecode uuencode vconfig vi vlock volname w wall watch watchdog wc wget which
who whoami whois xargs xxd xz xzcat yes zcat zcip`)

func (p *planner) busybox() {
	p.file("usr/bin/busybox", cELF, 1100<<10, 0o4755, "busybox")
	for i, a := range busyboxApplets {
		dir, target := "usr/bin", "busybox"
		if i%4 == 3 {
			dir, target = "usr/sbin", "../bin/busybox"
		}
		pth := path.Join(dir, a)
		if p.used[pth] {
			continue
		}
		p.symlink(pth, target, "busybox")
	}
}

var realBins = strings.Fields(`bash sudo su passwd mount umount newgrp chsh chfn fusermount3 newuidmap newgidmap
ssh sshd scp sftp ssh-keygen ssh-agent git perl python3.11 vim htop curl rsync socat conntrack ethtool iptables
ip6tables nft ebtables tc ss bridge lsblk findmnt losetup mkfs nsenter unshare setpriv systemctl journalctl
systemd-resolve udevadm loginctl hostnamectl timedatectl busctl openssl tar gzip xz zstd lz4 sqlite3 dbus-daemon
dbus-send kmod lspci lsusb chronyd chronyc dhcpcd e2fsck mke2fs tune2fs resize2fs dumpe2fs mkfs.xfs xfs_repair
lvm cryptsetup iscsiadm mount.nfs showmount crun conmon catatonit slirp4netns fuse-overlayfs less strace gdbserver
tcpdump nc jq`)

var setuidBins = map[string]uint32{
	"sudo": 0o4755, "su": 0o4755, "passwd": 0o4755, "mount": 0o4755, "umount": 0o4755, "newgrp": 0o4755,
	"chsh": 0o4755, "chfn": 0o4755, "fusermount3": 0o4755, "newuidmap": 0o4755, "newgidmap": 0o4755,
	"ssh-agent": 0o2755, "crontab": 0o2755,
}

var binPkgs = map[string]string{
	"bash": "bash", "sudo": "sudo", "su": "util-linux", "passwd": "shadow", "mount": "util-linux", "umount": "util-linux",
	"newgrp": "shadow", "chsh": "util-linux", "chfn": "util-linux", "fusermount3": "fuse3", "newuidmap": "shadow",
	"newgidmap": "shadow", "ssh": "openssh", "sshd": "openssh", "scp": "openssh", "sftp": "openssh",
	"ssh-keygen": "openssh", "ssh-agent": "openssh", "git": "git", "perl": "perl", "python3.11": "python3",
	"vim": "vim", "htop": "htop", "curl": "libcurl", "rsync": "rsync", "socat": "socat", "conntrack": "conntrack-tools",
	"ethtool": "ethtool", "iptables": "iptables", "ip6tables": "iptables", "nft": "nftables", "ebtables": "ebtables",
	"tc": "iproute2", "ss": "iproute2", "bridge": "iproute2", "systemctl": "systemd", "journalctl": "systemd",
	"udevadm": "systemd", "openssl": "openssl", "crun": "crun", "conmon": "conmon", "e2fsck": "e2fsprogs",
	"mke2fs": "e2fsprogs", "tune2fs": "e2fsprogs", "resize2fs": "e2fsprogs", "dumpe2fs": "e2fsprogs",
	"lvm": "lvm2", "cryptsetup": "cryptsetup", "iscsiadm": "open-iscsi", "mount.nfs": "nfs-utils",
	"chronyd": "chrony", "chronyc": "chrony", "dhcpcd": "dhcpcd", "dbus-daemon": "dbus", "dbus-send": "dbus",
	"kmod": "kmod", "strace": "strace", "tcpdump": "tcpdump", "jq": "jq", "sqlite3": "sqlite",
}

var packages = strings.Fields(`acl attr bash ca-certificates chrony conmon conntrack-tools coreutils cryptsetup
dbus dhcpcd e2fsprogs ebtables elfutils ethtool expat findutils fuse3 gawk git glibc gmp grep gzip htop hwdata
iproute2 iptables jq json-c kbd keyutils kmod less libbpf libcap libcurl libffi libglib2 libmnl libnetfilter_conntrack
libnfnetlink libnftnl libnl libseccomp libselinux libtirpc libuv libxml2 lvm2 lz4 ncurses nfs-utils nftables
open-iscsi openssh openssl pciutils pcre2 perl procps-ng psmisc python3 python-pyyaml python-six python-requests
readline rsync sed socat sqlite strace sudo systemd tar tcpdump tzdata usbutils util-linux vim xfsprogs xz zlib zstd`)

func (p *planner) pkg() string { return packages[p.r.IntN(len(packages))] }

func (p *planner) elfBinaries(n int, budget int64) {
	sizes := p.sizes(n, budget, 1.0, 4<<10)
	byName := map[string]*entry{}
	for i, size := range sizes {
		var name, pkg string
		if i < len(realBins) {
			name = realBins[i]
			pkg = binPkgs[name]
		} else {
			name = p.word() + "-" + p.word()
		}
		if pkg == "" {
			pkg = p.pkg()
		}
		dir := "usr/bin"
		switch {
		case strings.HasSuffix(name, "d") && setuidBins[name] == 0 && p.r.IntN(2) == 0, strings.HasPrefix(name, "mk"), strings.HasPrefix(name, "e2"):
			dir = "usr/sbin"
		case i >= len(realBins) && p.r.IntN(5) == 0:
			dir = "usr/libexec/" + pkg
		}
		mode := uint32(0o755)
		if m, ok := setuidBins[name]; ok {
			mode = m
		}
		if i < len(realBins) {
			// A busybox applet of that name: the full program replaces it.
			p.remove(path.Join("usr/bin", name))
			p.remove(path.Join("usr/sbin", name))
		}
		byName[name] = p.file(p.unique(dir, name, ""), cELF, size, mode, pkg)
	}
	p.file("usr/libexec/dbus-daemon-launch-helper", cELF, 60<<10, 0o4750, "dbus")

	// Hard-link groups, as e2fsprogs, perl and git install them.
	group := func(src string, names ...string) {
		e := byName[src]
		if e == nil {
			return
		}
		for _, n := range names {
			pth := path.Join(path.Dir(e.path), n)
			if !p.used[pth] {
				p.hardlink(pth, e)
			}
		}
	}
	group("mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4")
	group("e2fsck", "fsck.ext2", "fsck.ext3", "fsck.ext4")
	group("perl", "perl5.36.0")
	if git := byName["git"]; git != nil {
		for _, sub := range []string{"add", "am", "annotate", "apply", "archive", "bisect--helper", "blame", "branch",
			"bundle", "cat-file", "check-attr", "check-ignore", "checkout", "cherry-pick", "clean", "clone", "commit",
			"config", "describe", "diff", "fetch", "format-patch", "fsck", "gc", "grep", "init", "log", "merge", "mv",
			"pull", "push", "rebase", "reset", "restore", "revert", "rm", "show", "stash", "status", "switch", "tag"} {
			p.hardlink("usr/libexec/git-core/git-"+sub, git)
		}
	}
	if py := byName["python3.11"]; py != nil {
		p.symlink("usr/bin/python3", "python3.11", "python3")
		p.symlink("usr/bin/python", "python3", "python3")
	}
	if byName["vim"] != nil {
		p.symlink("usr/bin/vi", "vim", "vim")
	}
}

var realLibs = strings.Fields(`c m pthread dl rt crypt resolv util ssl crypto z lzma zstd lz4 bz2 ffi expat xml2 curl
sqlite3 glib-2.0 gobject-2.0 gio-2.0 gmodule-2.0 dbus-1 systemd udev seccomp cap acl attr uuid blkid mount
fdisk smartcols ncursesw tinfo readline history pcre2-8 json-c uv nl-3 nl-route-3 nl-genl-3 mnl nftnl
netfilter_conntrack nfnetlink ip4tc ip6tc xtables bpf elf dw kmod tirpc keyutils gmp mpfr python3.11 perl
stdc++ gcc_s atomic fuse3 yaml-0.1 lvm2cmd devmapper cryptsetup argon2 iscsi`)

func (p *planner) sharedLibs(n int, budget int64) {
	sizes := p.sizes(n, budget, 1.1, 8<<10)
	for i, size := range sizes {
		var name string
		if i < len(realLibs) {
			name = realLibs[i]
		} else {
			name = p.word() + p.word()
		}
		pkg := "lib" + name
		if i < len(realLibs) && i < 9 {
			pkg = "glibc"
		} else if p.r.IntN(2) == 0 {
			pkg = p.pkg()
		}
		dir := "usr/lib"
		if i >= len(realLibs) && p.r.IntN(4) == 0 {
			dir = path.Join("usr/lib", pkg)
		}
		major := p.r.IntN(12)
		real := fmt.Sprintf("lib%s.so.%d.%d.%d", name, major, p.r.IntN(40), p.r.IntN(10))
		pth := p.unique(dir, real, "")
		p.file(pth, cSharedLib, size, 0o755, pkg)
		soname := path.Join(dir, fmt.Sprintf("lib%s.so.%d", name, major))
		if !p.used[soname] {
			p.symlink(soname, path.Base(pth), pkg)
		}
		if dev := path.Join(dir, "lib"+name+".so"); !p.used[dev] && p.r.IntN(3) == 0 {
			p.symlink(dev, path.Base(soname), pkg)
		}
	}
	p.symlink("usr/lib/ld-linux-x86-64.so.2", "libc.so.6", "glibc")
}

var kmodTop = []string{"drivers", "net", "fs", "crypto", "sound", "lib", "arch/x86", "virt", "block"}

func (p *planner) kernelModules(n int, budget int64) {
	base := "usr/lib/modules/6.6.58/kernel"
	trees := make([]*tree, len(kmodTop))
	for i, t := range kmodTop {
		trees[i] = p.newTree(path.Join(base, t), 4, 14, nil)
	}
	sizes := p.sizes(n, budget, 0.9, 2<<10)
	var names []string
	for _, size := range sizes {
		t := trees[zipf(p.r, len(trees))]
		dir := t.pick()
		name := p.word() + "_" + p.word()
		if p.r.IntN(2) == 0 {
			name = p.word()
		}
		pth := p.unique(dir, name, ".ko")
		p.file(pth, cKmod, size, 0o644, "linux")
		names = append(names, strings.TrimPrefix(pth, "usr/lib/modules/6.6.58/"))
	}
	dep := max(int64(len(names))*60, 1024)
	for _, f := range []string{"modules.dep", "modules.alias", "modules.symbols", "modules.order", "modules.builtin"} {
		p.text("usr/lib/modules/6.6.58/"+f, sPlain, dep/2+p.r.Int64N(dep), 0o644, "linux")
	}
	for _, f := range []string{"modules.dep.bin", "modules.alias.bin", "modules.symbols.bin"} {
		p.file("usr/lib/modules/6.6.58/"+f, cBinData, dep/2, 0o644, "linux")
	}
}

func (p *planner) python(n int, budget int64) {
	root := "usr/lib/python3.11"
	trees := []*tree{p.newTree(root, 2, 20, nil)}
	tops := []string{"site-packages/yaml", "site-packages/requests", "site-packages/urllib3", "site-packages/six",
		"site-packages/pip/_internal", "site-packages/setuptools", "encodings", "email", "json", "asyncio",
		"concurrent/futures", "xml/etree", "http", "urllib", "importlib/metadata", "unittest", "logging", "ctypes"}
	pkgOf := map[string]string{}
	for _, t := range tops {
		trees = append(trees, p.newTree(path.Join(root, t), 3, 16, nil))
		pkg := "python3"
		if strings.HasPrefix(t, "site-packages/") {
			pkg = "python-" + strings.SplitN(strings.TrimPrefix(t, "site-packages/"), "/", 2)[0]
		}
		pkgOf[path.Join(root, t)] = pkg
	}
	half := max(1, n/2)
	sizes := p.sizes(half, budget*2/3, 1.0, 200)
	for _, size := range sizes {
		ti := zipf(p.r, len(trees))
		t := trees[ti]
		dir := t.pick()
		pkg := "python3"
		if ti > 0 {
			pkg = pkgOf[t.dirs[0]]
		}
		name := p.word()
		if p.r.IntN(3) == 0 {
			name += "_" + p.word()
		}
		pth := p.unique(dir, name, ".py")
		p.text(pth, sPython, size, 0o644, pkg)
		base := strings.TrimSuffix(path.Base(pth), ".py")
		pyc := path.Join(dir, "__pycache__", base+".cpython-311.pyc")
		if !p.used[pyc] {
			p.file(pyc, cBinData, size/2+int64(p.r.IntN(512)), 0o644, pkg)
		}
	}
}

type textRoot struct {
	root   string
	st     style
	depth  int
	weight int
	pkg    string // empty: pick per directory
	ext    string
}

var textRoots = []textRoot{
	{"etc", sConfig, 3, 14, "", ".conf"},
	{"usr/share", sPlain, 4, 16, "", ""},
	{"usr/lib/systemd/system", sUnit, 1, 8, "systemd", ".service"},
	{"usr/lib/udev/rules.d", sRules, 0, 3, "systemd", ".rules"},
	{"usr/share/bash-completion/completions", sShell, 0, 6, "bash-completion", ""},
	{"usr/lib/perl5/5.36.0", sPerl, 4, 10, "perl", ".pm"},
	{"usr/libexec", sShell, 2, 4, "", ".sh"},
	{"usr/share/ca-certificates/mozilla", sCert, 0, 2, "ca-certificates", ".crt"},
	{"usr/lib/tmpfiles.d", sConfig, 0, 1, "systemd", ".conf"},
	{"usr/share/X11/locale", sPlain, 3, 3, "libx11", ""},
	{"usr/share/vim/vim90", sPlain, 3, 8, "vim", ".vim"},
	{"usr/share/git-core/templates", sShell, 2, 1, "git", ".sample"},
}

func (p *planner) textFiles(n int, budget int64) {
	var wsum int
	for _, t := range textRoots {
		wsum += t.weight
	}
	trees := make([]*tree, len(textRoots))
	for i, t := range textRoots {
		trees[i] = p.newTree(t.root, t.depth, 12, nil)
	}
	dirPkg := map[string]string{}
	sizes := p.sizes(n, budget, 1.2, 64)
	for _, size := range sizes {
		k := p.r.IntN(wsum)
		i := 0
		for ; k >= textRoots[i].weight; i++ {
			k -= textRoots[i].weight
		}
		tr := textRoots[i]
		dir := trees[i].pick()
		pkg := tr.pkg
		if pkg == "" {
			top := dir
			if rel := strings.TrimPrefix(dir, tr.root+"/"); rel != dir {
				top = tr.root + "/" + strings.SplitN(rel, "/", 2)[0]
			}
			if dirPkg[top] == "" {
				dirPkg[top] = p.pkg()
			}
			pkg = dirPkg[top]
		}
		ext := tr.ext
		if tr.root == "usr/share" && p.r.IntN(3) == 0 {
			ext = []string{".txt", ".xml", ".json", ".ids", ".conf"}[p.r.IntN(5)]
		}
		name := p.word()
		if p.r.IntN(2) == 0 {
			name += "-" + p.word()
		}
		mode := uint32(0o644)
		if tr.st == sShell && tr.root != "usr/share/bash-completion/completions" {
			mode = 0o755
		}
		p.text(p.unique(dir, name, ext), tr.st, size, mode, pkg)
	}
	p.text("usr/share/hwdata/pci.ids", sPlain, max(budget/40, 4096), 0o644, "hwdata")
	p.text("usr/share/hwdata/usb.ids", sPlain, max(budget/120, 4096), 0o644, "hwdata")
}

var zoneRegions = []string{"Africa", "America", "Antarctica", "Asia", "Atlantic", "Australia", "Europe", "Indian", "Pacific", "Etc"}

func (p *planner) binData(n int, budget int64) {
	sizes := p.sizes(n, budget, 0.8, 100)
	zone := p.newTree("usr/share/zoneinfo", 1, 60, func() string { return zoneRegions[p.r.IntN(len(zoneRegions))] })
	termi := p.newTree("usr/share/terminfo", 1, 40, func() string { return string(rune('a' + p.r.IntN(26))) })
	langs := []string{"de", "fr", "es", "it", "ja", "ko", "pt_BR", "ru", "zh_CN", "zh_TW", "pl", "nl", "sv", "cs", "uk", "tr"}
	p.file("usr/share/zoneinfo/Etc/UTC", cBinData, 114, 0o644, "tzdata")
	for i, size := range sizes {
		switch i % 3 {
		case 0:
			dir := zone.pick()
			name := strings.ToUpper(p.word()[:1]) + p.word()[1:]
			p.file(p.unique(dir, name, ""), cBinData, min(size, 4<<10), 0o644, "tzdata")
		case 1:
			dir := termi.pick()
			p.file(p.unique(dir, path.Base(dir)+p.word(), ""), cBinData, min(size, 4<<10), 0o644, "ncurses")
		default:
			pkg := p.pkg()
			dir := path.Join("usr/share/locale", langs[p.r.IntN(len(langs))], "LC_MESSAGES")
			p.file(p.unique(dir, pkg, ".mo"), cBinData, size*3, 0o644, pkg)
		}
	}
}

func (p *planner) firmware(n int, budget int64) {
	t := p.newTree("usr/lib/firmware", 2, 6, nil)
	for _, size := range p.sizes(n, budget, 1.0, 16<<10) {
		p.file(p.unique(t.pick(), p.word(), ".bin"), cFirmware, size, 0o644, "linux-firmware")
	}
}

func (p *planner) misc() {
	// Buildroot's target-finalize leaves a few empty directories and files.
	for _, d := range []string{"var/lib/containerd", "var/lib/docker", "var/lib/cni", "etc/ssl/certs", "usr/share/udhcpc", "etc/systemd/network"} {
		p.mkdir(d, 0o755)
	}
	p.text("usr/share/udhcpc/default.script", sShell, 3<<10, 0o755, "busybox")
	p.file("etc/ld.so.cache", cBinData, 24<<10, 0o644, "glibc")
}

// ---------------------------------------------------------------------------
// Writing.

func (p *planner) write(out, pkgList string, mtime time.Time, jobs int) error {
	if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s exists and is not empty", out)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	// Directories, parents first.
	dirs := make([]string, 0, len(p.dirs))
	for d := range p.dirs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		if err := os.Mkdir(filepath.Join(out, d), 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return err
		}
	}
	// Regular files in parallel, biggest first so that the workers finish
	// together.
	var files []*entry
	for _, e := range p.entries {
		if e.kind == kFile {
			files = append(files, e)
		}
	}
	sort.SliceStable(files, func(i, j int) bool { return files[i].size > files[j].size })
	work := make(chan *entry)
	errc := make(chan error, jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGen()
			for e := range work {
				if err := g.writeFile(filepath.Join(out, e.path), e, mtime); err != nil {
					errc <- err
					for range work {
					}
					return
				}
			}
		}()
	}
	for _, e := range files {
		work <- e
	}
	close(work)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return err
	}
	ts := []unix.Timespec{unix.NsecToTimespec(mtime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	for _, e := range p.entries {
		full := filepath.Join(out, e.path)
		switch e.kind {
		case kSymlink:
			if err := os.Symlink(e.target, full); err != nil {
				return err
			}
			if err := unix.UtimesNanoAt(unix.AT_FDCWD, full, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return fmt.Errorf("%s: %w", full, err)
			}
		case kHardlink:
			if err := os.Link(filepath.Join(out, e.target), full); err != nil {
				return err
			}
		}
	}
	// Directory modes and times last, deepest first, so that creating
	// entries does not move a directory's mtime after it was set.
	sort.Slice(dirs, func(i, j int) bool { return dirs[i] > dirs[j] })
	for _, d := range append(dirs, ".") {
		full := filepath.Join(out, d)
		mode := p.dirs[d]
		if d == "." {
			mode = 0o755
		}
		if err := unix.Chmod(full, mode); err != nil {
			return fmt.Errorf("chmod %s: %w", full, err)
		}
		if err := os.Chtimes(full, mtime, mtime); err != nil {
			return err
		}
	}
	return p.writePackageList(pkgList)
}

// writePackageList writes Buildroot's build/packages-file-list.txt: one
// "<package>,./<path>" line per file a package installed, packages in build
// order (here: order of first appearance), paths in install order.
func (p *planner) writePackageList(name string) error {
	byPkg := map[string][]string{}
	var order []string
	for _, e := range p.entries {
		if _, ok := byPkg[e.pkg]; !ok {
			order = append(order, e.pkg)
		}
		byPkg[e.pkg] = append(byPkg[e.pkg], e.path)
	}
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for _, pkg := range order {
		for _, pth := range byPkg[pkg] {
			fmt.Fprintf(w, "%s,./%s\n", pkg, pth)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ---------------------------------------------------------------------------
// Content generation. Each file's bytes come from its own seed only.

const chunk = 1 << 20

type gen struct {
	r   *rand.Rand
	buf []byte
	w   *bufio.Writer
}

func newGen() *gen {
	return &gen{r: rand.New(rand.NewPCG(0, 0)), buf: make([]byte, 0, chunk+4096), w: bufio.NewWriterSize(nil, 256<<10)}
}

func (g *gen) writeFile(full string, e *entry, mtime time.Time) error {
	f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	g.w.Reset(f)
	g.r = rand.New(rand.NewPCG(e.seed, uint64(len(e.path))))
	err = g.content(e)
	if err == nil {
		err = g.w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = unix.Chmod(full, e.mode)
	}
	if err == nil {
		err = os.Chtimes(full, mtime, mtime)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", full, err)
	}
	return nil
}

// section is one stretch of a file produced by one generator.
type section struct {
	fill func(dst []byte, n int) []byte
	frac float64
}

func (g *gen) content(e *entry) error {
	switch e.content {
	case cFixed:
		_, err := g.w.WriteString(e.fixed)
		return err
	case cText:
		return g.emit(e.size, section{g.textFiller(e.style), 1})
	case cGoBin:
		return g.emitELF(e.size, []section{
			{g.code, 0.42},
			{g.rodata, 0.16},
			{g.gopclntab, 0.22},
			{g.symbols, 0.06},
			{g.data, 0.10},
			{g.zeros, 0.04},
		})
	case cELF, cSharedLib:
		return g.emitELF(e.size, []section{
			{g.code, 0.62},
			{g.rodata, 0.13},
			{g.symbols, 0.10},
			{g.code, 0.05}, // .eh_frame and friends: table-like
			{g.data, 0.07},
			{g.zeros, 0.03},
		})
	case cKmod:
		return g.emitELF(e.size, []section{
			{g.code, 0.55},
			{g.rodata, 0.15},
			{g.symbols, 0.22},
			{g.data, 0.05},
			{g.zeros, 0.03},
		})
	case cBinData:
		return g.emit(e.size, section{g.data, 0.5}, section{g.symbols, 0.3}, section{g.code, 0.2})
	case cFirmware:
		return g.emit(e.size, section{g.random, 0.85}, section{g.zeros, 0.05}, section{g.code, 0.10})
	}
	return fmt.Errorf("unknown content %d", e.content)
}

// emit writes size bytes made of the sections in turn, each its share.
func (g *gen) emit(size int64, secs ...section) error {
	var done int64
	for i, s := range secs {
		n := int64(float64(size) * s.frac)
		if i == len(secs)-1 {
			n = size - done
		}
		if err := g.run(s.fill, n); err != nil {
			return err
		}
		done += n
	}
	return nil
}

func (g *gen) run(fill func([]byte, int) []byte, n int64) error {
	for n > 0 {
		k := int(min(n, chunk))
		g.buf = fill(g.buf[:0], k)[:k]
		if _, err := g.w.Write(g.buf); err != nil {
			return err
		}
		n -= int64(k)
	}
	return nil
}

func (g *gen) emitELF(size int64, secs []section) error {
	hdr := elfHeader(g.r)
	if size <= int64(len(hdr)) {
		_, err := g.w.Write(hdr[:size])
		return err
	}
	if _, err := g.w.Write(hdr); err != nil {
		return err
	}
	return g.emit(size-int64(len(hdr)), secs...)
}

func elfHeader(r *rand.Rand) []byte {
	h := make([]byte, 64+56*4)
	copy(h, "\x7fELF\x02\x01\x01\x00")
	h[16], h[18] = 2, 0x3e // ET_EXEC, x86-64
	h[20] = 1
	for i := 24; i < 48; i++ {
		if r.IntN(3) == 0 {
			h[i] = byte(r.Uint32())
		}
	}
	h[52], h[54], h[56], h[58], h[60] = 64, 56, 4, 64, 30
	for ph := 0; ph < 4; ph++ {
		o := 64 + 56*ph
		h[o] = byte(ph + 1)
		h[o+4] = 5
		for i := 8; i < 56; i += 8 {
			h[o+i+1] = byte(r.Uint32() >> 8)
			h[o+i+2] = byte(r.IntN(64))
		}
	}
	return h
}

// Instruction-like snippets shared by every file: real machine code reuses a
// limited set of opcode sequences (prologues, loads, calls, compares), with
// operands that vary.
var snippets = func() [][]byte {
	r := rand.New(rand.NewPCG(42, 42))
	s := make([][]byte, 512)
	for i := range s {
		b := make([]byte, 2+r.IntN(6))
		for j := range b {
			b[j] = byte(r.Uint32())
		}
		s[i] = b
	}
	return s
}()

// idioms are longer runs of snippets that recur as a whole: function
// prologues and epilogues, inlined helpers, call sequences.
var idioms = func() [][]byte {
	r := rand.New(rand.NewPCG(43, 43))
	s := make([][]byte, 2048)
	for i := range s {
		var b []byte
		for k := 2 + r.IntN(6); k > 0; k-- {
			b = append(b, snippets[zipf(r, len(snippets))]...)
		}
		s[i] = b
	}
	return s
}()

// code: opcode snippets and whole idioms chosen with a skewed distribution,
// operands and displacements partly random.
func (g *gen) code(dst []byte, n int) []byte {
	r := g.r
	for len(dst) < n {
		x := r.Uint64()
		if x&0x100 == 0 {
			dst = append(dst, idioms[zipf(r, len(idioms))]...)
		} else {
			dst = append(dst, snippets[zipf(r, len(snippets))]...)
		}
		switch x & 15 {
		case 0, 1, 2:
			dst = append(dst, byte(x>>16))
		case 3:
			dst = append(dst, byte(x>>16), byte(x>>24), byte(x>>32), byte(x>>40))
		case 4, 5:
			dst = append(dst, byte(x>>16), byte(x>>24)&0x0f, 0, 0)
		}
	}
	return dst
}

// rodata: string constants and format strings, with some tables.
func (g *gen) rodata(dst []byte, n int) []byte {
	r := g.r
	for len(dst) < n {
		switch r.IntN(6) {
		case 0:
			dst = g.appendInts(dst, 8+r.IntN(24))
		case 1:
			dst = append(dst, "%s: "...)
			dst = g.appendWords(dst, 2+r.IntN(6), ' ')
			dst = append(dst, ": %v\n"...)
			dst = append(dst, 0)
		default:
			dst = g.appendWords(dst, 1+r.IntN(8), ' ')
			dst = append(dst, 0)
		}
	}
	return dst
}

// gopclntab: Go's function and line tables: varint-packed deltas, very
// regular, plus file paths.
func (g *gen) gopclntab(dst []byte, n int) []byte {
	r := g.r
	for len(dst) < n {
		switch r.IntN(8) {
		case 0:
			dst = append(dst, "github.com/"...)
			dst = g.appendWords(dst, 3+r.IntN(3), '/')
			dst = append(dst, ".go"...)
			dst = append(dst, 0)
		case 1:
			dst = g.appendWords(dst, 1+r.IntN(2), '/')
			dst = append(dst, ".(*"...)
			dst = g.appendPhrase(dst, '_')
			dst = append(dst, ")."...)
			dst = g.appendPhrase(dst, '_')
			dst = append(dst, 0)
		default:
			for k := 0; k < 8; k++ {
				v := r.IntN(r.IntN(48) + 1)
				dst = append(dst, byte(v), byte(r.IntN(r.IntN(3)+1)))
			}
		}
	}
	return dst
}

// symbols: .dynstr/.symtab: identifiers made of words, each with a fixed-size
// symbol record.
func (g *gen) symbols(dst []byte, n int) []byte {
	r := g.r
	prefixes := []string{"", "_", "__", "runtime.", "sync.(*Mutex).", "g_", "pthread_", "ssl_", "nf_", "bpf_", "xt_"}
	for len(dst) < n {
		dst = append(dst, prefixes[zipf(r, len(prefixes))]...)
		dst = g.appendWords(dst, 1+r.IntN(3), '_')
		dst = append(dst, 0)
		if r.IntN(2) == 0 {
			x := r.Uint32()
			dst = append(dst, 0x12, 0, byte(r.IntN(20)), 0, byte(x), byte(x>>8), byte(x>>16), 0, 0, 0, 0, 0, byte(r.IntN(255)), 0, 0, 0)
		}
	}
	return dst
}

// data: pointers into a few regions (high bytes shared) and small integers.
func (g *gen) data(dst []byte, n int) []byte {
	r := g.r
	for len(dst) < n {
		switch r.IntN(6) {
		case 0, 4, 5:
			dst = append(dst, 0, 0, 0, 0, 0, 0, 0, 0)
		case 1:
			x := r.Uint32()
			dst = append(dst, byte(x)&0xf8, byte(x>>8), byte(x>>16)&0x1f, 0x40, 0, 0, 0, 0)
		case 2:
			dst = append(dst, byte(r.IntN(64)), 0, 0, 0, byte(r.IntN(4)), 0, 0, 0)
		default:
			x := r.Uint64()
			dst = append(dst, byte(x), byte(x>>8), byte(x>>16), byte(x>>24), byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
		}
	}
	return dst
}

func (g *gen) zeros(dst []byte, n int) []byte {
	return append(dst, make([]byte, n)...)
}

func (g *gen) random(dst []byte, n int) []byte {
	for len(dst) < n {
		x := g.r.Uint64()
		dst = append(dst, byte(x), byte(x>>8), byte(x>>16), byte(x>>24), byte(x>>32), byte(x>>40), byte(x>>48), byte(x>>56))
	}
	return dst
}

func (g *gen) appendInts(dst []byte, k int) []byte {
	for i := 0; i < k; i++ {
		v := g.r.IntN(g.r.IntN(1<<10) + 1)
		dst = append(dst, byte(v), byte(v>>8), 0, 0)
	}
	return dst
}

func (g *gen) word() string { return words[zipf(g.r, len(words))] }

// phrases are word sequences that recur, as messages, option names and
// identifiers do in real files; most generated text is drawn from them.
var phrases = func() []string {
	r := rand.New(rand.NewPCG(44, 44))
	s := make([]string, 4096)
	for i := range s {
		var b strings.Builder
		for k := 1 + r.IntN(5); k > 0; k-- {
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[zipf(r, len(words))])
		}
		s[i] = b.String()
	}
	return s
}()

// appendPhrase appends a recurring phrase with its spaces replaced by sep.
func (g *gen) appendPhrase(dst []byte, sep byte) []byte {
	ph := phrases[g.r.IntN(zipf(g.r, len(phrases))+1)]
	start := len(dst)
	dst = append(dst, ph...)
	if sep != ' ' {
		for i := start; i < len(dst); i++ {
			if dst[i] == ' ' {
				dst[i] = sep
			}
		}
	}
	return dst
}

// appendWords appends about k words joined by sep: mostly recurring
// phrases, sometimes a fresh word.
func (g *gen) appendWords(dst []byte, k int, sep byte) []byte {
	for i := 0; i < k; {
		if i > 0 {
			dst = append(dst, sep)
		}
		if g.r.IntN(4) == 0 {
			dst = append(dst, g.word()...)
			i++
			continue
		}
		start := len(dst)
		dst = g.appendPhrase(dst, sep)
		i += 1 + bytes.Count(dst[start:], []byte{sep})
	}
	return dst
}

// textFiller returns a generator of lines in the given style.
func (g *gen) textFiller(st style) func([]byte, int) []byte {
	return func(dst []byte, n int) []byte {
		r := g.r
		for len(dst) < n {
			switch st {
			case sConfig:
				switch r.IntN(8) {
				case 0:
					dst = append(dst, "# "...)
					dst = g.appendWords(dst, 3+r.IntN(10), ' ')
				case 1:
					dst = append(dst, '[')
					dst = append(dst, g.word()...)
					dst = append(dst, ']')
				case 2:
					dst = append(dst, '\n')
					continue
				default:
					if r.IntN(3) == 0 {
						dst = append(dst, '#')
					}
					dst = g.appendWords(dst, 1+r.IntN(2), '_')
					dst = append(dst, " = "...)
					switch r.IntN(4) {
					case 0:
						dst = strconv.AppendInt(dst, int64(r.IntN(r.IntN(10000)+1)), 10)
					case 1:
						dst = append(dst, '/')
						dst = g.appendWords(dst, 2+r.IntN(3), '/')
					case 2:
						dst = append(dst, []string{"yes", "no", "true", "false", "auto", "none"}[r.IntN(6)]...)
					default:
						dst = g.appendWords(dst, 1+r.IntN(3), ' ')
					}
				}
			case sShell:
				switch r.IntN(7) {
				case 0:
					dst = append(dst, "# "...)
					dst = g.appendWords(dst, 3+r.IntN(9), ' ')
				case 1:
					dst = append(dst, "if [ -x /usr/bin/"...)
					dst = append(dst, g.word()...)
					dst = append(dst, " ]; then"...)
				case 2:
					dst = append(dst, "fi"...)
				case 3:
					dst = append(dst, "\t"...)
					dst = append(dst, strings.ToUpper(g.word())...)
					dst = append(dst, "=\"${"...)
					dst = append(dst, strings.ToUpper(g.word())...)
					dst = append(dst, ":-"...)
					dst = append(dst, g.word()...)
					dst = append(dst, "}\""...)
				default:
					dst = append(dst, "\t"...)
					dst = append(dst, g.word()...)
					for k := r.IntN(4); k >= 0; k-- {
						dst = append(dst, " --"...)
						dst = g.appendWords(dst, 1+r.IntN(2), '-')
					}
					dst = append(dst, " \"$"...)
					dst = append(dst, g.word()...)
					dst = append(dst, "\" || return 1"...)
				}
			case sUnit:
				switch r.IntN(6) {
				case 0:
					dst = append(dst, []string{"\n[Unit]", "\n[Service]", "\n[Install]"}[r.IntN(3)]...)
				case 1:
					dst = append(dst, "Description="...)
					dst = g.appendWords(dst, 2+r.IntN(5), ' ')
				default:
					dst = append(dst, []string{"ExecStart=/usr/bin/", "After=", "Wants=", "WantedBy=", "Requires=", "ExecStartPre=-/usr/sbin/"}[r.IntN(6)]...)
					dst = g.appendWords(dst, 1+r.IntN(2), '-')
					if r.IntN(2) == 0 {
						dst = append(dst, ".service"...)
					}
				}
			case sRules:
				dst = append(dst, "SUBSYSTEM==\""...)
				dst = append(dst, g.word()...)
				dst = append(dst, "\", KERNEL==\""...)
				dst = append(dst, g.word()...)
				dst = append(dst, "*\", ATTR{"...)
				dst = append(dst, g.word()...)
				dst = append(dst, "}==\""...)
				dst = strconv.AppendInt(dst, int64(r.IntN(0x10000)), 16)
				dst = append(dst, "\", "...)
				dst = append(dst, []string{"MODE=\"0660\"", "GROUP=\"disk\"", "TAG+=\"systemd\"", "RUN+=\"/usr/lib/udev/"}[r.IntN(4)]...)
			case sPython, sPerl:
				indent := "    "[:4*r.IntN(2)]
				if st == sPerl {
					indent = "\t"[:r.IntN(2)]
				}
				dst = append(dst, indent...)
				switch r.IntN(9) {
				case 0:
					if st == sPython {
						dst = append(dst, "def "...)
					} else {
						dst = append(dst, "sub "...)
					}
					dst = g.appendWords(dst, 1+r.IntN(3), '_')
					if st == sPython {
						dst = append(dst, "(self, "...)
						dst = append(dst, g.word()...)
						dst = append(dst, ", "...)
						dst = append(dst, g.word()...)
						dst = append(dst, "=None):"...)
					} else {
						dst = append(dst, " {"...)
					}
				case 1:
					if st == sPython {
						dst = append(dst, "    \"\"\""...)
						dst = g.appendWords(dst, 4+r.IntN(10), ' ')
						dst = append(dst, ".\"\"\""...)
					} else {
						dst = append(dst, "# "...)
						dst = g.appendWords(dst, 4+r.IntN(10), ' ')
					}
				case 2:
					if st == sPython {
						dst = append(dst, "from ."...)
						dst = append(dst, g.word()...)
						dst = append(dst, " import "...)
					} else {
						dst = append(dst, "use "...)
						dst = append(dst, strings.ToUpper(g.word()[:1])...)
						dst = append(dst, g.word()...)
						dst = append(dst, "::"...)
					}
					dst = append(dst, g.word()...)
					if st == sPerl {
						dst = append(dst, ';')
					}
				case 3:
					dst = append(dst, '\n')
					continue
				default:
					dst = append(dst, "    "...)
					if st == sPython {
						dst = append(dst, []string{"return self.", "if not self.", "self._", "raise ValueError(self.", ""}[r.IntN(5)]...)
					} else {
						dst = append(dst, []string{"return $self->", "my $", "if ($", "$self->{"}[r.IntN(4)]...)
					}
					dst = g.appendWords(dst, 1+r.IntN(2), '_')
					dst = append(dst, '(')
					dst = g.appendWords(dst, r.IntN(3), ',')
					dst = append(dst, ')')
					if st == sPerl {
						dst = append(dst, ';')
					}
				}
			case sCert:
				if r.IntN(20) == 0 {
					dst = append(dst, "-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----"...)
				} else {
					for k := 0; k < 64; k++ {
						dst = append(dst, b64[r.IntN(64)])
					}
				}
			default:
				dst = g.appendWords(dst, 5+r.IntN(12), ' ')
				if r.IntN(4) == 0 {
					dst = append(dst, '.')
				}
			}
			dst = append(dst, '\n')
		}
		return dst
	}
}

const b64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// words is the vocabulary of every generated name and text, most frequent
// first (zipf favours the start).
var words = strings.Fields(`the of and to in is for on that with be by this are as it from or an not
default file path device config system service network user name value set if type use must when
will can all data log time support option enable disable kernel module driver version list error
buffer size interface address port server client socket mode state start stop run load read write
open close init exit check status info debug warn level format output input source target object
class method function return call handler event queue thread process memory cache table index key
map entry node link route bridge filter chain rule policy match packet frame header payload stream
channel message request response timeout retry limit count length offset block page sector volume
disk partition mount root home boot image archive package build install update remove create delete
copy move rename sync flush lock unlock wait signal notify report trace dump parse encode decode
compress extract verify sign hash digest cipher key cert trust store secure auth token session
cookie cgroup namespace container runtime pod sandbox snapshot layer registry manifest digest label
annotation plugin extension hook callback monitor metric counter gauge sample rate window batch job
task worker pool scheduler priority weight quota share resource capacity usage free used total avail
host guest virtual machine cpu core numa irq dma pci usb scsi sata nvme net eth wlan vlan tun tap veth
ipv4 ipv6 tcp udp icp dns dhcp ntp ssh http https tls ssl proxy gateway subnet mask prefix range pool
local remote global static dynamic shared private public internal external primary secondary backup
restore recover repair fix patch upgrade downgrade migrate convert transform render display screen
font color theme layout widget window panel button menu dialog text line word char byte bit flag
bool int long short float double string array slice vector matrix tree graph heap stack list set
first last next prev begin end head tail top bottom left right up down inner outer before after
new old current previous original final temp cache spool tmp var etc usr lib bin sbin opt srv sys
proc dev run media mnt alpha beta gamma delta omega linux unix posix gnu bsd arm x86 amd64 riscv
`)
