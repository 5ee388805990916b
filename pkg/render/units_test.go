package render

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeSystemd is a service manager in memory: the units installed, the
// ones running, and the calls render made.
type fakeSystemd struct {
	units   map[string]Unit
	running map[string]bool
	calls   []string
}

// isoUnits are the runtime units minikube's ISO installs (crio as
// cri-o's package ships it, docker's not bound to containerd).
func isoUnits() map[string]Unit {
	return map[string]Unit{
		"containerd.service": {Load: "loaded"},
		"crio.service":       {Load: "loaded"},
		"docker.socket":      {Load: "loaded"},
		"docker.service":     {Load: "loaded", Needs: []string{"docker.socket", "minikube-automount.service"}},
		"cri-docker.socket":  {Load: "loaded"},
		"cri-docker.service": {Load: "loaded", Needs: []string{"cri-docker.socket"}},
	}
}

var dockerUnits = []string{"cri-docker.service", "cri-docker.socket", "docker.service", "docker.socket"}

func (f *fakeSystemd) Describe(names []string) (map[string]Unit, error) {
	out := map[string]Unit{}
	for _, n := range names {
		if u, ok := f.units[n]; ok {
			out[n] = u
		} else {
			out[n] = Unit{Load: "not-found"}
		}
	}
	return out, nil
}

func (f *fakeSystemd) Stop(names []string) error {
	f.calls = append(f.calls, "stop "+strings.Join(names, " "))
	for _, n := range names {
		delete(f.running, n)
	}
	return nil
}

func (f *fakeSystemd) Start(names []string) error {
	f.calls = append(f.calls, "start "+strings.Join(names, " "))
	for _, n := range names {
		f.running[n] = true
	}
	return nil
}

// TestSwitchUnits: after each render, exactly the chosen runtime's units
// run; a later render for another runtime takes back what the earlier one
// started (and the image's own enablement, docker's, at boot).
func TestSwitchUnits(t *testing.T) {
	tests := []struct {
		name     string
		units    func(map[string]Unit) // changes to the ISO's units
		running  []string              // before the renders
		runtimes []string              // one render each, in order
		dryRun   bool                  // the last render
		// After the last render: the units running, its calls and notes.
		want      []string
		wantCalls []string
		wantNotes []string
	}{
		{
			name: "boot, docker recorded", running: dockerUnits, runtimes: []string{"docker"},
			want:      dockerUnits,
			wantCalls: []string{"stop containerd.service crio.service", "start docker.service docker.socket cri-docker.service cri-docker.socket"},
		},
		{
			name: "boot, crio recorded: the image's docker stopped", running: dockerUnits, runtimes: []string{"crio"},
			want:      []string{"crio.service"},
			wantCalls: []string{"stop containerd.service docker.service docker.socket cri-docker.service cri-docker.socket", "start crio.service"},
		},
		{
			name: "crio, then containerd: crio taken back", running: dockerUnits, runtimes: []string{"crio", "containerd"},
			want:      []string{"containerd.service"},
			wantCalls: []string{"stop crio.service docker.service docker.socket cri-docker.service cri-docker.socket", "start containerd.service"},
		},
		{
			name: "containerd, then docker", runtimes: []string{"containerd", "docker"},
			want:      dockerUnits,
			wantCalls: []string{"stop containerd.service crio.service", "start docker.service docker.socket cri-docker.service cri-docker.socket"},
		},
		{
			name: "an image without cri-o", units: func(u map[string]Unit) { delete(u, "crio.service") },
			running: dockerUnits, runtimes: []string{"containerd"},
			want:      []string{"containerd.service"},
			wantCalls: []string{"stop docker.service docker.socket cri-docker.service cri-docker.socket", "start containerd.service"},
		},
		{
			name: "docker bound to containerd keeps it",
			units: func(u map[string]Unit) {
				u["docker.service"] = Unit{Load: "loaded", Needs: []string{"docker.socket", "containerd.service"}}
			},
			running: []string{"containerd.service"}, runtimes: []string{"docker"},
			want:      append([]string{"containerd.service"}, dockerUnits...),
			wantCalls: []string{"stop crio.service", "start docker.service docker.socket cri-docker.service cri-docker.socket"},
			wantNotes: []string{"containerd.service left running: docker.service needs it"},
		},
		{
			name: "the chosen runtime masked", units: func(u map[string]Unit) { u["crio.service"] = Unit{Load: "masked"} },
			running: dockerUnits, runtimes: []string{"crio"},
			want:      nil,
			wantCalls: []string{"stop containerd.service docker.service docker.socket cri-docker.service cri-docker.socket"},
			wantNotes: []string{"crio.service is masked: not started"},
		},
		{
			name: "dry run", running: dockerUnits, runtimes: []string{"crio"}, dryRun: true,
			want: dockerUnits,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := appliedImage(t)
			f := &fakeSystemd{units: isoUnits(), running: map[string]bool{}}
			if tc.units != nil {
				tc.units(f.units)
			}
			for _, u := range tc.running {
				f.running[u] = true
			}
			var res *Result
			for i, rt := range tc.runtimes {
				f.calls = nil
				last := i == len(tc.runtimes)-1
				var err error
				res, err = Render(Options{Root: root, Choice: choice(rt, "kindnet", ""), Units: f, DryRun: last && tc.dryRun})
				if err != nil {
					t.Fatalf("render %s: %v", rt, err)
				}
			}
			got := slices.Sorted(maps.Keys(f.running))
			want := slices.Sorted(slices.Values(tc.want))
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("units running (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantCalls, f.calls); d != "" {
				t.Errorf("systemctl calls (-want +got):\n%s", d)
			}
			if d := cmp.Diff(tc.wantNotes, res.Notes); d != "" {
				t.Errorf("notes (-want +got):\n%s", d)
			}
			if tc.dryRun {
				if d := cmp.Diff([]string{"crio.service"}, res.Started); d != "" {
					t.Errorf("a dry run's Started (-want +got):\n%s", d)
				}
			}
		})
	}
}

// A render refused before writing touches no unit.
func TestRefusedRenderSwitchesNothing(t *testing.T) {
	root := appliedImage(t)
	f := &fakeSystemd{units: isoUnits(), running: map[string]bool{"docker.service": true}}
	if _, err := Render(Options{Root: root, Choice: choice("crio", "bridge", "10.244.0.1/16"), Units: f}); err == nil {
		t.Fatal("a pod CIDR with host bits was accepted")
	}
	if f.calls != nil {
		t.Errorf("systemctl calls for a refused render: %q", f.calls)
	}
}

// systemctl 252's show output for docker's units and a unit the image
// does not have.
const showOutput = `Id=docker.service
Requires=docker.socket minikube-automount.service system.slice sysinit.target
BindsTo=
LoadState=loaded

Id=crio.service
Requires=
BindsTo=
LoadState=not-found

Id=cri-docker.service
Requires=cri-docker.socket sysinit.target system.slice
BindsTo=containerd.service
LoadState=masked
`

func TestParseShow(t *testing.T) {
	got, err := parseShow([]byte(showOutput))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Unit{
		"docker.service":     {Load: "loaded", Needs: []string{"docker.socket", "minikube-automount.service", "system.slice", "sysinit.target"}},
		"crio.service":       {Load: "not-found"},
		"cri-docker.service": {Load: "masked", Needs: []string{"cri-docker.socket", "sysinit.target", "system.slice", "containerd.service"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	for _, bad := range []string{"Id=a.service\nnonsense\n", "LoadState=loaded\n"} {
		if _, err := parseShow([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzParseShow(f *testing.F) {
	f.Add([]byte(showOutput))
	f.Add([]byte("Id=x\n\n\n\nId=y\nLoadState=\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		units, err := parseShow(data)
		if err != nil {
			return
		}
		for id, u := range units {
			if id == "" || strings.Contains(id, "\n") {
				t.Errorf("unit %q", id)
			}
			for _, n := range u.Needs {
				if n == "" || strings.ContainsAny(n, " \t\n") {
					t.Errorf("%s needs %q", id, n)
				}
			}
		}
	})
}
