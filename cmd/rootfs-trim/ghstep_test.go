package main

import (
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
	"go.yaml.in/yaml/v3"
)

// workflow is what ghstep reads of a GitHub Actions workflow: the jobs,
// their permissions, and each step's fields (name, uses, if, run, with).
type workflow struct {
	Jobs map[string]struct {
		Permissions map[string]string `yaml:"permissions"`
		Steps       []map[string]any  `yaml:"steps"`
	} `yaml:"jobs"`
}

// ghstep FILE NAME [RUN]: the step named NAME of the GitHub Actions
// workflow FILE (a recipe's, from docs/recipes.md), printed as sorted
// "key: value" lines, its job's permissions as "permissions.KEY: VALUE",
// so a scenario can check what a runner would do with it; with RUN, the
// step's run script is written there, for the scenario to run as the
// runner would (sh -e).
func ghstep(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: ghstep FILE NAME [RUN]")
	}
	var wf workflow
	ts.Check(yaml.Unmarshal([]byte(ts.ReadFile(args[0])), &wf))
	for _, job := range wf.Jobs {
		for _, step := range job.Steps {
			if step["name"] != args[1] {
				continue
			}
			var lines []string
			for k, v := range job.Permissions {
				lines = append(lines, fmt.Sprintf("permissions.%s: %s", k, v))
			}
			for k, v := range step {
				if with, ok := v.(map[string]any); ok {
					for wk, wv := range with {
						lines = append(lines, fmt.Sprintf("%s.%s: %v", k, wk, wv))
					}
					continue
				}
				lines = append(lines, fmt.Sprintf("%s: %v", k, v))
			}
			sort.Strings(lines)
			fmt.Fprintln(ts.Stdout(), strings.Join(lines, "\n"))
			if len(args) == 3 {
				run, ok := step["run"].(string)
				if !ok {
					ts.Fatalf("%s: step %q has no run", args[0], args[1])
				}
				ts.Check(os.WriteFile(ts.MkAbs(args[2]), []byte(run), 0o755))
			}
			return
		}
	}
	ts.Fatalf("%s: no step named %q", args[0], args[1])
}
