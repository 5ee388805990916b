package compress

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Backend says who does the (de)compression work. The reference tools,
// which Buildroot runs, are the default where on PATH: for xz and zstd at
// high levels the Go codecs write larger output or run slower
// (docs/performance.md); they are the fallback that works everywhere.
type Backend uint8

const (
	// Auto uses the external tool when it is on PATH, else pure Go.
	Auto Backend = iota
	// PureGo never runs an external program.
	PureGo
	// External requires the external tool.
	External
)

var backendNames = [...]string{Auto: "auto", PureGo: "go", External: "external"}

func (b Backend) String() string {
	if int(b) < len(backendNames) {
		return backendNames[b]
	}
	return "auto"
}

// ParseBackend accepts auto, go and external.
func ParseBackend(s string) (Backend, error) {
	if i := slices.Index(backendNames[:], strings.ToLower(s)); i >= 0 || s == "" {
		return Backend(max(i, 0)), nil
	}
	return Auto, fmt.Errorf("unknown backend %q (want auto, go or external)", s)
}

// lookPath is exec.LookPath, replaceable in tests.
var lookPath = exec.LookPath

// compressCommand is the external command that writes codec c: the
// first of its Compressors on PATH (the table says why those).
func compressCommand(c Codec, level, threads int, single bool) (string, []string, bool) {
	if s := spec(c); s.Compressors != nil {
		return firstOnPath(s.Compressors(level, threads, single)...)
	}
	return "", nil, false
}

// decompressCommand is the external decompressor to run for codec c:
// with Auto, only where the Go decoder is clearly slower (ToolFaster);
// with External, wherever a tool exists.
func decompressCommand(c Codec, threads int, b Backend) (string, []string, bool) {
	if s := spec(c); s.Decompressor != nil && (b == External || s.ToolFaster) {
		return firstOnPath(s.Decompressor(threads))
	}
	return "", nil, false
}

// firstOnPath is the path and arguments of the first command on PATH.
func firstOnPath(argvs ...[]string) (string, []string, bool) {
	for _, argv := range argvs {
		if p, err := lookPath(argv[0]); err == nil {
			return p, argv[1:], true
		}
	}
	return "", nil, false
}

// Threads is the default number of compression threads: every core, since
// the output does not depend on it.
func Threads() int { return runtime.NumCPU() }

// NewWriter returns a writer that compresses to w with codec c, and a
// description of what compresses, for the manifest ("xz level 9, external
// xz"). The output is a function of the input and opt only (no names, no
// timestamps; with a tool, for a given version of it), so that rebuilding
// an image gives the same bytes. xz output has CRC32 checks, the kernel's
// xz decoder refusing CRC64. Close ends the stream; it does not close w.
func NewWriter(w io.Writer, c Codec, opt WriterOptions) (io.WriteCloser, string, error) {
	if opt.Backend != PureGo && c != None && c.CanWrite() {
		level, threads := toolSettings(c, opt)
		if path, args, ok := compressCommand(c, level, threads, opt.SingleBlock); ok {
			if c == Lz4Legacy {
				// The lz4 tool uses one core; a legacy stream's blocks are
				// independent 8 MiB units, so chunks of that size go to a
				// tool each, in parallel, and come out in order: exactly
				// the tool's own output, for any thread count.
				return newChunkedWriter(w, lz4BlockTool{path, args}, threads),
					fmt.Sprintf("%s level %d, external %s in %d MiB chunks", c, level, filepath.Base(path), lz4LegacyBlock>>20), nil
			}
			ew, err := startCompressor(w, c, path, args)
			// No path and no thread count: the output depends on neither,
			// and the manifest must not either.
			desc := fmt.Sprintf("%s level %d, external %s", c, level, filepath.Base(path))
			if c == Xz && opt.SingleBlock {
				desc += ", one block"
			}
			return ew, desc, err
		}
		if opt.Backend == External {
			return nil, "", fmt.Errorf("%v: no external compressor on PATH (--backend external)", c)
		}
	}
	zw, err := newGoWriter(w, c, opt)
	if c == None {
		return zw, "none", err
	}
	level, _ := toolSettings(c, opt) // the level the Go writer takes for 0
	return zw, fmt.Sprintf("%s level %d, go", c, level), err
}

// toolSettings are opt's level and threads, Buildroot's level for 0 and
// every core for none.
func toolSettings(c Codec, opt WriterOptions) (level, threads int) {
	return cmp.Or(opt.Level, spec(c).Levels.Buildroot), cmp.Or(max(opt.Threads, 0), Threads())
}

// RunsTool reports whether NewWriter would compress c with an external
// tool, which then best writes to the output *os.File itself, not through
// a pipe back into this process (make bench: apply-gzip, 4% of the wall).
func RunsTool(c Codec, opt WriterOptions) bool {
	level, threads := toolSettings(c, opt)
	_, _, ok := compressCommand(c, level, threads, opt.SingleBlock)
	return ok && opt.Backend != PureGo
}

// extWriter feeds an external compressor.
type extWriter struct {
	codec  Codec
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr bytes.Buffer
	closed bool
	err    error
}

func startCompressor(w io.Writer, c Codec, path string, args []string) (*extWriter, error) {
	e := &extWriter{codec: c, cmd: exec.Command(path, args...)}
	e.cmd.Stdout = w
	e.cmd.Stderr = &e.stderr
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, wrapErr(c, err)
	}
	unix.FcntlInt(pw.Fd(), unix.F_SETPIPE_SZ, toolPipeSize)
	e.cmd.Stdin, e.stdin = pr, pw
	return e, startTool(c, e.cmd, pr, pw)
}

// startTool starts cmd, the tool of c, and closes theirs, its end of the
// pipe whose other end, ours, this process keeps; both on failure.
func startTool(c Codec, cmd *exec.Cmd, theirs, ours io.Closer) error {
	if err := cmd.Start(); err != nil {
		ours.Close()
		theirs.Close()
		return wrapErr(c, err)
	}
	theirs.Close()
	return nil
}

func (e *extWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	if e.closed {
		return 0, wrapErr(e.codec, errWriteClosed)
	}
	n, err := e.stdin.Write(p)
	if err != nil {
		// The tool died (often because its output failed: disk full);
		// its exit status and stderr say why.
		e.stdin.Close()
		e.err = e.wait(err)
	}
	return n, e.err
}

func (e *extWriter) Close() error {
	if !e.closed && e.err == nil {
		e.err = e.wait(e.stdin.Close())
	}
	e.closed = true
	return e.err
}

// wait is the tool's exit status, else cause, with its stderr.
func (e *extWriter) wait(cause error) error {
	if err := cmp.Or(e.cmd.Wait(), cause); err != nil {
		return wrapErr(e.codec, toolFailed(e.cmd.Path, err, &e.stderr))
	}
	return nil
}

// A FileSource is a source that reads a regular file, which an external
// decompressor can then read itself: through a pipe, xz's 8 KiB reads and
// the wake-ups of what fills it cost a tenth of the wall time (make bench:
// audit-dpkg-xzblocks).
type FileSource interface {
	io.Reader
	// ToolInput returns a file description of its own, positioned unread
	// bytes before the next byte Read would return, for a tool to read to
	// the end in place of Read (never called again); false where every
	// byte must pass through Read, to be hashed. The source closes the
	// file when released, and may report progress from its offset.
	ToolInput(unread int) (*os.File, bool)
}

// extReader reads an external decompressor's output.
type extReader struct {
	codec  Codec
	cmd    *exec.Cmd
	stdout io.ReadCloser
	stderr bytes.Buffer
	once   sync.Once
	err    error
}

func startDecompressor(r io.Reader, c Codec, path string, args []string) (*extReader, error) {
	e := &extReader{codec: c, cmd: exec.Command(path, args...)}
	e.cmd.Stdin = r
	e.cmd.Stderr = &e.stderr
	pr, pw, err := newToolPipe()
	if err != nil {
		return nil, wrapErr(c, err)
	}
	e.cmd.Stdout, e.stdout = pw, pr
	return e, startTool(c, e.cmd, pw, pr)
}

func (e *extReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.stdout.Read(p)
	if err == io.EOF {
		// The end of the output is only the end of the data if the tool
		// says the stream was whole.
		err = cmp.Or(e.finish(), err)
	}
	if err != nil {
		e.err = err
	}
	return n, err
}

func (e *extReader) finish() error {
	var err error
	e.once.Do(func() {
		if werr := e.cmd.Wait(); werr != nil {
			err = wrapErr(e.codec, toolFailed(e.cmd.Path, werr, &e.stderr))
		}
	})
	return err
}

// Close stops the tool if the data was not read to the end.
func (e *extReader) Close() error {
	e.once.Do(func() {
		e.cmd.Process.Kill()
		e.stdout.Close()
		e.cmd.Wait()
	})
	return nil
}

// toolFailed is err from the tool at path, with the end of its stderr.
func toolFailed(path string, err error, stderr *bytes.Buffer) error {
	s := strings.TrimSpace(stderr.String())
	if len(s) > 300 {
		s = s[len(s)-300:]
	}
	if s != "" {
		s = ": " + s
	}
	return fmt.Errorf("%s: %w%s", path, err, s)
}

// lz4LegacyBlock is the legacy frame's block size: chunks of it compress
// exactly as the tool would compress them inside one stream.
const lz4LegacyBlock = 8 << 20

// lz4BlockTool is the lz4 tool writing legacy streams.
type lz4BlockTool struct {
	path string
	args []string
}

// stream compresses src, one block (at most 8 MiB), into a whole legacy
// stream appended to out: the magic, then exactly one block, or an error,
// since anything else is not what can go between two other blocks.
func (t lz4BlockTool) stream(src, out []byte) ([]byte, error) {
	if len(src) == 0 || len(src) > lz4LegacyBlock {
		return nil, wrapErr(Lz4Legacy, fmt.Errorf("block of %d bytes", len(src)))
	}
	var stderr bytes.Buffer
	buf := bytes.NewBuffer(out)
	cmd := exec.Command(t.path, t.args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = bytes.NewReader(src), buf, &stderr
	if err := cmd.Run(); err != nil {
		return nil, wrapErr(Lz4Legacy, toolFailed(t.path, err, &stderr))
	}
	data := buf.Bytes()
	if len(data) < 9 || !bytes.Equal(data[:4], magicLz4Legacy) ||
		int(binary.LittleEndian.Uint32(data[4:8])) != len(data)-8 {
		return nil, wrapErr(Lz4Legacy, fmt.Errorf("%s: unexpected output for a block of %d bytes", t.path, len(src)))
	}
	return data, nil
}

// chunkedWriter compresses the legacy lz4 blocks with a run of the tool
// each, several at a time, and writes the results in order. Its buffers
// are recycled: fresh ones per chunk made the collector keep twice what
// was in flight (113 MiB peak RSS for `repack` to lz4; make bench: rss).
type chunkedWriter struct {
	w       io.Writer
	tool    lz4BlockTool
	buf     []byte
	pending []chan chunkResult // at most workers: one tool each
	workers int
	inBufs  chan []byte // spare chunk buffers
	outBufs chan []byte // spare output buffers
	err     error
	closed  bool
	wrote   bool // the stream's magic was written
}

type chunkResult struct {
	data []byte
	err  error
}

func newChunkedWriter(w io.Writer, tool lz4BlockTool, workers int) *chunkedWriter {
	return &chunkedWriter{w: w, tool: tool, workers: workers,
		inBufs:  make(chan []byte, workers+1),
		outBufs: make(chan []byte, workers+1),
	}
}

// spare returns a buffer from pool, or a new one of capacity n.
func spare(pool chan []byte, n int) []byte {
	select {
	case b := <-pool:
		return b[:0]
	default:
		return make([]byte, 0, n)
	}
}

// recycle offers b back to pool; a full pool lets it go.
func recycle(pool chan []byte, b []byte) {
	select {
	case pool <- b:
	default:
	}
}

// chunkOutBound is room for the tool's output for one chunk: the magic
// and a block of at most LZ4_compressBound(8 MiB), plus the 512 bytes
// bytes.Buffer.ReadFrom wants free before each read, lest it regrow.
const chunkOutBound = lz4LegacyBlock + lz4LegacyBlock/255 + 4096

func (cw *chunkedWriter) Write(p []byte) (int, error) {
	if cw.err != nil {
		return 0, cw.err
	}
	n := len(p)
	for len(p) > 0 {
		if cw.buf == nil {
			cw.buf = spare(cw.inBufs, lz4LegacyBlock)
		}
		k := min(lz4LegacyBlock-len(cw.buf), len(p))
		cw.buf = append(cw.buf, p[:k]...)
		p = p[k:]
		if len(cw.buf) == lz4LegacyBlock {
			if err := cw.dispatch(); err != nil {
				return 0, err
			}
		}
	}
	return n, nil
}

// dispatch starts compressing the buffered chunk, after writing out the
// oldest results if every slot is busy.
func (cw *chunkedWriter) dispatch() error {
	chunk := cw.buf
	cw.buf = nil
	for len(cw.pending) >= cw.workers {
		if err := cw.drainOne(); err != nil {
			return err
		}
	}
	done := make(chan chunkResult, 1)
	cw.pending = append(cw.pending, done)
	outBuf := spare(cw.outBufs, chunkOutBound)
	go func() {
		data, err := cw.tool.stream(chunk, outBuf)
		recycle(cw.inBufs, chunk[:0])
		done <- chunkResult{data: data, err: err}
	}()
	return nil
}

// drainOne writes the oldest result, a whole legacy stream (the magic,
// one block) whose magic is dropped after the first: exactly the tool's
// output for the whole input, whatever the number of workers.
func (cw *chunkedWriter) drainOne() error {
	r := <-cw.pending[0]
	cw.pending = cw.pending[1:]
	if cw.err != nil {
		return cw.err
	}
	if r.err != nil {
		cw.err = r.err
		return r.err
	}
	data := r.data
	if cw.wrote {
		data = data[4:]
	}
	cw.wrote = true
	if _, err := cw.w.Write(data); err != nil {
		cw.err = err
	}
	recycle(cw.outBufs, r.data[:0])
	return cw.err
}

func (cw *chunkedWriter) Close() error {
	if cw.closed {
		return cw.err
	}
	cw.closed = true
	if cw.err == nil && len(cw.buf) > 0 {
		cw.dispatch()
	}
	for len(cw.pending) > 0 {
		cw.drainOne()
	}
	if cw.err == nil && !cw.wrote {
		// No input: the tool writes the magic alone.
		_, cw.err = cw.w.Write(magicLz4Legacy)
	}
	return cw.err
}

// Lz4LegacyBlockTool returns a function that compresses one legacy lz4
// block (at most 8 MiB) with the lz4 tool at level, as `lz4 -l -LEVEL`
// does inside a whole stream, and returns it with its 4-byte size header;
// false with PureGo or no lz4 on PATH (an error for External). For the
// splicer: the tool's -9 is faster and smaller than pierrec's HC (make
// bench: apply-lz4), and gives the bytes the full path would write.
func Lz4LegacyBlockTool(level int, b Backend) (func(src []byte) ([]byte, error), bool, error) {
	if b == PureGo {
		return nil, false, nil
	}
	level, _ = toolSettings(Lz4Legacy, WriterOptions{Level: level})
	path, args, ok := compressCommand(Lz4Legacy, level, 1, false)
	if !ok {
		if b == External {
			return nil, false, fmt.Errorf("%v: no external compressor on PATH (--backend external)", Lz4Legacy)
		}
		return nil, false, nil
	}
	tool := lz4BlockTool{path, args}
	return func(src []byte) ([]byte, error) {
		data, err := tool.stream(src, make([]byte, 0, len(src)+len(src)/255+64))
		if err != nil {
			return nil, err
		}
		return data[4:], nil
	}, true, nil
}
