package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
)

// printTopicDetail renders "topic info": settings first, then one row per
// partition with its offsets and backlog.
func printTopicDetail(w io.Writer, t client.TopicDetail) error {
	tw := newTable(w)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("name", t.Name)
	row("partitions", fmt.Sprint(t.Partitions))
	row("retention", formatMs(t.RetentionMs))
	row("visibility timeout", formatMs(t.VisibilityTimeoutMs))
	row("max in flight", fmt.Sprintf("%d per partition", t.MaxInFlightPerPartition))
	row("max acked ahead", fmt.Sprintf("%d per partition", t.MaxAckedAheadPerPartition))
	if !t.CreatedAt.IsZero() {
		row("created", t.CreatedAt.UTC().Format(time.RFC3339))
	}
	if t.Owner != "" {
		row("owner", t.Owner)
	}
	if t.Role != "" {
		row("role", t.Role)
	}
	if t.Parent != "" {
		row("parent", fmt.Sprintf("%s (delay %s, attach epoch %s)", t.Parent, formatMs(t.FanoutDelayMs), t.AttachEpoch))
	}
	if len(t.Children) > 0 {
		row("children", strings.Join(t.Children, ", "))
	}
	if len(t.Schema) > 0 && string(t.Schema) != "null" {
		row("schema", string(t.Schema))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(t.PartitionStats) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = newTable(w)
	fmt.Fprintln(tw, "PARTITION\tOWNER\tOLDEST\tNEXT\tHIGH WATERMARK\tFRONTIER\tBACKLOG\tSEGMENTS\tSIZE\tAVAILABLE")
	for _, p := range t.PartitionStats {
		backlog := uint64(0)
		if p.NextOffset > p.ConsumerFrontier {
			backlog = p.NextOffset - p.ConsumerFrontier
		}
		avail := "yes"
		if p.Available != nil && !*p.Available {
			avail = "NO"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", p.Index, orDash(p.OwnerNode), p.OldestOffset,
			p.NextOffset, p.HighWatermark, p.ConsumerFrontier, backlog, p.Segments, formatBytes(p.SizeBytes), avail)
	}
	return tw.Flush()
}
