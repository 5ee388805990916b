package fslock

import (
	"errors"
	"testing"
	"time"
)

func TestLock(t *testing.T) {
	dir := t.TempDir()
	unlock, err := Lock(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	// flock locks belong to the open file description, so a second Lock in
	// the same process conflicts just as another process would.
	if _, err := Lock(dir, false); !errors.Is(err, ErrBusy) {
		t.Fatalf("second lock: err = %v, want ErrBusy", err)
	}
	got := make(chan error)
	go func() {
		u, err := Lock(dir, true)
		if err == nil {
			u()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("waiting lock returned early: %v", err)
	case <-time.After(100 * time.Millisecond):
	}
	unlock()
	if err := <-got; err != nil {
		t.Fatalf("waiting lock: %v", err)
	}
}
