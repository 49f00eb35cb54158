package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/header"
	"github.com/spf13/cobra"
)

type pubFlags struct {
	key       string
	partition int
	file      string
	count     int
	rate      float64
	lines     bool
	headers   []string
	delay     time.Duration
	at        string
	msgID     string
	format    outputFormat
}

func (a *app) pubCmd() *cobra.Command {
	var f pubFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "pub TOPIC [MSG]",
		Short: "Publish a message (MSG, --file, or standard input)",
		Long: `Publish a message to TOPIC.

The payload is MSG, the contents of --file, or else standard input. It is
sent as bytes: JSON, text and binary all arrive unchanged. With --lines each
line is a message of its own.

--count N sends N messages; "{i}" in MSG becomes the message's index (from
0), so 'narad pub orders '{"n":{i}}' --count 100' sends 100 distinct ones.
--rate caps the pace in messages per second. Interrupted, it exits 130.

--header NAME=VALUE (repeatable) gives every message a record header;
names are lower-case [a-z0-9._-], and those beginning "narad-" are the
broker's own.

--delay 10m or --at TIME schedules the message: it is stored at once, but
queue consumers are offered it only when it falls due, that long after
the broker accepts it or at TIME (RFC 3339, or Unix milliseconds). Replay
shows it at once. At most a year ahead; --delay 0 is due at once even on
a topic with a delivery delay (topic add --delivery-delay).

--msg-id ID gives the message a producer id: on a topic with a dedupe
window the topic stores it at most once however often it is sent, so a
pub retried after a failure does not duplicate it. Without --key the
message is placed by the id's hash. The id names one message, so it is
refused with --count above 1 or with --lines giving several.

Each message's id, which the broker gave it when it accepted it (the id
consume and replay show), is printed on its own line; with -o json, one
{"id": ..., "partition": ...} object a line.`,
		Args:              cobra.RangeArgs(1, 2),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			var err error
			if f.format, err = out.format(); err != nil {
				return err
			}
			err = a.publish(ctx, cmd, args, f)
			if ierr := interrupted(ctx); ierr != nil {
				return ierr // Ctrl-C during --count: exit 130
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.key, "key", "", "message key (messages with one key keep their order)")
	fs.IntVar(&f.partition, "partition", 0, "send to this partition instead of routing by key")
	fs.StringVarP(&f.file, "file", "f", "", "read the payload from this file")
	fs.IntVarP(&f.count, "count", "n", 1, `send this many messages; "{i}" in MSG is replaced by the index`)
	fs.Float64Var(&f.rate, "rate", 0, "at most this many messages per second (0: no limit)")
	fs.BoolVar(&f.lines, "lines", false, "send each line of the input as its own message")
	fs.StringArrayVar(&f.headers, "header", nil, "a record header NAME=VALUE for every message (repeatable)")
	fs.Var(newDurationValue(&f.delay, 0), "delay", "offer the message to queue consumers this long after it is accepted, e.g. 10m (at most 365d)")
	fs.StringVar(&f.at, "at", "", "offer the message to queue consumers at this time: RFC 3339 or Unix ms")
	fs.StringVar(&f.msgID, "msg-id", "", "the message's producer id (deduplicated on a topic with a dedupe window; one message only)")
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) publish(ctx context.Context, cmd *cobra.Command, args []string, f pubFlags) error {
	topic := args[0]
	if f.count < 1 {
		return flagErr("count", strconv.Itoa(f.count), "must be at least 1")
	}
	if f.rate < 0 {
		return flagErr("rate", strconv.FormatFloat(f.rate, 'g', -1, 64), "must not be negative")
	}
	payloads, fromArg, err := a.readPayloads(args, f)
	if err != nil {
		return err
	}
	var opts client.ProduceOptions
	if cmd.Flags().Changed("key") {
		opts.Key = &f.key
	}
	if cmd.Flags().Changed("partition") {
		if f.partition < 0 {
			return flagErr("partition", strconv.Itoa(f.partition), "must not be negative")
		}
		opts.Partition = &f.partition
	}
	if opts.Headers, err = parseHeaderFlags(f.headers); err != nil {
		return err
	}
	if opts.Delay, opts.DeliverAt, err = scheduleFlags(cmd.Flags(), f); err != nil {
		return err
	}
	if cmd.Flags().Changed("msg-id") {
		// One id on several messages would have the topic keep the first
		// and drop the rest as duplicates: refused rather than done.
		if n := f.count * len(payloads); n > 1 {
			return flagErr("msg-id", f.msgID, "names one message, and this pub sends %d (--count or --lines)", n)
		}
		if f.msgID == "" {
			return flagErr("msg-id", `""`, "must not be empty")
		}
		opts.MsgID = f.msgID
	}
	// "{i}" is only expanded when the user asked for several copies of an
	// argument; a single message, a file or stdin is sent as typed.
	expand := fromArg && cmd.Flags().Changed("count")

	c, err := a.client()
	if err != nil {
		return err
	}
	total := f.count * len(payloads)
	prog := a.newProgress()
	pace := newLimiter(f.rate)
	start := time.Now()
	sent := 0
	for i := range f.count {
		for _, p := range payloads {
			if err := pace.Wait(ctx); err != nil {
				return err
			}
			if expand {
				p = bytes.ReplaceAll(p, []byte("{i}"), []byte(strconv.Itoa(i)))
			}
			acc, err := c.ProduceWithID(ctx, topic, p, opts)
			if err != nil {
				if sent > 0 {
					return fmt.Errorf("after %d of %d messages: %w", sent, total, err)
				}
				return err
			}
			if err := a.printProduced(acc, f.format); err != nil {
				return err
			}
			sent++
			prog.update("published %d/%d", sent, total)
		}
	}
	elapsed := time.Since(start)
	if total > 1 {
		prog.done("published %d messages to %s in %s (%.0f msg/s)", sent, topic, elapsed.Round(time.Millisecond), float64(sent)/elapsed.Seconds())
	} else {
		prog.done("")
	}
	return nil
}

// printProduced prints a published message's id: a line of its own, or
// with -o json the answer's object on one line. A node that gave no id
// (one that predates message ids) leaves the table form silent.
func (a *app) printProduced(acc client.Produced, format outputFormat) error {
	if format == formatJSON {
		return printJSONLine(a.stdout, acc)
	}
	if acc.ID == "" {
		return nil
	}
	_, err := fmt.Fprintln(a.stdout, acc.ID)
	return err
}

// parseHeaderFlags reads --header NAME=VALUE flags (split at the first
// "="; the value may be empty) and holds them to the broker's own rules
// (header.Check, as the API applies them), so the CLI refuses exactly
// the headers the API refuses. Names are checked as typed: the API
// refuses "BadName" in a batch body, and lower-casing it here would
// store a name the user never wrote.
func parseHeaderFlags(flags []string) (map[string]string, error) {
	if len(flags) == 0 {
		return nil, nil
	}
	hs := make([]header.Header, 0, len(flags))
	for _, kv := range flags {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return nil, flagErr("header", kv, "want NAME=VALUE")
		}
		hs = append(hs, header.Header{Name: name, Value: value})
	}
	if err := header.Check(hs, header.Client); err != nil {
		return nil, fmt.Errorf("--header: %w", err)
	}
	out := make(map[string]string, len(hs))
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out, nil
}

// readPayloads returns the payloads to send and whether they came from the
// MSG argument.
func (a *app) readPayloads(args []string, f pubFlags) ([][]byte, bool, error) {
	var data []byte
	fromArg := false
	switch {
	case len(args) == 2 && f.file != "":
		return nil, false, errors.New("give either MSG or --file, not both")
	case len(args) == 2:
		data, fromArg = []byte(args[1]), true
	case f.file != "":
		b, err := os.ReadFile(f.file)
		if err != nil {
			return nil, false, err
		}
		data = b
	default:
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return nil, false, fmt.Errorf("reading standard input: %w", err)
		}
		data = b
	}
	if !f.lines {
		return [][]byte{data}, fromArg, nil
	}
	var out [][]byte
	for line := range bytes.Lines(data) {
		line = bytes.TrimRight(line, "\r\n")
		if len(line) > 0 {
			out = append(out, line)
		}
	}
	if len(out) == 0 {
		return nil, false, errors.New("--lines: the input has no non-empty line")
	}
	return out, fromArg, nil
}
