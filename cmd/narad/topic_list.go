package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

func (a *app) topicListCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "ls",
		Aliases: []string{"list"},
		Short:   "List topics",
		Long: `List every topic (all pages). -o wide adds the role, owner, flow caps,
delay, schema and creation time; -o json prints {"topics": [...]} with each
topic as the API describes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			all, err := allTopics(cmd.Context(), c)
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, struct {
					Topics []any `json:"topics"`
				}{rawList(all)})
			}
			return printTopics(a.stdout, all, format == formatWide)
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func printTopics(w io.Writer, topics []client.Topic, wide bool) error {
	tw := newTable(w)
	header := "NAME\tPARTITIONS\tRETENTION\tVISIBILITY\tPARENT\tCHILDREN"
	if wide {
		header += "\tROLE\tOWNER\tMAX IN FLIGHT\tMAX ACKED AHEAD\tDELAY\tSCHEMA\tCREATED"
	}
	fmt.Fprintln(tw, header)
	for _, t := range topics {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s", t.Name, t.Partitions, formatRetention(t.RetentionMs),
			formatMs(t.VisibilityTimeoutMs), orDash(t.Parent), orDash(strings.Join(t.Children, ",")))
		if wide {
			delay := "-"
			if t.FanoutDelayMs > 0 {
				delay = formatMs(t.FanoutDelayMs)
			}
			schema := "-"
			if hasSchema(t) {
				schema = "yes"
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%d\t%d\t%s\t%s\t%s", orDash(t.Role), orDash(t.Owner), t.MaxInFlightPerPartition,
				t.MaxAckedAheadPerPartition, delay, schema, formatTime(t.CreatedAt))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func (a *app) topicInfoCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "info NAME",
		Short: "Show a topic and its partitions",
		Long: `Show the settings of NAME and one row per partition: owner, offsets,
consumer frontier, backlog, segments and size. On a replicated topic the
owner is the partition's leader, and each row adds its copies and in-sync
set ("(1 of 3)" when short), with a line for a partition that cannot
commit and why. -o wide adds each partition's oldest segment time; -o json
prints the API's describe.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			t, err := c.GetTopic(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, rawOf(t))
			}
			return printTopicDetail(a.stdout, t, format == formatWide)
		},
	}
	out = addOutputFlags(cmd)
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

// formatTime is a server timestamp in UTC to the second; "-" for none.
func formatTime(t client.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}
