package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/narad-io/narad/client"
)

// printTopicDetail renders "topic info": settings first, then one row per
// partition with its offsets and backlog (wide: and its oldest segment).
func printTopicDetail(w io.Writer, t client.TopicDetail, wide bool) error {
	tw := newTable(w)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("name", t.Name)
	row("partitions", fmt.Sprint(t.Partitions))
	row("retention", formatRetention(t.RetentionMs))
	row("visibility timeout", formatMs(t.VisibilityTimeoutMs))
	row("max in flight", fmt.Sprintf("%d per partition", t.MaxInFlightPerPartition))
	row("max acked ahead", fmt.Sprintf("%d per partition", t.MaxAckedAheadPerPartition))
	if t.DedupeWindowMs > 0 {
		row("dedupe window", formatMs(t.DedupeWindowMs))
	}
	if t.ReplicationFactor > 0 {
		row("replication factor", fmt.Sprint(t.ReplicationFactor))
	}
	if !t.CreatedAt.IsZero() {
		row("created", formatTime(t.CreatedAt))
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
	if t.MaxDeliveries > 0 || t.DeadLetterTopic != "" {
		row("dead letters", deadLetterLine(t.Topic))
	}
	if hasSchema(t.Topic) {
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
	header := "PARTITION\tOWNER\tOLDEST\tNEXT\tHIGH WATERMARK\tFRONTIER\tBACKLOG\tSEGMENTS\tSIZE\tAVAILABLE"
	if wide {
		header += "\tOLDEST SEGMENT AT"
	}
	fmt.Fprintln(tw, header)
	for _, p := range t.PartitionStats {
		backlog := uint64(0)
		if p.NextOffset > p.ConsumerFrontier {
			backlog = p.NextOffset - p.ConsumerFrontier
		}
		avail := "yes"
		if p.Available != nil && !*p.Available {
			avail = "NO"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%s", p.Index, orDash(p.OwnerNode), p.OldestOffset,
			p.NextOffset, p.HighWatermark, p.ConsumerFrontier, backlog, p.Segments, formatBytes(p.SizeBytes), avail)
		if wide {
			fmt.Fprintf(tw, "\t%s", formatTime(p.OldestSegmentAt))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// deadLetterLine is the dead-letter policy in a sentence.
func deadLetterLine(t client.Topic) string {
	if t.MaxDeliveries == 0 {
		return fmt.Sprintf("off (dead-letter topic %s kept)", t.DeadLetterTopic)
	}
	return fmt.Sprintf("to %s after %s", t.DeadLetterTopic, deliveriesOf(t.MaxDeliveries))
}

// deliveriesOf is "1 delivery", "5 deliveries".
func deliveriesOf(n int) string {
	if n == 1 {
		return "1 delivery"
	}
	return strconv.Itoa(n) + " deliveries"
}
