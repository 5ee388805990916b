package cli

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

func init() {
	register(&command{name: "completion", summary: "print a shell completion script: bash, zsh or fish", run: runCompletion})
	register(&command{name: "man", summary: "print the man page (roff)", run: runMan, hidden: true})
}

const completionHelp = `
Prints a completion script for the shell named: every command, each
command's flags (with a description in zsh and fish), the values of --runtime,
--cni, --report, --archive-format, --compress and --recompress, the words
export and completion take, and file names elsewhere. Load it for the current
shell (make install puts the scripts where bash-completion, zsh and fish look):

  bash: source <(rootfs-trim completion bash)
  zsh:  source <(rootfs-trim completion zsh), or save it as _rootfs-trim in $fpath
  fish: rootfs-trim completion fish | source, or save it in ~/.config/fish/completions/rootfs-trim.fish

The scripts, like 'rootfs-trim man', are generated from the flags and help
texts that -h prints, so they cannot fall behind the binary.
`

const manHelp = `
Prints the man page, rootfs-trim(1), as roff, from the same help texts that
-h prints: 'make man' writes it to bin/rootfs-trim.1.
`

func runCompletion(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "completion", "bash|zsh|fish", completionHelp)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one shell: bash, zsh or fish")
	}
	write := map[string]func(io.Writer, []cmdSpec){"bash": writeBash, "zsh": writeZsh, "fish": writeFish}[pos[0]]
	if write == nil {
		return usagef("shell %q: want bash, zsh or fish", pos[0])
	}
	cmds, err := commandTable()
	if err != nil {
		return err
	}
	write(env.Stdout, cmds)
	return nil
}

func runMan(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "man", "", manHelp)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("want no arguments")
	}
	cmds, err := commandTable()
	if err != nil {
		return err
	}
	var usage bytes.Buffer
	printUsage(&usage)
	writeMan(env.Stdout, cmds, usage.String())
	return nil
}

// cmdSpec is one command as -h shows it.
type cmdSpec struct {
	Name, Summary, Synopsis, Help string
	Flags                         []flagSpec
}

// flagSpec is one flag: Arg names its value ("" for a switch), Values are
// the words it takes (flagValues), and Path says it takes a file name too.
type flagSpec struct {
	Name, Usage, Arg string
	Values           []string
	Path             bool
}

// commandTable is every visible command with its synopsis, help and flags,
// taken from the flag set the command itself builds, by running it with
// -h (which parses nothing else and prints to nowhere): there is one
// table, the one -h prints, so what the completions and the man page say
// is what the binary takes.
func commandTable() ([]cmdSpec, error) {
	var names []string
	for n, c := range commands {
		if !c.hidden {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	var out []cmdSpec
	for _, name := range names {
		spec := cmdSpec{Name: name, Summary: commands[name].summary}
		var fs *flag.FlagSet
		env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getenv: func(string) string { return "" },
			describe: func(_, synopsis, help string, f *flag.FlagSet) {
				spec.Synopsis, spec.Help, fs = synopsis, strings.TrimSpace(help), f
			}}
		if err := commands[name].run(context.Background(), env, []string{"-h"}); fs == nil || !errors.Is(err, flag.ErrHelp) {
			return nil, fmt.Errorf("command %s: -h built no flag set (%v)", name, err)
		}
		fs.VisitAll(func(f *flag.Flag) {
			arg, usage := flag.UnquoteUsage(f)
			// An old spelling (renamedFlag) takes its new name's values.
			name := f.Name
			if s, ok := f.Value.(*spelling); ok && s.old {
				name = s.other
			}
			spec.Flags = append(spec.Flags, flagSpec{Name: f.Name, Usage: usage, Arg: arg,
				Values: flagValues[name], Path: pathValued[name]})
		})
		out = append(out, spec)
	}
	return out, nil
}

// words are the literal words a command takes first, as its synopsis
// starts: "buildroot" for export, "bash|zsh|fish" for completion.
func (c cmdSpec) words() []string {
	first, _, _ := strings.Cut(c.Synopsis, " ")
	if first == "" || strings.Trim(first, "abcdefghijklmnopqrstuvwxyz|") != "" {
		return nil
	}
	return strings.Split(first, "|")
}

// short is a flag's usage up to its first colon or full stop: enough for
// a completion menu.
func (f flagSpec) short() string {
	s := strings.Join(strings.Fields(f.Usage), " ")
	if i := strings.IndexAny(s, ":;("); i > 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// shq quotes s for a POSIX shell (and zsh).
func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func writeBash(w io.Writer, cmds []cmdSpec) {
	var names []string
	for _, c := range cmds {
		names = append(names, c.Name)
	}
	fmt.Fprintf(w, `# bash completion for rootfs-trim, generated by 'rootfs-trim completion bash'.
# Load it with: source <(rootfs-trim completion bash)
_rootfs_trim() {
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	COMPREPLY=()
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W %s -- "$cur"))
		return
	fi
	local flags='' valued='' words='' values=''
	case ${COMP_WORDS[1]} in
`, shq(strings.Join(names, " ")))
	for _, c := range cmds {
		var flags, valued []string
		for _, f := range c.Flags {
			flags = append(flags, "--"+f.Name)
			if f.Arg != "" {
				valued = append(valued, "--"+f.Name, "-"+f.Name)
			}
		}
		fmt.Fprintf(w, "\t%s)\n\t\tflags=%s\n\t\tvalued=%s\n\t\twords=%s\n", c.Name,
			shq(strings.Join(flags, " ")), shq(strings.Join(valued, " ")), shq(strings.Join(c.words(), " ")))
		var cases []string
		for _, f := range c.Flags {
			if len(f.Values) > 0 {
				cases = append(cases, fmt.Sprintf("\t\t--%s|-%s) values=%s ;;\n", f.Name, f.Name, shq(strings.Join(f.Values, " "))))
			}
		}
		if len(cases) > 0 {
			fmt.Fprintf(w, "\t\tcase $prev in\n%s\t\tesac\n", strings.Join(cases, ""))
		}
		fmt.Fprint(w, "\t\t;;\n")
	}
	fmt.Fprint(w, `	esac
	# A flag's value: its words where it has some (none matching: file
	# names, as -o default makes bash do, for --cni's manifest path), else
	# file names.
	if [ -n "$values" ]; then
		COMPREPLY=($(compgen -W "$values" -- "$cur"))
		return
	fi
	case " $valued " in
	*" $prev "*) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$flags" -- "$cur"))
	elif [ "$COMP_CWORD" -eq 2 ] && [ -n "$words" ]; then
		COMPREPLY=($(compgen -W "$words" -- "$cur"))
	fi
}
complete -o default -F _rootfs_trim rootfs-trim
`)
}

// zshDesc escapes what _arguments reads in an option's [description].
func zshDesc(s string) string {
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
}

func writeZsh(w io.Writer, cmds []cmdSpec) {
	fmt.Fprint(w, `#compdef rootfs-trim
# zsh completion for rootfs-trim, generated by 'rootfs-trim completion zsh'.
# Save it as _rootfs-trim in a directory of $fpath, or: source <(rootfs-trim completion zsh)
_rootfs-trim() {
	local -a commands
	commands=(
`)
	for _, c := range cmds {
		fmt.Fprintf(w, "\t\t%s\n", shq(c.Name+":"+c.Summary))
	}
	fmt.Fprint(w, `	)
	if (( CURRENT == 2 )); then
		_describe -t commands 'rootfs-trim command' commands
		return
	fi
	local cmd=$words[2]
	shift words
	(( CURRENT-- ))
	case $cmd in
`)
	for _, c := range cmds {
		fmt.Fprintf(w, "\t%s)\n\t\t_arguments -s", c.Name)
		for _, f := range c.Flags {
			spec := "--" + f.Name + "[" + zshDesc(f.short()) + "]"
			if f.Arg != "" {
				action := "_files"
				switch {
				case len(f.Values) > 0 && f.Path:
					// In braces, evaluated as written (_arguments would
					// add compadd's options to a bare call, which
					// _alternative refuses); _arguments splits a spec at
					// its colons: the action's own are escaped.
					action = strings.ReplaceAll("{_alternative "+shq("values:"+f.Arg+":("+strings.Join(f.Values, " ")+")")+" "+shq("files:file:_files")+"}", ":", `\:`)
				case len(f.Values) > 0:
					action = "(" + strings.Join(f.Values, " ") + ")"
				case f.Arg == "directory" || f.Arg == "DIR":
					action = "_files -/"
				}
				spec = "--" + f.Name + "=[" + zshDesc(f.short()) + "]:" + zshDesc(f.Arg) + ":" + action
			}
			fmt.Fprintf(w, " \\\n\t\t\t%s", shq(spec))
		}
		if ws := c.words(); len(ws) > 0 {
			fmt.Fprintf(w, " \\\n\t\t\t%s", shq("1:"+c.Name+":("+strings.Join(ws, " ")+")"))
		}
		fmt.Fprintf(w, " \\\n\t\t\t%s\n\t\t;;\n", shq("*:file:_files"))
	}
	fmt.Fprint(w, `	esac
}
if [ "$funcstack[1]" = "_rootfs-trim" ]; then
	_rootfs-trim "$@"
else
	compdef _rootfs-trim rootfs-trim
fi
`)
}

// fishq quotes s for fish, where a single-quoted string takes \' and \\.
func fishq(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

func writeFish(w io.Writer, cmds []cmdSpec) {
	fmt.Fprint(w, "# fish completion for rootfs-trim, generated by 'rootfs-trim completion fish'.\n"+
		"# Load it with: rootfs-trim completion fish | source\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c rootfs-trim -f -n __fish_use_subcommand -a %s -d %s\n", c.Name, fishq(c.Summary))
	}
	for _, c := range cmds {
		cond := fishq("__fish_seen_subcommand_from " + c.Name)
		for _, f := range c.Flags {
			req := ""
			switch {
			case len(f.Values) > 0 && f.Path:
				req = " -r -a " + fishq(strings.Join(f.Values, " "))
			case len(f.Values) > 0:
				req = " -x -a " + fishq(strings.Join(f.Values, " "))
			case f.Arg != "":
				req = " -r"
			}
			fmt.Fprintf(w, "complete -c rootfs-trim -n %s -l %s%s -d %s\n", cond, f.Name, req, fishq(f.short()))
		}
		if ws := c.words(); len(ws) > 0 {
			fmt.Fprintf(w, "complete -c rootfs-trim -f -n %s -a %s\n", cond, fishq(strings.Join(ws, " ")))
		}
	}
}
