package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

func init() {
	register(&command{name: "list", summary: "list every entry of an archive or tree, losslessly", run: runList})
}

const listHelp = `
Prints one line per entry, like 'bsdtar -tv' or 'cpio -itv' but complete: type
and mode (setuid, setgid, sticky), uid/gid, size or device numbers, mtime (UTC),
name exactly as stored, symlink target, and hard-link group (inode and link
count). cpio member boundaries (TRAILER!!!) are shown, since several members
may be concatenated. The first line names the detected format and compression
(of the first segment, for an initrd of several: each later one starts with a
line naming its compression and offset, and the last lines say where each
segment was, its length, compression and entries).
A tar PAX global header is shown as a line of its own before the entries it
applies to, and an entry that took a field from it says which; a sparse file
shows its expanded size and how many bytes the archive stores.
An ISO 9660 image (minikube's .iso) lists its own files first, as a section of
their own, then the entries of the initrd its boot configuration names, with
the initrd's path in the image and the configuration line that names it.
`

// listSchema names list --json's JSON Schema, docs/schema/list.json. Any
// change to listHead's or listEntry's fields changes it.
const listSchema = "rootfs-trim/list/v2"

// listHead is what list --json says before its entries.
type listHead struct {
	Schema      string `json:"schema"`
	Path        string `json:"path"`
	Format      string `json:"format"`
	Compression string `json:"compression"`
	// Image: what holds the entries (container.Description): an ISO
	// image's own files and where the initrd is in it, or an image's
	// layers.
	Image *container.Description `json:"image,omitempty"`
}

// listImageText prints the image's own files as a section, then the
// heading of the initrd's entries.
func listImageText(w io.Writer, in *container.Input, img *container.Description) {
	fmt.Fprintf(w, "# %s: %s image, volume %s; boot configuration %s\n", names.Quote(in.Path), img.Container,
		names.Quote(img.VolumeID), names.Text(strings.Join(img.BootConfigs, ", ")))
	fmt.Fprintln(w, "## the image's files")
	for _, f := range img.Files {
		line := fmt.Sprintf("%s %5d/%-5d %10d %s %s", f.Mode, f.UID, f.GID, f.Size, strings.Replace(strings.TrimSuffix(f.MTime, "Z"), "T", " ", 1), names.Quote(f.Path))
		if f.Linkname != "" {
			line += " -> " + names.Quote(f.Linkname)
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "## initrd %s (named at %s): %s\n", names.Quote(strings.Join(img.Initrd, " ")), names.Text(img.NamedAt), in.Format.Format)
}

// listEntry is the stable JSON form of an entry.
type listEntry struct {
	Name     string `json:"name"`
	NameB64  string `json:"name_b64,omitempty"` // only when Name is not UTF-8
	Type     string `json:"type"`
	Mode     string `json:"mode"`
	UID      int    `json:"uid"`
	GID      int    `json:"gid"`
	Size     int64  `json:"size"`
	MTime    string `json:"mtime"`
	Linkname string `json:"linkname,omitempty"`
	// LinknameB64: only when Linkname is not UTF-8.
	LinknameB64 string `json:"linkname_b64,omitempty"`
	Inode       uint64 `json:"inode"`
	Nlink       uint32 `json:"nlink"`
	DevMajor    uint32 `json:"dev_major"`
	DevMinor    uint32 `json:"dev_minor"`
	RdevMajor   uint32 `json:"rdev_major"`
	RdevMinor   uint32 `json:"rdev_minor"`
	Offset      int64  `json:"offset"`
	Pad         int64  `json:"pad,omitempty"`
	// PAXGlobal: on the first entry after each tar PAX global header.
	PAXGlobal *listGlobal `json:"pax_global,omitempty"`
	// FromGlobal: the PAX keywords the entry took from the global header.
	FromGlobal []string    `json:"from_global,omitempty"`
	Sparse     *listSparse `json:"sparse,omitempty"`
	// Layer: in an image, the index of the layer that added the entry.
	Layer *int `json:"layer,omitempty"`
	// Xattrs: the extended attributes, as archive.XattrText shows them.
	Xattrs map[string]string `json:"xattrs,omitempty"`
	// Segment: the initrd segment the entry is in, from the second on.
	Segment int `json:"segment,omitempty"`
}

// listSegment is one segment of an initrd of several (list --json's
// "segments", after the entries).
type listSegment struct {
	Offset      int64  `json:"offset"`
	Length      int64  `json:"length"`
	Pad         int64  `json:"pad"`
	Compression string `json:"compression"`
	Entries     int    `json:"entries"`
}

// segmentsOf is the input's segments when there are several, nil else.
func segmentsOf(in *container.Input) []listSegment {
	segs := in.Segments()
	if len(segs) < 2 {
		return nil
	}
	out := make([]listSegment, len(segs))
	for i, s := range segs {
		out[i] = listSegment{s.Offset, s.Length, s.Pad, s.Codec.String(), s.Entries}
	}
	return out
}

// formatSegments says, after the entries, where each segment was.
func formatSegments(w io.Writer, segs []listSegment) {
	for i, s := range segs {
		line := fmt.Sprintf("-- segment %d at offset %d: %d bytes, %s, %d entries", i+1, s.Offset, s.Length, s.Compression, s.Entries)
		if s.Pad > 0 {
			line += fmt.Sprintf(", then %d bytes of zero padding", s.Pad)
		}
		fmt.Fprintln(w, line)
	}
}

type listGlobal struct {
	Name    string            `json:"name"`
	Offset  int64             `json:"offset"`
	Records map[string]string `json:"records"`
}

type listSparse struct {
	Format string `json:"format"`
	Stored int64  `json:"stored"`
}

// tarGlobalShown tells, entry by entry, when a new PAX global header
// applies: the listing shows it once, before the first entry under it.
type tarGlobalShown struct{ last *archive.TarGlobal }

func (s *tarGlobalShown) next(e *archive.Entry) *archive.TarGlobal {
	f, ok := e.Format.(*archive.TarFormat)
	if !ok || f.Global == nil || f.Global == s.last {
		return nil
	}
	s.last = f.Global
	return f.Global
}

func formatGlobal(g *archive.TarGlobal) string {
	line := fmt.Sprintf("-- PAX global header %s at offset %d:", names.Quote(g.Name), g.Offset)
	for _, k := range slices.Sorted(maps.Keys(g.Records)) {
		line += " " + names.Quote(k+"="+g.Records[k])
	}
	return line
}

func runList(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "list", "[--json] ARCHIVE|DIR", listHelp)
	asJSON := fs.Bool("json", false, "print a JSON document instead of text")
	maxSize := maxSizeFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want exactly one ARCHIVE or DIR, got %d arguments", len(pos))
	}
	in, err := container.Open(pos[0], maxSize.open())
	if err != nil {
		return err
	}
	defer in.Close()
	// A write per line costs as much as decoding an uncompressed image.
	out := bufio.NewWriterSize(env.Stdout, 64<<10)
	err = listTo(out, in, withContext(ctx, in), *asJSON)
	// What was listed before an error is still worth seeing.
	if ferr := out.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("writing the listing: %w", ferr)
	}
	return err
}

func listTo(w io.Writer, in *container.Input, r archive.Reader, asJSON bool) error {
	img, err := in.Describe()
	if err != nil {
		return err
	}
	if asJSON {
		return listJSON(w, in, r, img)
	}
	if img != nil && img.Container != "" {
		listImageText(w, in, img)
	} else {
		fmt.Fprintf(w, "# %s: %s\n", names.Quote(in.Path), in.Format)
	}
	if oci := in.Image(); oci != nil {
		fmt.Fprintf(w, "# image %s, %d layers\n", names.Quote(oci.Platform), len(oci.Layers))
		for _, l := range oci.Layers {
			fmt.Fprintf(w, "# layer %d %s: %s\n", l.Index, l.Digest, oneLine(l.CreatedBy))
		}
	}
	var globals tarGlobalShown
	seg := 1
	for {
		e, err := r.Next()
		if err == io.EOF {
			formatSegments(w, segmentsOf(in))
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Path, err)
		}
		if e.Segment > seg {
			seg = e.Segment
			s := in.Segments()[seg-1]
			fmt.Fprintf(w, "-- segment %d: %s at offset %d\n", seg, s.Codec, s.Offset)
		}
		if g := globals.next(e); g != nil {
			fmt.Fprintln(w, formatGlobal(g))
		}
		fmt.Fprintln(w, formatEntry(e))
	}
}

func formatEntry(e *archive.Entry) string {
	if e.Type == archive.TypeTrailer {
		return fmt.Sprintf("-- %s at offset %d, %d bytes of padding", names.Quote(e.Name), e.Offset, e.Pad)
	}
	size := fmt.Sprint(e.Size)
	if e.Type == archive.TypeChar || e.Type == archive.TypeBlock {
		size = fmt.Sprintf("%d,%d", e.RdevMajor, e.RdevMinor)
	}
	line := fmt.Sprintf("%s %5d/%-5d %10s %s %s", e.ModeString(), e.UID, e.GID, size,
		e.ModTime.UTC().Format("2006-01-02 15:04:05"), names.Quote(e.Name))
	switch {
	case e.Type == archive.TypeSymlink:
		line += " -> " + names.Quote(e.Linkname)
	case e.Type == archive.TypeHardlink:
		line += " link to " + names.Quote(e.Linkname)
	}
	if _, ok := e.LinkKey(); ok {
		line += fmt.Sprintf("  [hard link: inode %d, %d links]", e.Inode, e.Nlink)
	}
	if len(e.Xattrs) > 0 {
		line += "  [xattrs: " + names.Text(archive.XattrsLine(e.Xattrs)) + "]"
	}
	if f, ok := e.Format.(*archive.TarFormat); ok {
		if f.Sparse != nil {
			line += fmt.Sprintf("  [sparse %s: %d bytes stored]", f.Sparse.Format, f.Sparse.Stored)
		}
		if len(f.FromGlobal) > 0 {
			line += "  [from the PAX global header: " + strings.Join(f.FromGlobal, ", ") + "]"
		}
	}
	return line
}

func toListEntry(e *archive.Entry, g *archive.TarGlobal) listEntry {
	l := listEntry{
		Name: e.Name, NameB64: names.B64(e.Name), Type: e.Type.String(), Mode: fmt.Sprintf("%04o", e.Mode),
		UID: e.UID, GID: e.GID, Size: e.Size, MTime: e.ModTime.UTC().Format(time.RFC3339Nano),
		Linkname: e.Linkname, LinknameB64: names.B64(e.Linkname), Inode: e.Inode, Nlink: e.Nlink,
		DevMajor: e.DevMajor, DevMinor: e.DevMinor, RdevMajor: e.RdevMajor, RdevMinor: e.RdevMinor,
		Offset: e.Offset, Pad: e.Pad, Xattrs: archive.XattrsText(e.Xattrs),
	}
	if e.Segment > 1 {
		l.Segment = e.Segment
	}
	if g != nil {
		l.PAXGlobal = &listGlobal{Name: g.Name, Offset: g.Offset, Records: g.Records}
	}
	if f, ok := e.Format.(*archive.TarFormat); ok {
		l.FromGlobal = f.FromGlobal
		if f.Sparse != nil {
			l.Sparse = &listSparse{Format: f.Sparse.Format, Stored: f.Sparse.Stored}
		}
	}
	return l
}

// listJSON streams {"schema":..,"path":..,"format":..,"compression":..,"entries":[...],"segments":[...]}
// without holding the entries in memory.
func listJSON(w io.Writer, in *container.Input, r archive.Reader, img *container.Description) error {
	head, _ := json.Marshal(listHead{listSchema, in.Path, in.Format.Kind.String(), in.Format.Codec.String(), img})
	// names.JSON: a name or a platform holding "##[" (a workflow command
	// to a CI log) is written "##\u005b", as canon.JSON writes it.
	head = names.JSON(head)
	fmt.Fprintf(w, "%s,\"entries\":[", head[:len(head)-1])
	var globals tarGlobalShown
	for i := 0; ; i++ {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Fprintln(w, "]}")
			return fmt.Errorf("%s: %w", in.Path, err)
		}
		le := toListEntry(e, globals.next(e))
		if oci := in.Image(); oci != nil {
			if c, err := pathx.Clean(e.Name); err == nil {
				if l := oci.LayerOf(c); l != nil {
					le.Layer = &l.Index
				}
			}
		}
		b, _ := json.Marshal(le)
		if i > 0 {
			w.Write([]byte(","))
		}
		fmt.Fprintf(w, "\n%s", names.JSON(b))
	}
	fmt.Fprint(w, "\n]")
	if segs := segmentsOf(in); segs != nil {
		b, _ := json.Marshal(segs)
		fmt.Fprintf(w, ",\"segments\":%s", names.JSON(b))
	}
	fmt.Fprintln(w, "}")
	return nil
}

// withContext makes a reader fail between entries once ctx is done, so an
// interrupt unwinds through the normal error path (and its cleanups).
func withContext(ctx context.Context, r archive.Reader) archive.Reader {
	return &ctxReader{ctx: ctx, Reader: r}
}

type ctxReader struct {
	ctx context.Context
	archive.Reader
}

func (c *ctxReader) Next() (*archive.Entry, error) {
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	return c.Reader.Next()
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.Reader.Read(p)
}
