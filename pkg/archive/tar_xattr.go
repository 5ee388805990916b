package archive

import (
	"archive/tar"
	"encoding/base64"
	"fmt"
	"maps"
	"net/url"
	"strings"
)

// Extended attributes in tar are PAX records, one per attribute:
//
//   - SCHILY.xattr.NAME=VALUE, the value's bytes as they are: what GNU tar
//     --xattrs writes and reads (xattrs.c, xheader_xattr_add) and star
//     invented; bsdtar writes it too;
//   - LIBARCHIVE.xattr.NAME=VALUE, NAME %-escaped and VALUE in base64:
//     what bsdtar writes beside it and reads as well
//     (archive_read_support_format_tar.c, pax_attribute); GNU tar ignores it.
//
// POSIX ACLs are records of their own when GNU tar --acls or bsdtar write
// them (SCHILY.acl.access, .default, in text): they stay in the entry's
// PAX records, not in Xattrs, and a tree writer refuses them. GNU tar
// --xattrs stores them as the attributes they are on Linux too
// (SCHILY.xattr.system.posix_acl_access, binary): those are carried.
const (
	schilyXattr    = "SCHILY.xattr."
	libarchiveXatt = "LIBARCHIVE.xattr."
	schilyACL      = "SCHILY.acl."
)

// tarXattrs reads the extended attributes of the PAX records recs. An
// attribute both forms give with different values is refused: GNU tar
// would set one and bsdtar the other.
func tarXattrs(recs map[string]string) (map[string]string, error) {
	var x map[string]string
	set := func(k, v string) {
		if x == nil {
			x = map[string]string{}
		}
		x[k] = v
	}
	for k, v := range recs {
		if name, ok := strings.CutPrefix(k, schilyXattr); ok && name != "" {
			set(name, v)
		}
	}
	for k, v := range recs {
		esc, ok := strings.CutPrefix(k, libarchiveXatt)
		if !ok {
			continue
		}
		name, err := url.PathUnescape(esc)
		if err != nil || name == "" {
			return nil, fmt.Errorf("PAX record %q: a malformed attribute name", k)
		}
		val, err := base64.StdEncoding.WithPadding(base64.NoPadding).DecodeString(strings.TrimRight(v, "="))
		if err != nil {
			return nil, fmt.Errorf("PAX record %q: a value that is not base64", k)
		}
		if old, ok := x[name]; ok && old != string(val) {
			return nil, fmt.Errorf("extended attribute %q: SCHILY.xattr and LIBARCHIVE.xattr records differ (GNU tar sets one, bsdtar the other)", name)
		}
		set(name, string(val))
	}
	return x, nil
}

// setTarXattrs makes h's records say xattrs, replacing what they said:
// SCHILY.xattr records alone, which GNU tar and bsdtar both read.
func setTarXattrs(h *tar.Header, xattrs map[string]string) {
	maps.DeleteFunc(h.PAXRecords, func(k, _ string) bool {
		return strings.HasPrefix(k, schilyXattr) || strings.HasPrefix(k, libarchiveXatt)
	})
	h.Xattrs = nil //lint:ignore SA1019 archive/tar still merges it into the records it writes
	if len(xattrs) == 0 {
		return
	}
	if h.PAXRecords == nil {
		h.PAXRecords = map[string]string{}
	}
	for k, v := range xattrs {
		h.PAXRecords[schilyXattr+k] = v
	}
	h.Format = tar.FormatPAX
}

// tarACL returns the name of a text ACL record of h, "" when none.
func tarACL(h *tar.Header) string {
	if h == nil {
		return ""
	}
	for k := range h.PAXRecords {
		if strings.HasPrefix(k, schilyACL) {
			return k
		}
	}
	return ""
}
