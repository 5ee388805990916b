package owners

import (
	"bytes"
	"errors"
	"io"

	"github.com/rootfs-trim/rootfs-trim/internal/pathx"
	"github.com/rootfs-trim/rootfs-trim/pkg/archive"
)

// Later is how audit, diff and apply read, once, an input whose owners it
// records itself (a dpkg database, the ListsDir lists, an applied image's
// index), after most of what they are about (var/ sorts after etc/).
// Entry gathers the owners as the entries go by, Hold keeps what the
// caller made of each (a header, what apply did with it), and Done and
// Release give the owners and that, to judge each entry again. A limit
// bounds what is held (ErrTooMany): then read the owners first (Load).
type Later[T any] struct {
	name  string // the input's, for errors
	scan  dbScan
	held  []T
	limit int
	read  bytes.Buffer // what Entry read of the entry's data
}

// ErrTooMany says that a Later met more entries than its limit: read the
// owners first.
var ErrTooMany = errors.New("too many entries to hold until the dpkg database is read")

// NewLater gathers the owners of the input called name; limit bounds what
// Hold takes (0: no bound).
func NewLater[T any](name string, limit int) *Later[T] {
	return &Later[T]{name: name, scan: dbScan{db: newDB()}, limit: limit}
}

// Entry looks at e, whose data is data, and returns its data for the
// caller: data itself, or, where e is a file of the owners' records and
// Entry read some of it, what it read followed by the rest.
func (l *Later[T]) Entry(e *archive.Entry, data io.Reader) (io.Reader, error) {
	l.read.Reset()
	if clean, err := pathx.Clean(e.Name); err == nil && !IsRecord(clean) {
		// What goBinaries read of an executable is all that was read
		// of it.
		if read, ok, err := l.scan.gobin.entry(clean, e, data); ok || err != nil {
			return io.MultiReader(bytes.NewReader(read), data), err
		}
	}
	if err := l.scan.entry(l.name, e, io.TeeReader(data, &l.read)); err != nil {
		return nil, err
	}
	if l.read.Len() == 0 {
		return data, nil
	}
	return io.MultiReader(&l.read, data), nil
}

// Owners are the owners as far as the input has been read.
func (l *Later[T]) Owners() *Table { return l.scan.db.Owners }

// Hold keeps v, what the caller made of an entry, until Release.
func (l *Later[T]) Hold(v T) error {
	if l.limit > 0 && len(l.held) >= l.limit {
		return ErrTooMany
	}
	l.held = append(l.held, v)
	return nil
}

// Done returns the owners once the input is read: nil when it records
// none.
func (l *Later[T]) Done() (*DB, error) { return l.scan.done(l.name) }

// Release hands back what was held, in the order it came, and holds
// nothing of it any more.
func (l *Later[T]) Release() []T {
	held := l.held
	l.held = nil
	return held
}
