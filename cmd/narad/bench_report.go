package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
)

// benchReport is everything a bench measured: printed as text, or with
// --json as one JSON document (these field names are its contract).
type benchReport struct {
	Topic          string       `json:"topic"`
	Scratch        bool         `json:"scratch"`
	ScratchDeleted bool         `json:"scratch_deleted,omitempty"`
	Partitions     int          `json:"partitions"`
	Settings       benchSetting `json:"settings"`
	Interrupted    bool         `json:"interrupted"`
	Produce        *phaseReport `json:"produce"`
	Consume        *phaseReport `json:"consume,omitempty"`
	// EndToEnd (--e2e) is per record: from the start of its produce
	// request to a consumer holding it, in microseconds.
	EndToEnd *latencyReport `json:"end_to_end_us,omitempty"`
}

type benchSetting struct {
	// API is "sqs" when --api sqs measured Amazon SQS's JSON protocol;
	// left out for the native /v1 API, so earlier reports read the same.
	API        string `json:"api,omitempty"`
	Producers  int    `json:"producers"`
	Consumers  int    `json:"consumers"`
	Messages   int    `json:"messages,omitempty"`    // count mode
	DurationMs int64  `json:"duration_ms,omitempty"` // --duration mode
	Size       int    `json:"size"`
	Batch      int    `json:"batch"`
	ConsumeMax int    `json:"consume_max,omitempty"` // with consumers
	Rate       int    `json:"rate,omitempty"`        // --rate
	E2E        bool   `json:"e2e,omitempty"`
	ViaChild   bool   `json:"via_child,omitempty"`
}

type phaseReport struct {
	Messages          int64   `json:"messages"`
	Requests          int64   `json:"requests"`
	Errors            int64   `json:"errors"`
	FirstError        string  `json:"first_error,omitempty"`
	Stopped           string  `json:"stopped,omitempty"` // hard_error, failures, interrupted
	ElapsedSeconds    float64 `json:"elapsed_seconds"`
	MessagesPerSecond float64 `json:"messages_per_second"`
	BytesPerSecond    float64 `json:"bytes_per_second"`
	AcksRetried       int     `json:"acks_retried,omitempty"`
	// LatencyUs is per request, in microseconds.
	LatencyUs latencyReport `json:"latency_us"`
}

type latencyReport struct {
	Min  int64   `json:"min"`
	Mean float64 `json:"mean"`
	P50  int64   `json:"p50"`
	P90  int64   `json:"p90"`
	P99  int64   `json:"p99"`
	P999 int64   `json:"p99_9"`
	Max  int64   `json:"max"`
}

func newBenchReport(f benchFlags, t benchTarget) *benchReport {
	r := &benchReport{Topic: t.name, Scratch: t.scratch, Partitions: t.partitions, Settings: benchSetting{
		Producers: f.producers, Consumers: f.consumers, Size: f.size, Batch: f.batch,
		ConsumeMax: consumeMaxOf(f), Rate: f.rate, E2E: f.e2e, ViaChild: f.viaChild,
	}}
	if f.api == "sqs" {
		r.Settings.API = f.api
	}
	if f.duration > 0 {
		r.Settings.DurationMs = f.duration.Milliseconds()
	} else {
		r.Settings.Messages = f.messages
	}
	return r
}

func (s *phaseStats) report(size int) *phaseReport {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs := s.messages.Load()
	secs := s.elapsed.Seconds()
	r := &phaseReport{
		Messages: msgs, Requests: s.requests, Errors: s.errors, Stopped: s.stopped,
		ElapsedSeconds: secs, AcksRetried: s.retried,
	}
	if s.firstErr != nil {
		r.FirstError = s.firstErr.Error()
	}
	if secs > 0 {
		r.MessagesPerSecond = float64(msgs) / secs
		r.BytesPerSecond = r.MessagesPerSecond * float64(size)
	}
	if s.hist.TotalCount() > 0 {
		r.LatencyUs = latencyReport{
			Min: s.hist.Min(), Mean: s.hist.Mean(),
			P50: s.hist.ValueAtPercentile(50), P90: s.hist.ValueAtPercentile(90),
			P99: s.hist.ValueAtPercentile(99), P999: s.hist.ValueAtPercentile(99.9),
			Max: s.hist.Max(),
		}
	}
	return r
}

// failure is the phase's error for the exit status, nil when every
// request went through.
func (s *phaseStats) failure() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.hardErr != nil:
		return fmt.Errorf("%s stopped at the first refusal: %w", s.name, s.hardErr)
	case s.errors > 0:
		return fmt.Errorf("%s: %d of %d requests failed: %w", s.name, s.errors, s.requests, s.firstErr)
	}
	return nil
}

func (r *benchReport) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return printJSON(w, r)
	}
	var sb strings.Builder
	kind := "existing"
	if r.Scratch {
		kind = "scratch"
	}
	size := formatBytes(int64(r.Settings.Size))
	amount := fmt.Sprintf("%d messages of %s", r.Settings.Messages, size)
	if r.Settings.DurationMs > 0 {
		amount = fmt.Sprintf("messages of %s for %s", size, formatMs(r.Settings.DurationMs))
	}
	fmt.Fprintf(&sb, "bench: topic %s (%s, %d partitions)", r.Topic, kind, r.Partitions)
	if r.Settings.API == "sqs" {
		sb.WriteString(" through SQS's JSON protocol")
	}
	fmt.Fprintf(&sb, ": %d producers, %s, %d per request", r.Settings.Producers, amount, r.Settings.Batch)
	if r.Settings.Consumers > 0 {
		fmt.Fprintf(&sb, ", %d consumers", r.Settings.Consumers)
	}
	if r.Settings.Rate > 0 {
		fmt.Fprintf(&sb, ", paced at %d msg/s", r.Settings.Rate)
	}
	sb.WriteByte('\n')
	r.Produce.text(&sb, "produce")
	if r.Consume != nil {
		r.Consume.text(&sb, "consume")
	}
	if l := r.EndToEnd; l != nil {
		what := "produce to consumed"
		if r.Settings.ViaChild {
			what = "produce to consumed from the child"
		}
		fmt.Fprintf(&sb, "end-to-end (%s): p50 %s p90 %s p99 %s p99.9 %s max %s\n", what,
			micros(l.P50), micros(l.P90), micros(l.P99), micros(l.P999), micros(l.Max))
	}
	if r.Interrupted {
		sb.WriteString("bench: interrupted: the figures are partial\n")
	}
	_, err := io.WriteString(w, sb.String())
	return err
}

func (p *phaseReport) text(sb *strings.Builder, phase string) {
	elapsed := time.Duration(p.ElapsedSeconds * float64(time.Second))
	if elapsed >= 100*time.Millisecond {
		elapsed = elapsed.Round(time.Millisecond) // a short run keeps its µs: never "in 0s"
	}
	fmt.Fprintf(sb, "%s: %d messages in %s: %.0f msg/s, %s/s; %d requests\n",
		phase, p.Messages, elapsed.Round(time.Microsecond), p.MessagesPerSecond,
		humanize.IBytes(uint64(p.BytesPerSecond)), p.Requests)
	if p.Requests > 0 {
		l := p.LatencyUs
		fmt.Fprintf(sb, "%s: latency p50 %s p90 %s p99 %s p99.9 %s max %s\n", phase,
			micros(l.P50), micros(l.P90), micros(l.P99), micros(l.P999), micros(l.Max))
	}
	if p.AcksRetried > 0 {
		fmt.Fprintf(sb, "%s: %d acks retried after a transient answer (503: the partition's acked-ahead window was full)\n", phase, p.AcksRetried)
	}
	switch p.Stopped {
	case stoppedHardError:
		fmt.Fprintf(sb, "%s: stopped at the first refusal: %s\n", phase, p.FirstError)
	case stoppedFailures:
		fmt.Fprintf(sb, "%s: stopped: every worker failed %d requests in a row\n", phase, benchFailures)
	}
	if p.Errors > 0 && p.Stopped != stoppedHardError {
		fmt.Fprintf(sb, "%s: %d of %d requests failed; first: %s\n", phase, p.Errors, p.Requests, p.FirstError)
	}
}

// micros prints a latency in microseconds as a duration: "850µs",
// "1.42ms", "2.1s".
func micros(us int64) string {
	d := time.Duration(us) * time.Microsecond
	if d >= time.Millisecond {
		d = d.Round(10 * time.Microsecond)
	}
	return d.String()
}

// consumeMaxOf is --consume-max when the bench consumes, else nothing.
func consumeMaxOf(f benchFlags) int {
	if f.consumers == 0 {
		return 0
	}
	return f.consumeMax
}
