package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
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
		a.topicAttachCmd(),
		a.topicDetachCmd(),
		a.topicChildrenCmd(),
	)
	return cmd
}

// topicFlags are the settings shared by "topic add" and "topic edit".
// Durations are typed in human units and sent in milliseconds.
type topicFlags struct {
	partitions    int
	retention     time.Duration
	visibility    time.Duration
	maxInFlight   int
	maxAckedAhead int
	delay         time.Duration
	parent        string
}

func (f *topicFlags) register(fs *pflag.FlagSet, withParent bool) {
	fs.IntVar(&f.partitions, "partitions", 0, "number of partitions (default: the server's)")
	fs.Var(newDurationValue(&f.retention, 0), "retention", "how long records are kept, e.g. 12h, 7d")
	fs.Var(newDurationValue(&f.visibility, 0), "visibility", "visibility timeout of a delivery, e.g. 30s")
	fs.IntVar(&f.maxInFlight, "max-in-flight", 0, "most unacknowledged deliveries per partition")
	fs.IntVar(&f.maxAckedAhead, "max-acked-ahead", 0, "most acks tracked past the frontier per partition")
	fs.Var(newDurationValue(&f.delay, 0), "delay", "fan-out delay from the parent, e.g. 1h")
	if withParent {
		fs.StringVar(&f.parent, "parent", "", "parent topic to receive fan-out from")
	}
}

func (f *topicFlags) check() error {
	for _, c := range []struct {
		name string
		n    int
	}{{"partitions", f.partitions}, {"max-in-flight", f.maxInFlight}, {"max-acked-ahead", f.maxAckedAhead}} {
		if c.n < 0 {
			return fmt.Errorf("--%s must not be negative", c.name)
		}
	}
	return nil
}

func (a *app) topicAddCmd() *cobra.Command {
	var f topicFlags
	cmd := &cobra.Command{
		Use:   "add NAME",
		Short: "Create a topic",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			req := client.CreateTopicRequest{
				Name:                      args[0],
				Partitions:                f.partitions,
				MaxInFlightPerPartition:   f.maxInFlight,
				MaxAckedAheadPerPartition: f.maxAckedAhead,
				Parent:                    f.parent,
			}
			var err error
			if cmd.Flags().Changed("retention") {
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
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.CreateTopic(cmd.Context(), req)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "created topic %s: %s\n", t.Name, topicSummary(t))
			return err
		},
	}
	f.register(cmd.Flags(), true)
	return cmd
}

func (a *app) topicEditCmd() *cobra.Command {
	var f topicFlags
	cmd := &cobra.Command{
		Use:   "edit NAME",
		Short: "Change a topic's settings (only the flags given are changed)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.check(); err != nil {
				return err
			}
			// Only flags the user typed go out, so "edit --retention 1d"
			// cannot reset the visibility timeout by accident.
			fs := cmd.Flags()
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
			for _, d := range []struct {
				name string
				val  time.Duration
				dst  **int64
			}{{"retention", f.retention, &req.RetentionMs}, {"visibility", f.visibility, &req.VisibilityTimeoutMs}, {"delay", f.delay, &req.FanoutDelayMs}} {
				if !fs.Changed(d.name) {
					continue
				}
				ms, err := millis(d.name, d.val)
				if err != nil {
					return err
				}
				*d.dst, changed = &ms, true
			}
			if !changed {
				return errors.New("nothing to change: give at least one of --partitions, --retention, --visibility, --max-in-flight, --max-acked-ahead, --delay")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.AlterTopic(cmd.Context(), args[0], req)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "updated topic %s: %s\n", t.Name, topicSummary(t))
			return err
		},
	}
	f.register(cmd.Flags(), false)
	return cmd
}

func (a *app) topicListCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List topics",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			all, err := allTopics(cmd.Context(), c)
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, all)
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "NAME\tPARTITIONS\tRETENTION\tVISIBILITY\tPARENT\tCHILDREN")
			for _, t := range all {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", t.Name, t.Partitions, formatMs(t.RetentionMs),
					formatMs(t.VisibilityTimeoutMs), orDash(t.Parent), orDash(strings.Join(t.Children, ",")))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) topicInfoCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show a topic and its partitions",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			t, err := c.GetTopic(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return printJSON(a.stdout, t)
			}
			return printTopicDetail(a.stdout, t)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func (a *app) topicRemoveCmd() *cobra.Command {
	return &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"delete"},
		Short:   "Delete a topic and its records",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.DeleteTopic(cmd.Context(), args[0]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "deleted topic %s\n", args[0])
			return err
		},
	}
}

func (a *app) topicAttachCmd() *cobra.Command {
	var delay time.Duration
	cmd := &cobra.Command{
		Use:   "attach PARENT CHILD",
		Short: "Fan out every record of PARENT to CHILD, optionally delayed",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ms, err := millis("delay", delay)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			if _, err := c.Attach(cmd.Context(), args[0], client.AttachRequest{Child: args[1], DelayMs: ms}); err != nil {
				return err
			}
			msg := fmt.Sprintf("attached %s to %s", args[1], args[0])
			if ms > 0 {
				msg += " with delay " + formatMs(ms)
			}
			_, err = fmt.Fprintln(a.stdout, msg)
			return err
		},
	}
	cmd.Flags().Var(newDurationValue(&delay, 0), "delay", "deliver to the child this long after the parent, e.g. 1h")
	return cmd
}

func (a *app) topicDetachCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "detach PARENT CHILD",
		Short: "Stop fanning out PARENT to CHILD",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			if err := c.Detach(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "detached %s from %s\n", args[1], args[0])
			return err
		},
	}
}

func (a *app) topicChildrenCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "children PARENT",
		Short: "List the topics attached to PARENT",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			kids, err := c.Children(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if asJSON {
				if kids == nil {
					kids = []client.Child{}
				}
				return printJSON(a.stdout, kids)
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "CHILD\tDELAY\tATTACH EPOCH\tLAG\tDUE LAG\tCOMPLETE\tDROPPED")
			for _, k := range kids {
				due := "-"
				if k.DueLagSeconds != nil {
					due = fmt.Sprintf("%.1fs", *k.DueLagSeconds)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%v\t%d\n", k.Name, formatMs(k.DelayMs), k.AttachEpoch,
					k.LagMessages, due, k.LagComplete, k.DroppedMessages)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// allTopics follows ListTopics' pages to the end. It never returns a nil
// slice, so --json prints [] for no topics rather than null.
func allTopics(ctx context.Context, c *client.Client) ([]client.Topic, error) {
	all := []client.Topic{}
	token := ""
	for {
		page, next, err := c.ListTopics(ctx, 100, token)
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		// A token that repeats would loop forever; treat it as the end.
		if next == "" || next == token {
			return all, nil
		}
		token = next
	}
}

// topicSummary is the one-line description printed after add and edit.
func topicSummary(t client.Topic) string {
	parts := []string{
		strconv.Itoa(t.Partitions) + " partitions",
		"retention " + formatMs(t.RetentionMs),
		"visibility " + formatMs(t.VisibilityTimeoutMs),
	}
	if t.Parent != "" {
		parts = append(parts, "parent "+t.Parent)
	}
	if t.FanoutDelayMs > 0 {
		parts = append(parts, "delay "+formatMs(t.FanoutDelayMs))
	}
	return strings.Join(parts, ", ")
}
