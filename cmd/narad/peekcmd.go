package main

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

// peekCmd is "narad peek": a look at what waits in a topic — a dead-letter
// topic, usually — that takes nothing away. It starts at each partition's
// consumer frontier, not at the oldest record: below the frontier every
// record is settled already (consumed, redriven, purged), and what an
// operator asks of a dead-letter topic is what still waits there. "narad
// replay TOPIC --since 0" shows everything retained instead.
func (a *app) peekCmd() *cobra.Command {
	var n int
	var raw bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "peek TOPIC [--max N]",
		Short: "Print the oldest records waiting in a topic, without taking them",
		Long: `Print up to --max records that still wait in TOPIC: from each partition's
consumer frontier (below it every record is settled), the oldest first by
commit time. It reads by offset, so nothing is leased, acknowledged or
moved: the way to look at a dead-letter topic before "narad dlq redrive".
Records at or past the frontier that are leased right now, or were
acknowledged out of order, show too. "narad replay TOPIC --since 0" shows
everything retained instead.

  narad peek orders.dlq
  narad peek orders.dlq --max 100 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 || n > 1000 {
				return flagErr("max", fmt.Sprint(n), "must be 1..1000")
			}
			w := bufio.NewWriter(a.stdout)
			defer w.Flush()
			printer, err := printerFor(w, raw, out)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			msgs, err := peekWaiting(cmd.Context(), c, args[0], n)
			if err != nil {
				return err
			}
			for _, m := range msgs {
				if err := printer.print(m); err != nil {
					return err
				}
			}
			if len(msgs) == 0 && printer.format == formatTable {
				fmt.Fprintf(a.stderr, "nothing waits in %s\n", args[0])
			}
			return w.Flush()
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&n, "max", 10, "most records to print (1..1000)")
	fs.BoolVar(&raw, "raw", false, "print payload bytes only, one per line")
	out = addOutputFlags(cmd)
	return cmd
}

// peekWaiting reads up to n records of each partition from its consumer
// frontier and returns the n oldest by commit time (ties: partition, then
// offset).
func peekWaiting(ctx context.Context, c *client.Client, topic string, n int) ([]client.Message, error) {
	info, err := c.GetTopic(ctx, topic)
	if err != nil {
		return nil, err
	}
	if len(info.PartitionStats) == 0 {
		return nil, fmt.Errorf("topic %s: the server reported no partition stats, so there is no frontier to start from", topic)
	}
	var all []client.Message
	for _, ps := range info.PartitionStats {
		part, next := ps.Index, max(ps.ConsumerFrontier, ps.OldestOffset)
		for got := 0; got < n && next < ps.NextOffset; {
			off := next
			msgs, err := c.Consume(ctx, topic, client.ConsumeOptions{Partition: &part, Offset: &off, Max: n - got})
			if err != nil {
				return nil, fmt.Errorf("partition %d: %w", part, err)
			}
			if len(msgs) == 0 {
				break
			}
			if last := msgs[len(msgs)-1].Offset; last < next {
				return nil, fmt.Errorf("partition %d: read from offset %d returned offset %d", part, next, last)
			}
			all, got, next = append(all, msgs...), got+len(msgs), msgs[len(msgs)-1].Offset+1
		}
	}
	slices.SortStableFunc(all, func(x, y client.Message) int {
		return cmp.Or(x.Time().Compare(y.Time()), cmp.Compare(x.Partition, y.Partition), cmp.Compare(x.Offset, y.Offset))
	})
	return all[:min(n, len(all))], nil
}
