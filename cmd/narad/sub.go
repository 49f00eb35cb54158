package main

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

// ackTries is how often a handle of a batch ack is sent when its own
// answer is transient (a whole request that fails is the client's to
// retry, under its RetryPolicy).
const ackTries = 3

type subFlags struct {
	max   int
	wait  time.Duration
	count int
	peek  bool
	raw   bool
}

func (a *app) subCmd() *cobra.Command {
	var f subFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "sub TOPIC",
		Short: "Consume messages and acknowledge them",
		Long: `Consume messages from TOPIC, print them and acknowledge each one after it
is printed. Runs until interrupted (exit 130), or until --count messages.
A node that restarts meanwhile is waited for, up to --retry-for.

--peek only watches: it tails every partition from its current end by
offset, acknowledges nothing and so takes nothing away from consumers.

-o json prints one message per line, the API's message object (payload
and its payload_encoding as the server sent them); -o wide adds each
delivery's count and receipt handle to the header; --raw prints the
payload bytes alone.`,
		Example: `  narad sub orders --wait 1s             # long-poll up to a second a request
  narad sub orders --count 10 -o json    # ten messages, one JSON object a line
  narad sub orders --peek                # watch without taking anything`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.max < 0 {
				return flagErr("max", fmt.Sprint(f.max), "must not be negative")
			}
			if f.count < 0 {
				return flagErr("count", fmt.Sprint(f.count), "must not be negative")
			}
			w := bufio.NewWriter(a.stdout)
			defer w.Flush()
			printer, err := printerFor(w, f.raw, out)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			s := &subscriber{
				c:       c,
				topic:   args[0],
				f:       f,
				printer: printer,
				flush:   w.Flush,
				warn:    func(format string, args ...any) { fmt.Fprintf(a.stderr, "narad: "+format+"\n", args...) },
			}
			if f.peek {
				err = s.peek(ctx)
			} else {
				err = s.consume(ctx)
			}
			if ierr := interrupted(ctx); ierr != nil {
				w.Flush()
				return ierr // stopped by the user: what was printed stands
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.max, "max", 10, "messages asked for per request")
	fs.Var(newDurationValue(&f.wait, 5*time.Second), "wait", "long-poll wait per request, a duration with its unit (1s, 500ms)")
	fs.IntVarP(&f.count, "count", "n", 0, "stop after this many messages (0: run until interrupted)")
	fs.BoolVar(&f.peek, "peek", false, "tail every partition without consuming (no acks)")
	fs.BoolVar(&f.raw, "raw", false, "print payload bytes only, one per line")
	out = addOutputFlags(cmd)
	return cmd
}

type subscriber struct {
	c       *client.Client
	topic   string
	f       subFlags
	printer messagePrinter
	flush   func() error
	warn    func(format string, args ...any)
}

// consume is the queue loop: receive, print, ack. Printing comes before the
// ack so a message is never acknowledged without having been shown.
func (s *subscriber) consume(ctx context.Context) error {
	got, failedAcks := 0, 0
	for s.f.count == 0 || got < s.f.count {
		opts := client.ConsumeOptions{Wait: s.f.wait, Max: s.f.max}
		if s.f.count > 0 && opts.Max > 0 {
			// Never take more than is left to print: a message received
			// but not printed would sit invisible until its timeout.
			opts.Max = min(opts.Max, s.f.count-got)
		}
		// The client waits out a node that restarts (its RetryPolicy), so
		// a short outage is a pause here, not the end.
		msgs, err := s.c.Consume(ctx, s.topic, opts)
		if err != nil {
			return err
		}
		for _, m := range msgs {
			if err := s.printer.print(m); err != nil {
				return err
			}
		}
		if err := s.flush(); err != nil {
			return err
		}
		got += len(msgs)
		failedAcks += s.ack(ctx, msgs)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if failedAcks > 0 {
		return fmt.Errorf("%d acknowledgements failed; those messages will be delivered again", failedAcks)
	}
	return nil
}

// ack acknowledges msgs, retrying transient failures, and returns how many
// could not be acknowledged (each is reported on stderr).
func (s *subscriber) ack(ctx context.Context, msgs []client.Message) int {
	byHandle := map[string]client.Message{}
	var handles []string
	for _, m := range msgs {
		if m.ReceiptHandle != "" {
			byHandle[m.ReceiptHandle] = m
			handles = append(handles, m.ReceiptHandle)
		}
	}
	failed, _ := ackHandles(ctx, s.c, s.topic, handles, ackTries, func(h string, err error) {
		s.warnAck(byHandle[h], err)
	})
	return failed
}

func (s *subscriber) warnAck(m client.Message, err error) {
	s.warn("ack of partition %d offset %d failed: %v", m.Partition, m.Offset, err)
}
