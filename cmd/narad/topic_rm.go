package main

import (
	"fmt"
	"strings"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

// topicRemoveCmd is "narad topic rm NAME". Deleting a topic takes its
// unconsumed records with it and turns its children into standalone
// topics, and nothing brings either back. So, like purge, it asks first
// on a terminal and refuses unasked elsewhere (--yes) — but only when
// there is something to lose: an idle topic with no children goes at
// once, as it always did.
func (a *app) topicRemoveCmd() *cobra.Command {
	var yes bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:     "rm NAME",
		Aliases: []string{"delete"},
		Short:   "Delete a topic and its records",
		Long: `Delete the topic NAME and its records; its children are detached and stay
as standalone topics. Needs ownership of the topic or admin.

When the topic holds unconsumed records or has children it asks first on a
terminal; elsewhere (a script, a pipe) it refuses unless --yes is given.

  narad topic rm orders-old
  narad topic rm orders-old --yes     # no question (scripts)

-o json prints {"topic": NAME, "deleted": true}.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			if !yes {
				t, err := c.GetTopic(cmd.Context(), topic)
				if err != nil {
					return err
				}
				if loss := deleteLoss(t); loss != "" {
					if err := a.confirm(
						fmt.Sprintf("Delete topic %q with %s? Nothing brings them back.", topic, loss),
						fmt.Sprintf("refusing to delete topic %s without confirmation: it has %s and standard input is not a terminal; pass --yes to delete it", topic, loss),
						"delete cancelled: nothing was changed"); err != nil {
						return err
					}
				}
			}
			if err := c.DeleteTopic(cmd.Context(), topic); err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Topic   string `json:"topic"`
				Deleted bool   `json:"deleted"`
			}{topic, true}, "deleted topic "+topic)
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "delete without asking (needed when standard input is not a terminal and the topic holds unconsumed records or has children)")
	out = addOutputFlags(cmd)
	return cmd
}

// deleteLoss says what deleting t loses beyond its name: its unconsumed
// records (each partition's backlog, as topic info counts it) and its
// children (detached, no longer fed). "" when there is nothing.
func deleteLoss(t client.TopicDetail) string {
	var backlog uint64
	for _, p := range t.PartitionStats {
		if p.NextOffset > p.ConsumerFrontier {
			backlog += p.NextOffset - p.ConsumerFrontier
		}
	}
	var parts []string
	if backlog > 0 {
		parts = append(parts, plural(int(backlog), "unconsumed record"))
	}
	switch len(t.Children) {
	case 0:
	case 1:
		parts = append(parts, "child "+t.Children[0]+" (detached, no longer fed)")
	default:
		parts = append(parts, "children "+strings.Join(t.Children, ", ")+" (detached, no longer fed)")
	}
	return strings.Join(parts, " and ")
}
