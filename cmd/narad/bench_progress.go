package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/schollz/progressbar/v3"
)

// benchTick is how often the bar is redrawn: often enough to look live,
// rarely enough that drawing costs the bench nothing measurable.
const benchTick = 100 * time.Millisecond

// progress shows a bar on stderr while a phase runs, only when stdout and
// stderr are terminals (app.tty, as every long command of the CLI: piped
// output and a redirected stderr stay clean).
// Counted phases show messages done of total, the rate and the time left;
// a --duration phase shows the time gone of the duration, with the count
// and the rate. The bar reads the phase's counter on its own ticker, so
// the workers never wait on it. The returned func stops and clears it.
func (b *bench) progress(s *phaseStats, total int64, timed bool) func() {
	if !b.a.tty {
		return func() {}
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(b.a.stderr),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(benchTick),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetRenderBlankState(true),
		progressbar.OptionSetDescription(s.name),
	}
	start := time.Now()
	var bar *progressbar.ProgressBar
	var update func()
	if timed {
		span := b.f.duration
		bar = progressbar.NewOptions64(span.Milliseconds(), opts...)
		update = func() {
			gone := time.Since(start)
			n := s.messages.Load()
			bar.Describe(fmt.Sprintf("%s %s msg (%s msg/s)", s.name, humanize.Comma(n),
				humanize.Comma(int64(float64(n)/max(gone.Seconds(), 1e-3)))))
			_ = bar.Set64(min(gone, span).Milliseconds())
		}
	} else {
		bar = progressbar.NewOptions64(total, append(opts,
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("msg"))...)
		update = func() { _ = bar.Set64(s.messages.Load()) }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(benchTick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				update()
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		_ = bar.Exit()
		_ = bar.Clear()
	}
}
