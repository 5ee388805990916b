package cli

import (
	"fmt"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rootfs-trim/rootfs-trim/pkg/container"
	"github.com/rootfs-trim/rootfs-trim/pkg/render"
)

// valueChecks is, for each flag of flagValues, the check its command makes
// of a value, as the command calls it.
var valueChecks = map[string]func(v string) error{
	"report":     checkReportFormat,
	"recompress": checkRecompress,
	"runtime": func(v string) error {
		c := render.Choice{Runtime: v, CNI: "false"}
		return c.Validate()
	},
	"cni": func(v string) error {
		c := render.Choice{Runtime: "containerd", CNI: v}
		if err := c.Validate(); err != nil {
			return err
		}
		if c.Class() == render.ClassCustom {
			return fmt.Errorf("%q is taken for a manifest path", v)
		}
		return nil
	},
	"archive-format": func(v string) error { return checkWant(container.Want{Format: v}) },
	"compress":       func(v string) error { return checkWant(container.Want{Format: "newc", Codec: v}) },
}

// checkWant is what repack makes of want, from a tree (this directory).
func checkWant(want container.Want) error {
	in, err := container.Open(".", container.OpenOptions{})
	if err != nil {
		return err
	}
	defer in.Close()
	want.Path, want.StrictDir = "out", true
	_, err = in.Format.Container.Output(in, want, nil)
	return err
}

// Every word the completions offer is one its flag's check accepts, and
// of the closed lists, a word beside them is refused: the list and the
// check cannot drift apart. Each flag of the table is one a command has.
func TestFlagValuesAccepted(t *testing.T) {
	var listed, checked []string
	for name := range flagValues {
		listed = append(listed, name)
	}
	for name := range valueChecks {
		checked = append(checked, name)
	}
	sort.Strings(listed)
	sort.Strings(checked)
	if d := cmp.Diff(listed, checked); d != "" {
		t.Fatalf("flagValues and the checks of this test (-listed +checked):\n%s", d)
	}
	cmds, err := commandTable()
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range flagValues {
		if len(values) == 0 {
			t.Errorf("--%s: no values", name)
		}
		for _, v := range values {
			if err := valueChecks[name](v); err != nil {
				t.Errorf("--%s %s: the check refuses a value the completions offer: %v", name, v, err)
			}
		}
		if !pathValued[name] {
			if err := valueChecks[name]("nosuch"); err == nil {
				t.Errorf("--%s nosuch: accepted, but not in the list the completions offer", name)
			}
		}
		found := false
		for _, c := range cmds {
			for _, f := range c.Flags {
				if f.Name == name {
					found = true
					if d := cmp.Diff(values, f.Values); d != "" {
						t.Errorf("%s --%s: the command table's values (-want +got):\n%s", c.Name, name, d)
					}
				}
			}
		}
		if !found {
			t.Errorf("--%s: no command has it", name)
		}
	}
}
