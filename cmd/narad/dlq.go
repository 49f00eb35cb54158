package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

func (a *app) dlqCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "Work with dead-letter topics: move their records back",
		Long: `A topic with --max-deliveries N --dead-letter-topic D (narad topic add/edit)
sends a record whose N-th delivery ended unacknowledged (lapsed or nacked)
to D, with narad-dlq-* headers saying where it came from and why.
"narad peek D" shows what waits there without taking it.`,
	}
	cmd.AddCommand(a.dlqRedriveCmd())
	return cmd
}

func (a *app) dlqRedriveCmd() *cobra.Command {
	var to string
	var max int
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "redrive TOPIC --to TARGET",
		Short: "Move unconsumed records of TOPIC into TARGET",
		Long: `Move up to --max unconsumed records of TOPIC (a dead-letter topic, usually)
into TARGET: same key, payload and headers, without the narad-dlq-* ones.
Each record leaves TOPIC only once its copy is stored in TARGET, so a
redrive cut short can be run again (it may duplicate, never lose). Needs
consume on TOPIC and produce on TARGET.

  narad dlq redrive orders.dlq --to orders
  narad dlq redrive orders.dlq --to orders --max 50000`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			if to == "" {
				return fmt.Errorf("--to is required: the topic to move the records into")
			}
			fs := cmd.Flags()
			if fs.Changed("max") && (max < 1 || max > 100_000) {
				return flagErr("max", fs.Lookup("max").Value.String(), "must be 1..100000")
			}
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			moved, err := c.Redrive(cmd.Context(), args[0], to, max)
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, map[string]int{"moved": moved})
			}
			_, err = fmt.Fprintf(a.stdout, "moved %s from %s to %s\n", plural(moved, "record"), args[0], to)
			return err
		},
	}
	cmd.Flags().StringVar(&to, "to", "", "topic to move the records into")
	cmd.Flags().IntVar(&max, "max", 0, "most records to move, 1..100000 (default: the server's, 1000)")
	_ = cmd.RegisterFlagCompletionFunc("to", a.completeTopicFlag)
	out = addOutputFlags(cmd)
	return cmd
}
