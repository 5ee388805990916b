package enablement

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// maxFile bounds a unit or preset file a Collector holds, and maxHeld all
// it holds: systemd's own are a few KiB, an image's few hundred, and an
// archive of a million preset files must not fill the memory.
const (
	maxFile = 1 << 20
	maxHeld = 64 << 20
)

// ErrTooMany says an input holds more unit and preset files than a
// Collector holds (maxHeld).
var ErrTooMany = errors.New("more systemd unit and preset files than rootfs-trim reads (64 MiB)")

// Collector gathers, as an archive or an image streams past, what
// FindUnit, Enablers and ReadPresets read of it: the links in the unit
// directories (and their .wants and .requires directories), the files of
// the units it is asked about, and the preset files. FS serves them, so
// that an input read once still says what it starts at boot. A link is
// resolved among what was gathered: a unit or preset file that links
// outside these directories is not found.
type Collector struct {
	units map[string]bool // unit file names whose data is read
	files fstest.MapFS    // an in-memory fs.FS that serves symlinks too
	held  int             // bytes of names, links and data held
}

// NewCollector gathers what Enablers needs to know of units (and of the
// templates of the instances among them).
func NewCollector(units ...string) *Collector {
	c := &Collector{units: map[string]bool{}, files: fstest.MapFS{}}
	for _, u := range units {
		c.units[u] = true
		if template, _, ok := instanceOf(u); ok {
			c.units[template] = true
		}
	}
	return c
}

// Reads says whether the data of the file at clean is read, so that an
// image's first pass over its layers keeps it.
func (c *Collector) Reads(clean string) bool {
	dir, base := path.Split(clean)
	dir = strings.TrimSuffix(dir, "/")
	return slices.Contains(UnitDirs, dir) && c.units[base] || slices.Contains(PresetDirs, dir) && strings.HasSuffix(base, ".preset")
}

// Entry notes the entry e, whose data is data, and returns the data to
// read in its place: what it read, then the rest.
func (c *Collector) Entry(e *archive.Entry, data io.Reader) (io.Reader, error) {
	clean, err := pathx.Clean(e.Name)
	if err != nil {
		return data, nil // the reader's caller reports it
	}
	switch {
	case e.Type == archive.TypeSymlink && c.linkMatters(clean):
		if err := c.hold(clean, len(e.Linkname)); err != nil {
			return nil, err
		}
		c.files[clean] = &fstest.MapFile{Data: []byte(e.Linkname), Mode: fs.ModeSymlink | 0o777}
	case e.Type == archive.TypeRegular && c.Reads(clean):
		read, err := io.ReadAll(io.LimitReader(data, maxFile))
		if fe := (*archive.FormatError)(nil); err != nil && !errors.As(err, &fe) {
			// Named as the reader names an entry it could not skip.
			return nil, &archive.FormatError{Offset: e.Offset, Entry: e.Name, Err: err}
		}
		if err == nil {
			err = c.hold(clean, len(read))
		}
		if err != nil {
			return nil, err
		}
		c.files[clean] = &fstest.MapFile{Data: read, Mode: 0o644}
		return io.MultiReader(bytes.NewReader(read), data), nil
	default:
		// A later entry of the same path (an archive's duplicate, a
		// directory over a link) replaces what an earlier one said.
		delete(c.files, clean)
	}
	return data, nil
}

// hold counts n bytes more held for the entry at clean.
func (c *Collector) hold(clean string, n int) error {
	c.held += len(clean) + n
	if c.held > maxHeld {
		return &archive.FormatError{Entry: clean, Err: ErrTooMany}
	}
	return nil
}

// linkMatters: a link in a unit directory (an alias, a mask), in one of
// its .wants or .requires directories, or in a preset directory.
func (c *Collector) linkMatters(clean string) bool {
	dir := path.Dir(clean)
	if slices.Contains(UnitDirs, dir) || slices.Contains(PresetDirs, dir) {
		return true
	}
	return slices.Contains(UnitDirs, path.Dir(dir)) && (strings.HasSuffix(dir, ".wants") || strings.HasSuffix(dir, ".requires"))
}

// FS serves what was gathered.
func (c *Collector) FS() fs.FS { return c.files }

// Wrap returns r, whose entries c notes (Entry) as they are read.
func (c *Collector) Wrap(r archive.Reader) archive.Reader {
	return &collecting{Reader: r, c: c, data: r}
}

// collecting is an archive.Reader that gives each entry to a Collector.
type collecting struct {
	archive.Reader
	c    *Collector
	data io.Reader // the current entry's data: what c read, then the rest
}

func (w *collecting) Next() (*archive.Entry, error) {
	e, err := w.Reader.Next()
	if err != nil {
		return e, err
	}
	w.data, err = w.c.Entry(e, w.Reader)
	return e, err
}

func (w *collecting) Read(p []byte) (int, error) { return w.data.Read(p) }
