package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/rootfs-trim/rootfs-trim/internal/names"
	"github.com/rootfs-trim/rootfs-trim/pkg/compress"
	"github.com/rootfs-trim/rootfs-trim/pkg/container"
)

// Exit codes: "found problems" is a result, not a failure of the tool.
const (
	ExitOK       = 0
	ExitFindings = 1
	ExitError    = 2
)

// Env is what a command sees of the world; tests substitute it.
type Env struct {
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	// IsTerminal reports whether stderr is a terminal (progress display).
	IsTerminal bool
	// describe, when set, is handed each flag set a command makes
	// (commandTable: completion and the man page).
	describe func(name, synopsis, help string, fs *flag.FlagSet)
}

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
	// hidden: left out of the usage, the completions and the man page.
	hidden bool
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errFindings makes a command exit 1 without printing anything more: the
// command has already reported what it found.
var errFindings = errors.New("findings reported")

// usageError is a mistake on the command line: printed with a pointer to
// -h, exit 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

// Main runs the command line and returns the exit code.
func Main(args []string) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		if s, ok := <-sigs; ok {
			cancel(signalled{s.(syscall.Signal)})
		}
	}()
	env := &Env{Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, IsTerminal: isTerminal(os.Stderr)}
	return Run(ctx, env, args)
}

// signalled is the cause of Main's context when a signal ended it.
type signalled struct{ sig syscall.Signal }

func (s signalled) Error() string { return s.sig.String() }

// finishedAfterSignal is the exit code of a command that a signal reached
// but that went on to finish its work safely (apply once it writes a tree):
// 128 plus the signal's number, as a shell reports a process it ended, so
// that a script sees the interrupt although nothing is left half done.
func finishedAfterSignal(ctx context.Context) (int, bool) {
	var s signalled
	if errors.As(context.Cause(ctx), &s) {
		return 128 + int(s.sig), true
	}
	return 0, false
}

// Run runs one command line in env and returns the exit code.
func Run(ctx context.Context, env *Env, args []string) int {
	if len(args) == 0 {
		printUsage(env.Stderr)
		return ExitError
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help", "help":
		if name == "help" && len(args) > 1 {
			// "help CMD" as go and git take it: CMD's own usage.
			name, args = args[1], []string{args[1], "-h"}
			break
		}
		printUsage(env.Stdout)
		return ExitOK
	case "--version", "-version":
		// As other tools take it; the same as the version command.
		name, args = "version", append([]string{"version"}, args[1:]...)
	}
	c, ok := commands[name]
	if !ok {
		// One line and a pointer, as a mistake in a command's flags gets.
		fmt.Fprintf(env.Stderr, "rootfs-trim: unknown command %q\nRun 'rootfs-trim -h' for the commands.\n", name)
		return ExitError
	}
	err := c.run(ctx, env, args[1:])
	switch {
	case err == nil:
		if code, ok := finishedAfterSignal(ctx); ok {
			return code
		}
		return ExitOK
	case errors.Is(err, errFindings):
		return ExitFindings
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	}
	var ue *usageError
	var cue *container.UsageError // what the user asked of an output
	if errors.As(err, &ue) || errors.As(err, &cue) {
		fmt.Fprintf(env.Stderr, "rootfs-trim %s: %s\nRun 'rootfs-trim %s -h' for usage.\n", name, shownError(err), name)
		return ExitError
	}
	if ctx.Err() != nil {
		fmt.Fprintf(env.Stderr, "rootfs-trim %s: interrupted; nothing was written\n", name)
		return ExitError
	}
	fmt.Fprintf(env.Stderr, "rootfs-trim %s: %s\n", name, shownError(err))
	return ExitError
}

// shownError is err's message as it may reach a terminal or a CI log.
func shownError(err error) string { return shownLines(err.Error()) }

// shownLines escapes each line of a message rootfs-trim wrote through
// names.Text, so that none can be a workflow command (names.Command); the
// message builders quote what the input chose (names.Quote), so that a
// newline of the input does not even split a line.
func shownLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = names.Text(l)
	}
	return strings.Join(lines, "\n")
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `rootfs-trim strips container-runtime configuration that packages must not
ship from a Buildroot rootfs, and defers it to boot time.

Usage:
  rootfs-trim <command> [flags] [arguments]

Commands:
`)
	tw := newColumns(w)
	for _, n := range visibleCommands() {
		fmt.Fprintf(tw, "  %s\t%s\n", n, commands[n].summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Run 'rootfs-trim <command> -h' for a command's flags.
Exit status: 0 success; 1 findings (audit: offending files; check: a failed
check; apply: a forbidden file that no rule handles, nothing written); 2 usage,
input or I/O error.
`)
}

// visibleCommands are the commands usage, completion and the man page
// show, sorted.
func visibleCommands() []string {
	return slices.DeleteFunc(slices.Sorted(maps.Keys(commands)), func(n string) bool { return commands[n].hidden })
}

// newFlagSet returns a flag set whose usage text is the command's own.
// The flag package prints its own error and then the whole usage on a bad
// flag; its output is discarded instead, so that a mistake is reported once,
// with a one-line hint to -h (see Run), and the usage only on -h.
func newFlagSet(env *Env, name, synopsis, help string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	if env.describe != nil {
		env.describe(name, synopsis, help, fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(env.Stderr, "Usage: rootfs-trim %s\n\n%s", strings.TrimSpace(name+" "+synopsis), strings.TrimSpace(help)+"\n")
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(env.Stderr, "\nFlags:\n")
			printFlags(env.Stderr, fs)
		}
	}
	return fs
}

// printFlags is flag.PrintDefaults with each flag written --name, as the
// docs and the examples write them (the flag package takes both).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if arg != "" {
			line += " " + arg
		}
		line += "\n    \t" + strings.ReplaceAll(usage, "\n", "\n    \t")
		if def := f.DefValue; def != "" && def != "false" && def != "0" {
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				def = strconv.Quote(def) // as PrintDefaults does
			}
			line += " (default " + def + ")"
		}
		fmt.Fprintln(w, line)
	})
}

// flagName finds a flag's name in the flag package's messages ("flag
// provided but not defined: -frob", "invalid value ... for flag -max-size").
var flagName = regexp.MustCompile(`(:|flag|for) -([A-Za-z])`)

// parseFlags parses args, allowing flags after the positional arguments
// (people type `list rootfs.cpio --json`).
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	usage := fs.Usage
	fs.Usage = func() {} // called by Parse on errors too; printed below for -h only
	defer func() { fs.Usage = usage }()
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				usage()
				return nil, err
			}
			// The flag package names a flag -name; the docs and -h
			// write --name.
			return nil, &usageError{flagName.ReplaceAllString(err.Error(), "$1 --$2")}
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		if args[0] == "--" {
			return append(positional, args[1:]...), nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// renamedFlag registers a string flag under name and under its old
// spelling, which keeps working (--format became --report and
// --archive-format, one name for one thing); giving both is a usage error.
func renamedFlag(fs *flag.FlagSet, name, old, value, usage string) *string {
	val, by := value, ""
	arg, _ := flag.UnquoteUsage(&flag.Flag{Usage: usage})
	fs.Var(&spelling{val: &val, by: &by, name: name, other: old}, name, usage)
	fs.Var(&spelling{val: &val, by: &by, name: old, other: name, old: true}, old, "the old spelling of --"+name+" (the same `"+arg+"`)")
	return &val
}

// spelling is one of the two names of a renamedFlag.
type spelling struct {
	val, by     *string // the value, and the name it was given under
	name, other string
	old         bool
}

func (s *spelling) String() string {
	if s.val == nil || s.old {
		return "" // the old spelling shows no default in -h
	}
	return *s.val
}

func (s *spelling) Set(v string) error {
	if *s.by != "" && *s.by != s.name {
		return fmt.Errorf("--%s and --%s are one flag (the old and the new spelling): give it once", s.name, s.other)
	}
	*s.val, *s.by = v, s.name
	return nil
}

// byteSize is a flag value with an optional K, M, G or T suffix (powers of
// 1024), for --max-size.
type byteSize int64

// sizeSuffixes are --max-size's suffixes, largest first: String gives the
// largest that divides a size exactly (32G, not 34359738368).
var sizeSuffixes = []struct {
	suffix byte
	size   int64
}{{'T', 1 << 40}, {'G', 1 << 30}, {'M', 1 << 20}, {'K', 1 << 10}}

func (b *byteSize) String() string {
	v := int64(*b)
	for _, u := range sizeSuffixes {
		if v != 0 && v%u.size == 0 {
			return fmt.Sprintf("%d%c", v/u.size, u.suffix)
		}
	}
	return fmt.Sprint(v)
}

func (b *byteSize) Set(s string) error {
	mult := int64(1)
	for _, u := range sizeSuffixes {
		if n := len(s); n > 0 && (s[n-1] == u.suffix || s[n-1] == u.suffix+'a'-'A') {
			s, mult = s[:n-1], u.size
			break
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || v <= 0 {
		return fmt.Errorf("want a positive size such as 512M or 32G")
	}
	*b = byteSize(v * mult)
	return nil
}

// inputFlags are the flags every command that reads archives has.
type inputFlags struct {
	maxSize  byteSize
	backend  backendFlag
	platform string
	// imageData is what of an image the command reads the data of
	// (container.OpenOptions.ImageData).
	imageData func(name string) bool
}

// maxSizeFlag registers --max-size, --backend and --platform.
func maxSizeFlag(fs *flag.FlagSet) *inputFlags {
	f := &inputFlags{maxSize: byteSize(container.DefaultMaxSize)}
	fs.Var(&f.maxSize, "max-size", "refuse input that expands beyond this `size` (K, M, G, T suffixes)")
	fs.Var(&f.backend, "backend", "(de)compressors: auto (the xz, zstd, pigz, lz4 tools when on PATH), go, or external")
	fs.StringVar(&f.platform, "platform", "", "of a multi-platform image, the one to read: `os/arch[/variant]`")
	return f
}

func (f *inputFlags) open() container.OpenOptions {
	return container.OpenOptions{MaxSize: int64(f.maxSize), Backend: compress.Backend(f.backend), Platform: f.platform, ImageData: f.imageData}
}

type backendFlag compress.Backend

func (b *backendFlag) String() string { return compress.Backend(*b).String() }

func (b *backendFlag) Set(s string) error {
	v, err := compress.ParseBackend(s)
	*b = backendFlag(v)
	return err
}

func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newColumns aligns tab-separated cells like tabwriter, without the padding
// that tabwriter leaves after the last non-empty cell of a line.
func newColumns(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(&rightTrimmer{w: w}, 0, 0, 2, ' ', 0)
}

// rightTrimmer drops the spaces at the end of each line written through it.
type rightTrimmer struct {
	w      io.Writer
	spaces int // held back until something other than a newline follows
}

func (t *rightTrimmer) Write(p []byte) (int, error) {
	var out []byte
	for _, c := range p {
		switch c {
		case ' ':
			t.spaces++
			continue
		case '\n':
			t.spaces = 0
		default:
			for ; t.spaces > 0; t.spaces-- {
				out = append(out, ' ')
			}
		}
		out = append(out, c)
	}
	if _, err := t.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}
