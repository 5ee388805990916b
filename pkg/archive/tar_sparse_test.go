package archive

import (
	"archive/tar"
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// oldGNUHeader is a header block with an old GNU sparse map: pairs at 386,
// then extension blocks of 21 pairs each.
func oldGNUHeader(pairs [][2]string, ext ...[][2]string) []byte {
	put := func(b []byte, at int, ps [][2]string) {
		for i, p := range ps {
			copy(b[at+24*i:], p[0])
			copy(b[at+24*i+12:], p[1])
		}
	}
	b := make([]byte, tarBlockSize)
	put(b, 386, pairs)
	if len(ext) > 0 {
		b[482] = 1
	}
	for i, e := range ext {
		blk := make([]byte, tarBlockSize)
		put(blk, 0, e)
		if i < len(ext)-1 {
			blk[504] = 1
		}
		b = append(b, blk...)
	}
	return b
}

func TestSparseMap(t *testing.T) {
	block := func(s string) []byte { return append(make([]byte, tarBlockSize), padBlock([]byte(s))...) }
	tests := []struct {
		name string
		kind string
		recs map[string]string
		rec  []byte
		want []SparseSegment
	}{
		{name: "pax 1.0", kind: "pax-1.0", rec: block("2\n0\n5\n4096\n3\n"), want: []SparseSegment{{0, 5}, {4096, 3}}},
		{name: "pax 1.0, none", kind: "pax-1.0", rec: block("0\n"), want: []SparseSegment{}},
		{name: "pax 1.0, short", kind: "pax-1.0", rec: block("2\n0\n5\n4096\n")},
		{name: "pax 1.0, count past the data", kind: "pax-1.0", rec: block("999999999\n0\n")},
		{name: "pax 1.0, not a number", kind: "pax-1.0", rec: block("1\n0\nx\n")},
		{name: "pax 1.0, negative", kind: "pax-1.0", rec: block("-1\n")},
		{name: "pax 0.1", kind: "pax-0.1", recs: map[string]string{"GNU.sparse.map": "0,5,4096,3"}, want: []SparseSegment{{0, 5}, {4096, 3}}},
		{name: "pax 0.1, odd", kind: "pax-0.1", recs: map[string]string{"GNU.sparse.map": "0,5,4096"}},
		{name: "pax 0.0, bad", kind: "pax-0.0", recs: map[string]string{"GNU.sparse.map": "0,five"}},
		{name: "old gnu", kind: "gnu", rec: oldGNUHeader([][2]string{{"0", "5"}, {"10000", "3"}}), want: []SparseSegment{{0, 5}, {0o10000, 3}}},
		{
			name: "old gnu, extension blocks", kind: "gnu",
			rec:  oldGNUHeader([][2]string{{"0", "1"}, {"10", "1"}, {"20", "1"}, {"30", "1"}}, [][2]string{{"40", "1"}}, [][2]string{{"50", "1"}}),
			want: []SparseSegment{{0, 1}, {0o10, 1}, {0o20, 1}, {0o30, 1}, {0o40, 1}, {0o50, 1}},
		},
		{name: "old gnu, extension missing", kind: "gnu", rec: oldGNUHeader(nil, [][2]string{{"40", "1"}})[:tarBlockSize]},
		{name: "old gnu, bad number", kind: "gnu", rec: oldGNUHeader([][2]string{{"9", "1"}})},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sparseMap(tc.kind, &tar.Header{PAXRecords: tc.recs}, tc.rec)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("map (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidSparseMap(t *testing.T) {
	tests := []struct {
		m            []SparseSegment
		stored, size int64
		want         bool
	}{
		{[]SparseSegment{{0, 5}, {10, 5}}, 10, 20, true},
		{[]SparseSegment{{0, 5}, {10, 5}, {20, 0}}, 10, 20, true},
		{[]SparseSegment{}, 0, 20, true},
		{nil, 0, 20, false},
		{[]SparseSegment{{10, 5}, {0, 5}}, 10, 20, false}, // out of order
		{[]SparseSegment{{0, 5}, {4, 5}}, 10, 20, false},  // overlapping
		{[]SparseSegment{{18, 5}}, 5, 20, false},          // past the end
		{[]SparseSegment{{0, 5}}, 6, 20, false},           // not what is stored
		{[]SparseSegment{{0, -1}}, -1, 20, false},
		{[]SparseSegment{{1 << 62, 1 << 62}}, 1 << 62, 1 << 62, false},
	}
	for _, tc := range tests {
		if got := validSparseMap(tc.m, tc.stored, tc.size); got != tc.want {
			t.Errorf("validSparseMap(%v, %d, %d) = %v, want %v", tc.m, tc.stored, tc.size, got, tc.want)
		}
	}
}

// sparseEntry is a sparse entry as a TarReader returns it.
func sparseEntry(name string, size int64, m []SparseSegment) *Entry {
	var stored int64
	for _, s := range m {
		stored += s.Length
	}
	h := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: size, Format: tar.FormatPAX}
	return &Entry{Name: name, Type: TypeRegular, Mode: 0o644, Size: size, Nlink: 1,
		Format: &TarFormat{Header: h, Sparse: &TarSparse{Format: "pax-1.0", Stored: stored, Map: m}}}
}

func TestTarWriterSparse(t *testing.T) {
	m := []SparseSegment{{0, 3}, {8192, 4}}
	data := "abc" + strings.Repeat("\x00", 8189) + "wxyz" + strings.Repeat("\x00", 100)
	t.Run("round trip", func(t *testing.T) {
		out := writeTar(t, []*Entry{sparseEntry("f", int64(len(data)), m)}, map[string]string{"f": data}, tar.FormatUnknown)
		entries, got := readTar(t, out)
		if diff := cmp.Diff(m, entries[0].Format.(*TarFormat).Sparse.Map); diff != "" {
			t.Errorf("map (-want +got):\n%s", diff)
		}
		if got["f"] != data {
			t.Errorf("data differs")
		}
	})
	for _, tc := range []struct {
		name, data, want string
	}{
		{"data in a hole", "abc" + strings.Repeat("\x00", 100) + "!" + data[104:], `tar "f": data where its sparse map has a hole`},
		{"short", data[:8000], `tar "f": 296 bytes of data missing`},
		{"long", data + "x", `tar "f": archive/tar: write too long`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := NewTarWriter(&buf, tar.FormatUnknown)
			mustDo(t, w.WriteHeader(sparseEntry("f", int64(len(data)), m)))
			_, err := w.Write([]byte(tc.data))
			if err == nil {
				err = w.Close()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	t.Run("changed size: expanded", func(t *testing.T) {
		e := sparseEntry("f", int64(len(data)), m)
		e.Size = 5
		out := writeTar(t, []*Entry{e}, map[string]string{"f": "hello"}, tar.FormatUnknown)
		entries, got := readTar(t, out)
		if entries[0].Format.(*TarFormat).Sparse != nil || got["f"] != "hello" {
			t.Errorf("read back %+v, %q", entries[0].Format.(*TarFormat).Sparse, got["f"])
		}
	})
}
