package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ChoicePath is where render records the last choice, relative to the
// root. /var/lib/minikube is bind-mounted from the persistent disk by the
// ISO's minikube-automount (deploy/iso/minikube-iso/package/automount), so
// the record survives a VM restart while /etc, in RAM, does not; the boot
// unit renders it again before any runtime starts (render --from-record).
const ChoicePath = "var/lib/minikube/rootfs-trim/choice.json"

// savedChoice is the record's format.
type savedChoice struct {
	Version int `json:"version"`
	Choice
}

// LoadChoice reads the recorded choice beneath root. No record gives
// ok=false and no error. The record and every directory from root to it
// must be owned by the caller (or root) and writable by no one else (a
// sticky directory of root's aside); its values are checked as flags are.
func LoadChoice(root string) (c Choice, ok bool, err error) {
	t, err := openTree(root)
	if err != nil {
		return Choice{}, false, err
	}
	defer t.Close()
	// Whoever can write the record picks the socket crictl and kubeadm
	// talk to as root: it is read only if no one but this user (root, at
	// boot) can have written it or a directory above it.
	data, err := t.ReadFile(ChoicePath, ownedBy(os.Geteuid()))
	if errors.Is(err, fs.ErrNotExist) {
		return Choice{}, false, nil
	}
	if err != nil {
		return Choice{}, false, fmt.Errorf("/%s: %w", ChoicePath, err)
	}
	var s savedChoice
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Choice{}, false, fmt.Errorf("/%s: %w", ChoicePath, err)
	}
	if s.Version != 1 {
		return Choice{}, false, fmt.Errorf("/%s: version %d, want 1", ChoicePath, s.Version)
	}
	if err := s.Validate(); err != nil {
		return Choice{}, false, fmt.Errorf("/%s: %w", ChoicePath, err)
	}
	return s.Choice, true, nil
}
