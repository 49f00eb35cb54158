package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

func (a *app) topicCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "topic",
		Short: "Create, inspect, change and delete topics; attach fan-out children",
	}
	cmd.AddCommand(
		a.topicAddCmd(),
		a.topicListCmd(),
		a.topicInfoCmd(),
		a.topicEditCmd(),
		a.topicRemoveCmd(),
		a.topicPurgeCmd(),
		a.topicAttachCmd(),
		a.topicDetachCmd(),
		a.topicChildrenCmd(),
		a.topicFilterCmd(),
	)
	return cmd
}

func (a *app) topicAddCmd() *cobra.Command {
	var f topicFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Create a topic",
		Long: `Create the topic NAME. Settings not given are the server's defaults
(3 partitions, 7 days of retention, a 30s visibility timeout).

  narad topic add orders --partitions 6 --retention 12h
  narad topic add audit --retention 0                  # keep forever
  narad topic add reminders --delivery-delay 15m       # each record due 15m after it is accepted
  narad topic add orders-v2 --schema-file order.schema.json
  narad topic add orders-retry --parent orders --delay 1h
  narad topic add orders --max-deliveries 5 --dead-letter-topic orders.dlq
  narad topic add payments --ordering group            # one at a time per key
  narad topic add invoices --tag team=billing --tag env=prod`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			fs := cmd.Flags()
			if err := f.check(fs); err != nil {
				return err
			}
			req := client.CreateTopicRequest{
				Name:                      args[0],
				Partitions:                f.partitions,
				MaxInFlightPerPartition:   f.maxInFlight,
				MaxAckedAheadPerPartition: f.maxAckedAhead,
				Parent:                    f.parent,
				MaxDeliveries:             f.maxDeliveries,
				DeadLetterTopic:           f.deadLetter,
				ReplicationFactor:         f.replicas,
				Ordering:                  f.ordering,
			}
			if req.Tags, err = f.tagMap(); err != nil {
				return err
			}
			if fs.Changed("retention") {
				// 0 is sent: it means "keep forever", not "the default".
				ms, err := millis("retention", f.retention)
				if err != nil {
					return err
				}
				req.RetentionMs = &ms
			}
			if req.VisibilityTimeoutMs, err = millis("visibility", f.visibility); err != nil {
				return err
			}
			if req.FanoutDelayMs, err = millis("delay", f.delay); err != nil {
				return err
			}
			if req.DedupeWindowMs, err = millis("dedupe-window", f.dedupeWindow); err != nil {
				return err
			}
			if req.DeliveryDelayMs, err = millis("delivery-delay", f.deliveryDelay); err != nil {
				return err
			}
			if req.FanoutFilter, req.FanoutFilterScope, err = f.filter.read(); err != nil {
				return err
			}
			if req.FanoutFilter != nil && f.parent == "" {
				return errors.New("--filter needs --parent: a filter chooses what a child copies from its parent")
			}
			if req.FanoutEnvelope = f.filter.envelope(); req.FanoutEnvelope != nil && f.parent == "" {
				return errors.New("--sns-envelope needs --parent: an envelope wraps what a child copies from its parent")
			}
			if f.schemaFile != "" {
				if req.Schema, err = a.readSchema(f.schemaFile); err != nil {
					return err
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.CreateTopic(cmd.Context(), req)
			if err != nil {
				return inFlagTerms(err, fs)
			}
			if format == formatJSON {
				return printJSON(a.stdout, rawOf(t))
			}
			_, err = fmt.Fprintf(a.stdout, "created topic %s: %s\n", t.Name, topicSummary(t))
			return err
		},
	}
	f.register(a, cmd, true)
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) topicEditCmd() *cobra.Command {
	var f topicFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "edit NAME",
		Short: "Change a topic's settings (only the flags given are changed)",
		Long: `Change the settings of NAME given as flags; the others stay as they are.

  narad topic edit orders --retention 3d --visibility 1m
  narad topic edit orders --partitions 12              # partitions only grow
  narad topic edit orders --schema-file - < order.schema.json
  narad topic edit orders --no-schema
  narad topic edit orders --max-deliveries 5 --dead-letter-topic orders.dlq
  narad topic edit orders --max-deliveries 0 --dead-letter-topic ""   # policy off
  narad topic edit reminders --delivery-delay 0        # no delay for records that name none
  narad topic edit invoices --tag team=billing         # the tags given replace all the topic has
  narad topic edit invoices --clear-tags`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			fs := cmd.Flags()
			if err := f.check(fs); err != nil {
				return err
			}
			// Only flags the user typed go out, so "edit --retention 1d"
			// cannot reset the visibility timeout by accident.
			var req client.AlterTopicRequest
			changed := false
			if fs.Changed("partitions") {
				req.Partitions, changed = &f.partitions, true
			}
			if fs.Changed("max-in-flight") {
				req.MaxInFlightPerPartition, changed = &f.maxInFlight, true
			}
			if fs.Changed("max-acked-ahead") {
				req.MaxAckedAheadPerPartition, changed = &f.maxAckedAhead, true
			}
			if fs.Changed("max-deliveries") {
				req.MaxDeliveries, changed = &f.maxDeliveries, true
			}
			if fs.Changed("dead-letter-topic") {
				req.DeadLetterTopic, changed = &f.deadLetter, true
			}
			if fs.Changed("replication-factor") {
				req.ReplicationFactor, changed = &f.replicas, true
			}
			if fs.Changed("ordering") {
				req.Ordering, changed = &f.ordering, true
			}
			for _, d := range []struct {
				name string
				val  time.Duration
				dst  **int64
			}{{"retention", f.retention, &req.RetentionMs}, {"visibility", f.visibility, &req.VisibilityTimeoutMs}, {"delay", f.delay, &req.FanoutDelayMs},
				{"dedupe-window", f.dedupeWindow, &req.DedupeWindowMs}, {"delivery-delay", f.deliveryDelay, &req.DeliveryDelayMs}} {
				if !fs.Changed(d.name) {
					continue
				}
				ms, err := millis(d.name, d.val)
				if err != nil {
					return err
				}
				*d.dst, changed = &ms, true
			}
			switch {
			case f.schemaFile != "":
				if req.Schema, err = a.readSchema(f.schemaFile); err != nil {
					return err
				}
				changed = true
			case f.noSchema:
				req.Schema, changed = json.RawMessage("null"), true
			}
			switch {
			case f.clearTags:
				req.Tags, changed = map[string]string{}, true // sent as {}: no tags
			case len(f.tags) > 0:
				if req.Tags, err = f.tagMap(); err != nil {
					return err
				}
				changed = true
			}
			if !changed {
				return errors.New("nothing to change: give at least one of --partitions, --retention, --visibility, --max-in-flight, --max-acked-ahead, --max-deliveries, --dead-letter-topic, --delay, --dedupe-window, --delivery-delay, --ordering, --schema-file, --no-schema, --tag, --clear-tags")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.AlterTopic(cmd.Context(), args[0], req)
			if err != nil {
				return inFlagTerms(err, fs)
			}
			if format == formatJSON {
				return printJSON(a.stdout, rawOf(t))
			}
			_, err = fmt.Fprintf(a.stdout, "updated topic %s: %s\n", t.Name, topicSummary(t))
			return err
		},
	}
	f.register(a, cmd, false)
	out = addOutputFlags(cmd)
	return cmd
}

// topicSummary is the one-line description printed after add and edit.
func topicSummary(t client.Topic) string {
	parts := []string{
		plural(t.Partitions, "partition"),
		"retention " + formatRetention(t.RetentionMs),
		"visibility " + formatMs(t.VisibilityTimeoutMs),
	}
	if t.ReplicationFactor > 1 {
		parts = append(parts, fmt.Sprintf("%d copies of each partition", t.ReplicationFactor))
	}
	if t.DeliveryDelayMs > 0 {
		parts = append(parts, "delivery delay "+formatMs(t.DeliveryDelayMs))
	}
	if t.Parent != "" {
		parts = append(parts, "parent "+t.Parent)
	}
	if t.FanoutDelayMs > 0 {
		parts = append(parts, "delay "+formatMs(t.FanoutDelayMs))
	}
	if t.Ordering == "group" {
		parts = append(parts, "ordered by key (message groups)")
	}
	if t.MaxDeliveries > 0 {
		parts = append(parts, fmt.Sprintf("dead letters to %s after %s", t.DeadLetterTopic, deliveriesOf(t.MaxDeliveries)))
	}
	if hasSchema(t) {
		parts = append(parts, "with a schema")
	}
	return strings.Join(parts, ", ")
}

// formatRetention is a retention in flag units; 0 keeps records forever.
func formatRetention(ms int64) string {
	if ms == client.RetentionForever {
		return "forever"
	}
	return formatMs(ms)
}

// plural is "1 partition", "6 partitions".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

func hasSchema(t client.Topic) bool {
	return len(t.Schema) > 0 && string(t.Schema) != "null"
}
