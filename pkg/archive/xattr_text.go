package archive

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// CapabilityXattr is the attribute file capabilities live in.
const CapabilityXattr = "security.capability"

// XattrText is how list and diff show the value of the attribute name:
// file capabilities as getcap prints them ("cap_net_raw=ep"), printable
// text as it is, anything else "base64:" and its base64.
func XattrText(name, value string) string {
	if name == CapabilityXattr {
		if s, ok := capabilityText([]byte(value)); ok {
			return s
		}
	}
	if utf8.ValidString(value) && strings.IndexFunc(value, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return value
	}
	return "base64:" + base64.StdEncoding.EncodeToString([]byte(value))
}

// XattrsText is every attribute of x as XattrText shows it; nil for none.
func XattrsText(x map[string]string) map[string]string {
	if len(x) == 0 {
		return nil
	}
	out := make(map[string]string, len(x))
	for k, v := range x {
		out[k] = XattrText(k, v)
	}
	return out
}

// XattrsLine is x on one line, sorted: "name=value, name=value".
func XattrsLine(x map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(x)) {
		parts = append(parts, k+"="+XattrText(k, x[k]))
	}
	return strings.Join(parts, ", ")
}

// capNames are the capabilities by number (linux/capability.h).
var capNames = []string{
	"cap_chown", "cap_dac_override", "cap_dac_read_search", "cap_fowner", "cap_fsetid", "cap_kill",
	"cap_setgid", "cap_setuid", "cap_setpcap", "cap_linux_immutable", "cap_net_bind_service",
	"cap_net_broadcast", "cap_net_admin", "cap_net_raw", "cap_ipc_lock", "cap_ipc_owner",
	"cap_sys_module", "cap_sys_rawio", "cap_sys_chroot", "cap_sys_ptrace", "cap_sys_pacct",
	"cap_sys_admin", "cap_sys_boot", "cap_sys_nice", "cap_sys_resource", "cap_sys_time",
	"cap_sys_tty_config", "cap_mknod", "cap_lease", "cap_audit_write", "cap_audit_control",
	"cap_setfcap", "cap_mac_override", "cap_mac_admin", "cap_syslog", "cap_wake_alarm",
	"cap_block_suspend", "cap_audit_read", "cap_perfmon", "cap_bpf", "cap_checkpoint_restore",
}

// capabilityText reads struct vfs_ns_cap_data (linux/capability.h): a
// little-endian magic_etc (revision in the top byte, the effective flag
// in bit 0), then permitted and inheritable words, one pair for revision
// 1, two for 2 and 3, and for 3 the root uid of the namespace. Each
// capability shows the flags it has: p, i, and e when the effective flag
// is set, capabilities with the same flags grouped, as getcap prints them.
func capabilityText(b []byte) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	magic := binary.LittleEndian.Uint32(b)
	words, size := 0, 0
	switch magic & 0xff000000 {
	case 0x01000000:
		words, size = 1, 12
	case 0x02000000:
		words, size = 2, 20
	case 0x03000000:
		words, size = 2, 24
	}
	if words == 0 || len(b) != size || magic&^0xff000001 != 0 {
		return "", false
	}
	var perm, inh uint64
	for i := 0; i < words; i++ {
		perm |= uint64(binary.LittleEndian.Uint32(b[4+8*i:])) << (32 * i)
		inh |= uint64(binary.LittleEndian.Uint32(b[8+8*i:])) << (32 * i)
	}
	var groups []string
	byFlags := map[string][]string{}
	for c := 0; c < 64; c++ {
		flags := ""
		if magic&1 != 0 && (perm|inh)&(1<<c) != 0 {
			flags += "e"
		}
		if inh&(1<<c) != 0 {
			flags += "i"
		}
		if perm&(1<<c) != 0 {
			flags += "p"
		}
		if flags == "" {
			continue
		}
		name := fmt.Sprintf("cap_%d", c)
		if c < len(capNames) {
			name = capNames[c]
		}
		if byFlags[flags] == nil {
			groups = append(groups, flags)
		}
		byFlags[flags] = append(byFlags[flags], name)
	}
	var parts []string
	for _, f := range groups {
		parts = append(parts, strings.Join(byFlags[f], ",")+"="+f)
	}
	if len(parts) == 0 {
		parts = append(parts, "=")
	}
	if size == 24 {
		if root := binary.LittleEndian.Uint32(b[20:]); root != 0 {
			parts = append(parts, fmt.Sprintf("[rootid=%d]", root))
		}
	}
	return strings.Join(parts, " "), true
}
