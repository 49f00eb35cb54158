package main

import (
	"fmt"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

func (a *app) offsetsCmd() *cobra.Command {
	var at string
	var partition int
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "offsets TOPIC --time TIME [--partition P]",
		Short: "Print each partition's first offset at or after a time",
		Long: `Print, per partition, the first offset whose record was committed at or
after --time: RFC 3339, Unix milliseconds, or a duration ago ("10m", "2h",
"7d"). The oldest retained offset when the time is before every record,
the partition's end when no record is that new. The broker finds it by
bisection, without reading the partition; nothing changes. Needs the
consume grant, as replay does.

A partition that cannot answer now (being moved, its owner down) shows
why, and the command then exits 1 after printing the others.

  narad offsets orders --time 10m
  narad offsets orders --time 2026-12-03T18:00:00Z --partition 1 -o json`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			fs := cmd.Flags()
			var pinned *int
			if fs.Changed("partition") {
				if partition < 0 {
					return flagErr("partition", fmt.Sprint(partition), "must not be negative")
				}
				pinned = &partition
			}
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			v, err := c.OffsetsAt(cmd.Context(), args[0], at, pinned)
			if err != nil {
				return err
			}
			if format == formatJSON {
				err = printJSON(a.stdout, v)
			} else {
				err = printOffsets(a, v)
			}
			if err != nil {
				return err
			}
			failed := 0
			for _, p := range v.Partitions {
				if p.Offset == nil {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%s of %d could not answer now; run it again", plural(failed, "partition"), len(v.Partitions))
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&at, "time", "", `the time: RFC 3339, Unix ms, or a duration ago ("10m")`)
	fs.IntVar(&partition, "partition", 0, "only this partition")
	_ = cmd.MarkFlagRequired("time")
	out = addOutputFlags(cmd)
	return cmd
}

// printOffsets is the table: one partition a line, the time above.
func printOffsets(a *app, v client.OffsetsAtTime) error {
	fmt.Fprintf(a.stdout, "offsets of %s at %s\n", v.Topic, time.UnixMilli(v.TimeMs).UTC().Format(time.RFC3339Nano))
	tw := newTable(a.stdout)
	fmt.Fprintln(tw, "PARTITION\tOFFSET\tERROR")
	for _, p := range v.Partitions {
		off := "-"
		if p.Offset != nil {
			off = fmt.Sprint(*p.Offset)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\n", p.Partition, off, orDash(p.Error))
	}
	return tw.Flush()
}
