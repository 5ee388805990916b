package archive

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// entries is a Reader over entries with the data their names give
// ("a=xyz" has data "xyz"; "T" is a trailer).
type entries struct {
	list []string
	data io.Reader
}

func (r *entries) Next() (*Entry, error) {
	if len(r.list) == 0 {
		return nil, io.EOF
	}
	s := r.list[0]
	r.list = r.list[1:]
	if s == "T" {
		r.data = strings.NewReader("")
		return &Entry{Name: "TRAILER!!!", Type: TypeTrailer}, nil
	}
	name, data, _ := strings.Cut(s, "=")
	r.data = strings.NewReader(data)
	return &Entry{Name: name, Type: TypeRegular, Size: int64(len(data)), Nlink: 1}, nil
}

func (r *entries) Read(p []byte) (int, error) { return r.data.Read(p) }

// TestTrailerReader: trailers between members come out where they are,
// with no data; the last is held back and handed out by Trailer.
func TestTrailerReader(t *testing.T) {
	for _, tc := range []struct {
		in, out []string
		held    bool
	}{
		{in: []string{"a=1", "T"}, out: []string{"a=1"}, held: true},
		{in: []string{"a=1", "T", "b=22", "T"}, out: []string{"a=1", "T", "b=22"}, held: true},
		{in: []string{"a=1", "T", "T", "b=22", "T", "T"}, out: []string{"a=1", "T", "T", "b=22", "T"}, held: true},
		{in: []string{"a=1", "b=22"}, out: []string{"a=1", "b=22"}},
		{in: nil, out: nil},
	} {
		r := NewTrailerReader(&entries{list: tc.in})
		var got []string
		for {
			e, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			data, err := io.ReadAll(r)
			if err != nil {
				t.Fatal(err)
			}
			if e.Type == TypeTrailer {
				if len(data) > 0 {
					t.Errorf("%v: a trailer's data: %q", tc.in, data)
				}
				got = append(got, "T")
				continue
			}
			got = append(got, e.Name+"="+string(data))
		}
		if diff := cmp.Diff(tc.out, got); diff != "" {
			t.Errorf("%v: entries (-want +got):\n%s", tc.in, diff)
		}
		if held := r.Trailer() != nil; held != tc.held {
			t.Errorf("%v: Trailer held: %v, want %v", tc.in, held, tc.held)
		}
	}
}

// TestCopyTake: an entry Decide takes is handed to Take with its data and
// left out of the copy; the entries around it are copied whole.
func TestCopyTake(t *testing.T) {
	var out bytes.Buffer
	w := NewCpioWriter(&out, Newc)
	var took []string
	decide := func(e *Entry) (Action, error) {
		if e.Name == "b" {
			return Take, nil
		}
		return Keep, nil
	}
	take := func(e *Entry, data io.Reader) error {
		d, err := io.ReadAll(data)
		took = append(took, e.Name+"="+string(d))
		return err
	}
	src := &entries{list: []string{"a=1", "b=22", "c=333", "T"}}
	if err := Copy(w, src, CopyOptions{Decide: decide, Take: take, Dest: KindCpio}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"b=22"}, took); diff != "" {
		t.Errorf("taken (-want +got):\n%s", diff)
	}
	var got []string
	r := NewCpioReader(&out)
	for {
		e, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		d, _ := io.ReadAll(r)
		got = append(got, e.Name+"="+string(d))
	}
	if diff := cmp.Diff([]string{"a=1", "c=333", "TRAILER!!!="}, got); diff != "" {
		t.Errorf("copied (-want +got):\n%s", diff)
	}
}
