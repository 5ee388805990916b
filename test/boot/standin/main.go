package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) < 3 || (os.Args[1] != "probe-all" && len(os.Args) != 3) {
		fmt.Fprintln(os.Stderr, "usage: standin serve|probe SOCKET | probe-all SOCKET...")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "probe-all":
		for _, path := range os.Args[2:] {
			if served(path) {
				fmt.Println(path)
				for _, h := range holders(path) {
					fmt.Fprintln(os.Stderr, "  held by", h)
				}
			}
		}
	case "serve":
		err = serve(os.Args[2])
	case "probe":
		if !served(os.Args[2]) {
			err = fmt.Errorf("%s: not served", os.Args[2])
		}
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
}

// served reports whether a process accepts on the socket at path: serve
// accepts and closes at once, so the client reads EOF.
func served(path string) bool {
	c, err := net.DialTimeout("unix", path, 2*time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	_, err = c.Read(make([]byte, 1))
	return errors.Is(err, io.EOF)
}

// holders names the processes that have the listening socket at path open:
// its inode from /proc/net/unix, matched against /proc/*/fd.
func holders(path string) []string {
	data, err := os.ReadFile("/proc/net/unix")
	if err != nil {
		return nil
	}
	inodes := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 8 && f[7] == path {
			inodes["socket:["+f[6]+"]"] = true
		}
	}
	var out []string
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		target, err := os.Readlink(fd)
		if err != nil || !inodes[target] {
			continue
		}
		pid := strings.Split(fd, "/")[2]
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		cgroup, _ := os.ReadFile("/proc/" + pid + "/cgroup")
		out = append(out, fmt.Sprintf("pid %s %s %s", pid, strings.TrimSpace(string(comm)), strings.TrimSpace(string(cgroup))))
	}
	return out
}

func serve(path string) error {
	var l net.Listener
	if n, _ := strconv.Atoi(os.Getenv("LISTEN_FDS")); n > 0 && os.Getenv("LISTEN_PID") == strconv.Itoa(os.Getpid()) {
		// Socket activation: fd 3 is the unit's socket, which systemd owns.
		f := os.NewFile(3, path)
		var err error
		if l, err = net.FileListener(f); err != nil {
			return fmt.Errorf("socket from systemd: %w", err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		os.Remove(path) // a stale socket from a killed run
		var err error
		if l, err = net.Listen("unix", path); err != nil {
			return err
		}
	}
	// Closing the listener unlinks a socket we made, as the runtimes do
	// when they stop.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	go func() {
		<-stop
		l.Close()
		os.Exit(0)
	}()
	if err := notifyReady(); err != nil {
		return err
	}
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		c.Close()
	}
}

// notifyReady is sd_notify("READY=1") for Type=notify units.
func notifyReady() error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return fmt.Errorf("notify: %w", err)
	}
	defer c.Close()
	_, err = c.Write([]byte("READY=1"))
	return err
}
