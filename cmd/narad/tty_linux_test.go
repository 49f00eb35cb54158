package main

import (
	"fmt"
	"os"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// openPty opens a new pseudo-terminal and returns its terminal end (what
// a shell in a terminal window has as its standard files).
func openPty(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal on this machine (%v): the terminal checks need one", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatalf("numbering the pseudo-terminal: %v", err)
	}
	pts, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the pseudo-terminal's terminal end: %v", err)
	}
	t.Cleanup(func() { pts.Close() })
	return pts
}

// TestStandardFilesThatAreTerminals: /dev/null is a character device but
// no terminal, so "narad topic purge X </dev/null" refuses instead of
// prompting nobody; progress needs stderr to be a terminal as well as
// stdout, so "2>log" collects no progress lines; a real terminal on all
// three is taken for one.
func TestStandardFilesThatAreTerminals(t *testing.T) {
	pts := openPty(t)
	devNull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devNull.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()

	for _, tt := range []struct {
		name                  string
		stdin, stdout, stderr *os.File
		stdinTTY, tty         bool
	}{
		{"a terminal", pts, pts, pts, true, true},
		{"stdin from /dev/null", devNull, pts, pts, false, true},
		{"stderr into a pipe", pts, pts, w, true, false},
		{"stdout into a pipe", pts, w, pts, true, false},
		{"stderr into /dev/null", pts, pts, devNull, true, false},
	} {
		a := newApp(tt.stdin, tt.stdout, tt.stderr)
		if a.stdinTTY != tt.stdinTTY || a.tty != tt.tty {
			t.Errorf("%s: stdinTTY %v tty %v, want %v %v", tt.name, a.stdinTTY, a.tty, tt.stdinTTY, tt.tty)
		}
	}
}
