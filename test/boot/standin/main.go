// Command standin stands in for a container runtime in the booted minikube
// test (test/boot, TestBootMinikube): a unit of the runtime's name runs it,
// and it holds the runtime's real CRI socket, which is all the test checks
// of a runtime. cri-o is not in Debian 12, and the real runtimes would not
// fit the test's time; nothing else about them matters to /etc.
//
//	standin serve SOCKET   listen on SOCKET (or on the socket systemd
//	                       passes, for socket-activated units) until
//	                       SIGTERM; tell systemd when ready (Type=notify)
//	standin probe SOCKET   exit 0 if something accepts a connection on SOCKET
//	standin probe-all SOCKET...
//	                       print each SOCKET that accepts a connection
package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
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
			if c, err := net.DialTimeout("unix", path, 2*time.Second); err == nil {
				c.Close()
				fmt.Println(path)
			}
		}
	case "serve":
		err = serve(os.Args[2])
	case "probe":
		var c net.Conn
		if c, err = net.DialTimeout("unix", os.Args[2], 2*time.Second); err == nil {
			c.Close()
		}
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "standin:", err)
		os.Exit(1)
	}
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
