package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// progress draws a one-line status that rewrites itself. It is enabled only
// when stdout and stderr are terminals (app.tty), and writes to stderr so
// it can never end up in a pipe or file with the command's real output.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	enabled bool
	last    time.Time
	drawn   bool
}

func (a *app) newProgress() *progress {
	return &progress{w: a.stderr, enabled: a.tty}
}

// update redraws at most ten times a second; callers may call it per item.
func (p *progress) update(format string, args ...any) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= 100*time.Millisecond {
		p.last = now
		p.drawn = true
		fmt.Fprintf(p.w, "\r\x1b[K"+format, args...)
	}
}

// done clears the status line and, on a terminal, prints a last line.
func (p *progress) done(format string, args ...any) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	if format != "" {
		fmt.Fprintf(p.w, format+"\n", args...)
	}
}
