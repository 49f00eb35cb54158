package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
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
	if t.DeliveryDelayMs > 0 {
		row("delivery delay", formatMs(t.DeliveryDelayMs))
	}
	if t.DedupeWindowMs > 0 {
		row("dedupe window", formatMs(t.DedupeWindowMs))
	}
	if t.Ordering != "" {
		row("ordering", t.Ordering)
	}
	if t.ReplicationFactor > 0 {
		row("replication factor", fmt.Sprint(t.ReplicationFactor))
	}
	if !t.CreatedAt.IsZero() {
		row("created", formatTime(t.CreatedAt))
	}
	if !t.ModifiedAt.IsZero() && !t.ModifiedAt.Equal(t.CreatedAt.Time) {
		row("modified", formatTime(t.ModifiedAt))
	}
	if len(t.Tags) > 0 {
		row("tags", keyValues(t.Tags))
	}
	if len(t.AWSAttributes) > 0 {
		// The keys only: a Policy runs to kilobytes (-o json shows the values).
		row("aws attributes", strings.Join(slices.Sorted(maps.Keys(t.AWSAttributes)), ", "))
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
	// A replicated topic's owner is its partition's leader, and the rows
	// name the copies and the in-sync set: without them replication was
	// visible only in -o json.
	replicated := slices.ContainsFunc(t.PartitionStats, func(p client.PartitionStats) bool { return len(p.Replicas) > 0 })
	owner := "OWNER"
	if replicated {
		owner = "LEADER"
	}
	// SCHEDULED (records not due yet) shows where scheduling is in use:
	// only the node serving a partition knows the figure, so a 0 on a
	// topic that never scheduled anything would say less than it seems.
	scheduled := t.DeliveryDelayMs > 0 || slices.ContainsFunc(t.PartitionStats, func(p client.PartitionStats) bool { return p.Scheduled > 0 })
	header := "PARTITION\t" + owner + "\tOLDEST\tNEXT\tHIGH WATERMARK\tFRONTIER\tBACKLOG"
	if scheduled {
		header += "\tSCHEDULED"
	}
	header += "\tSEGMENTS\tSIZE\tAVAILABLE"
	if replicated {
		header += "\tREPLICAS\tIN SYNC"
	}
	if wide {
		header += "\tOLDEST SEGMENT AT"
	}
	fmt.Fprintln(tw, header)
	var stalls []string
	for _, p := range t.PartitionStats {
		backlog := uint64(0)
		if p.NextOffset > p.ConsumerFrontier {
			backlog = p.NextOffset - p.ConsumerFrontier
		}
		avail := "yes"
		if p.Available != nil && !*p.Available {
			avail = "NO"
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%d", p.Index, orDash(p.OwnerNode), p.OldestOffset,
			p.NextOffset, p.HighWatermark, p.ConsumerFrontier, backlog)
		if scheduled {
			fmt.Fprintf(tw, "\t%d", p.Scheduled)
		}
		fmt.Fprintf(tw, "\t%d\t%s\t%s", p.Segments, formatBytes(p.SizeBytes), avail)
		if replicated {
			fmt.Fprintf(tw, "\t%s\t%s", orDash(strings.Join(p.Replicas, ",")), inSyncCell(p))
		}
		if p.CommitStall != "" {
			stalls = append(stalls, fmt.Sprintf("partition %d cannot commit: %s", p.Index, p.CommitStall))
		}
		if wide {
			fmt.Fprintf(tw, "\t%s", formatTime(p.OldestSegmentAt))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(stalls) > 0 {
		_, err := fmt.Fprintf(w, "\n%s\n", strings.Join(stalls, "\n"))
		return err
	}
	return nil
}

// keyValues is "k1=v1, k2=v2", sorted by key.
func keyValues(m map[string]string) string {
	kvs := make([]string, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kvs = append(kvs, k+"="+m[k])
	}
	return strings.Join(kvs, ", ")
}

// inSyncCell is the in-sync set, with "(k of n)" when it is short of the
// copies: an under-replicated partition stands out in the table.
func inSyncCell(p client.PartitionStats) string {
	s := orDash(strings.Join(p.InSync, ","))
	if len(p.Replicas) > 0 && len(p.InSync) < len(p.Replicas) {
		s += fmt.Sprintf(" (%d of %d)", len(p.InSync), len(p.Replicas))
	}
	return s
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
