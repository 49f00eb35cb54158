package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// topicPurgeCmd is "narad topic purge NAME": every unconsumed record of
// the topic is settled at once, which no undo brings back to the queue.
// So it asks first on a terminal, and refuses to run unasked anywhere
// else: a script (stdin not a terminal) must say --yes, so that a purge
// never happens because a pipe happened to supply a "y".
func (a *app) topicPurgeCmd() *cobra.Command {
	var yes bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "purge NAME",
		Short: "Settle every unconsumed record of a topic (the log and replay keep them)",
		Long: `Settle every record of NAME below each partition's high watermark now:
consumers get none of them again, leases on them end (their acks answer
410), their delivery counts go. The log is not touched: replay and fan-out
children still see every record. Needs ownership of the topic or admin.

On a terminal it asks first; elsewhere (a script, a pipe) it refuses unless
--yes is given. A second purge settles only what arrived since.

  narad topic purge orders-dlq
  narad topic purge orders-dlq --yes     # no question (scripts)

-o json prints {"topic": NAME, "purged": N}.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			topic := args[0]
			format, err := out.format()
			if err != nil {
				return err
			}
			if !yes {
				if err := a.confirm(
					fmt.Sprintf("Purge every unconsumed record of topic %q? Consumers will not get them again.", topic),
					"refusing to purge without confirmation: standard input is not a terminal; pass --yes to purge "+topic,
					"purge cancelled: nothing was changed"); err != nil {
					return err
				}
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			n, err := c.Purge(cmd.Context(), topic)
			if err != nil {
				return err
			}
			return printDone(a.stdout, format, struct {
				Topic  string `json:"topic"`
				Purged int64  `json:"purged"`
			}{topic, n}, fmt.Sprintf("purged %s from topic %s", plural(int(n), "record"), topic))
		},
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "purge without asking (needed when standard input is not a terminal)")
	out = addOutputFlags(cmd)
	return cmd
}
