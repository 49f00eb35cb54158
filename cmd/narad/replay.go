package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

type replayFlags struct {
	partition int
	from, to  uint64
	max       int
	raw       bool
}

func (a *app) replayCmd() *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay TOPIC --partition P [--from N] [--to M]",
		Short: "Print a partition's records by offset, without consuming them",
		Long: `Print the records of one partition from offset --from (default: the oldest
retained) to --to inclusive (default: the current end). Replays read by
offset: nothing is acknowledged and consumers are not affected.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			if f.partition < 0 {
				return errors.New("--partition must not be negative")
			}
			if f.max < 1 {
				return errors.New("--max must be at least 1")
			}
			if fs.Changed("from") && fs.Changed("to") && f.to < f.from {
				return fmt.Errorf("--to %d is before --from %d", f.to, f.from)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			ctx, stop := withSignals(cmd.Context())
			defer stop()
			out := bufio.NewWriter(a.stdout)
			defer out.Flush()
			r := replayer{
				c:       c,
				topic:   args[0],
				f:       f,
				hasFrom: fs.Changed("from"),
				hasTo:   fs.Changed("to"),
				printer: messagePrinter{w: out, raw: f.raw},
			}
			err = r.run(ctx)
			if ctx.Err() != nil && cmd.Context().Err() == nil {
				return nil // interrupted by the user
			}
			if err != nil {
				return err
			}
			return out.Flush()
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&f.partition, "partition", 0, "partition to read (required)")
	fs.Uint64Var(&f.from, "from", 0, "first offset (default: the oldest retained)")
	fs.Uint64Var(&f.to, "to", 0, "last offset, inclusive (default: the current end)")
	fs.IntVar(&f.max, "max", 100, "records asked for per request")
	fs.BoolVar(&f.raw, "raw", false, "print payload bytes only, one per line")
	_ = cmd.MarkFlagRequired("partition")
	return cmd
}

type replayer struct {
	c              *client.Client
	topic          string
	f              replayFlags
	hasFrom, hasTo bool
	printer        messagePrinter
}

func (r replayer) run(ctx context.Context) error {
	off := r.f.from
	if !r.hasFrom {
		// Offset 0 may be long gone to retention; start where the
		// partition actually begins.
		info, err := r.c.GetTopic(ctx, r.topic)
		if err != nil {
			return err
		}
		found := false
		for _, p := range info.PartitionStats {
			if p.Index == r.f.partition {
				off, found = p.OldestOffset, true
			}
		}
		if !found && len(info.PartitionStats) > 0 {
			return fmt.Errorf("topic %s has no partition %d", r.topic, r.f.partition)
		}
		if r.hasTo && r.f.to < off {
			return fmt.Errorf("--to %d is before the oldest retained offset %d", r.f.to, off)
		}
	}
	part := r.f.partition
	for {
		n := r.f.max
		if r.hasTo {
			if rem := r.f.to - off; rem < uint64(n) { // written so --to 2^64-1 cannot overflow
				n = int(rem) + 1
			}
		}
		start := off
		msgs, err := r.c.Consume(ctx, r.topic, client.ConsumeOptions{Partition: &part, Offset: &start, Max: n})
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil // caught up with the end of the partition
		}
		for _, m := range msgs {
			if r.hasTo && m.Offset > r.f.to {
				return nil
			}
			if err := r.printer.print(m); err != nil {
				return err
			}
		}
		last := msgs[len(msgs)-1].Offset
		if last < off {
			return fmt.Errorf("partition %d: read from offset %d returned offset %d", part, off, last)
		}
		off = last + 1
		if r.hasTo && off > r.f.to {
			return nil
		}
	}
}
