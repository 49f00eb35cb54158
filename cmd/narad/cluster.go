package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/narad-io/narad/internal/duration"
	"github.com/spf13/cobra"
)

func (a *app) clusterCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Show the cluster's members and partition moves; decommission a node",
		Long: `Show the members of the cluster and the partition moves between them, and
decommission a node. Every command here needs the admin grant.

Decommissioning drains a node: it receives no new partitions, its
partitions move to the other nodes, and once it owns none it is removed
from the Raft voters (never below 3). See "narad cluster decommission --help".`,
	}
	cmd.AddCommand(
		a.clusterMembersCmd(),
		a.clusterMovesCmd(),
		a.clusterDecommissionCmd(),
	)
	return cmd
}

func (a *app) clusterMembersCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "members",
		Short: "List the cluster's nodes: state, Raft role, partitions, last heartbeat",
		Long: `List every member of the cluster, one row each, by id:

  STATE       alive or dead; ",draining" is added while it is being
              decommissioned
  ROLE        leader (the Raft leader), voter (a Raft voter), or - (neither)
  PARTITIONS  how many partitions it owns
  HEARTBEAT   how long ago it was last heard from; - if never
  HTTP        the address of its HTTP API

-o wide adds its Raft and RPC addresses; -o json prints the API's
{"members": [...]}: each member whole, the heartbeat in Unix milliseconds.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			members, err := c.Members(cmd.Context())
			if err != nil {
				return err
			}
			slices.SortFunc(members, func(x, y client.Member) int { return strings.Compare(x.ID, y.ID) })
			if format == formatJSON {
				return printJSON(a.stdout, struct {
					Members []client.Member `json:"members"`
				}{nonNil(members)})
			}
			return printMembers(a.stdout, members, a.now(), format == formatWide)
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func printMembers(w io.Writer, members []client.Member, now time.Time, wide bool) error {
	tw := newTable(w)
	header := "ID\tSTATE\tROLE\tPARTITIONS\tHEARTBEAT\tHTTP"
	if wide {
		header += "\tRAFT\tRPC"
	}
	fmt.Fprintln(tw, header)
	for _, m := range members {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s", m.ID, memberState(m), memberRole(m), m.Partitions,
			heartbeatAge(m.LastHeartbeatMs, now), orDash(m.HTTPAddr))
		if wide {
			fmt.Fprintf(tw, "\t%s\t%s", orDash(m.RaftAddr), orDash(m.RPCAddr))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// A decommission that cannot complete says why, under the table.
	for _, m := range members {
		for _, b := range m.DecommissionBlocked {
			if _, err := fmt.Fprintf(w, "%s: decommission blocked by %s/%d: %s\n", m.ID, b.Topic, b.Partition, b.Why); err != nil {
				return err
			}
		}
	}
	return nil
}

// memberState is "alive", "suspect" or "dead", with ",draining" while
// decommissioned.
func memberState(m client.Member) string {
	s := orDash(m.State)
	if m.Draining {
		s += ",draining"
	}
	return s
}

// memberRole is the member's place in Raft: the leader is also a voter, so
// it shows as leader only.
func memberRole(m client.Member) string {
	switch {
	case m.Leader:
		return "leader"
	case m.Voter:
		return "voter"
	}
	return "-"
}

// heartbeatAge is "2s ago", in whole seconds; "-" for a member never heard
// from. A heartbeat ahead of this machine's clock counts as just now.
func heartbeatAge(ms int64, now time.Time) string {
	if ms == 0 {
		return "-"
	}
	age := max(now.Sub(time.UnixMilli(ms)).Truncate(time.Second), 0)
	return duration.Format(age) + " ago"
}

func (a *app) clusterMovesCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "moves",
		Short: "List the partition moves in flight",
		Long: `List the partition moves in flight, by topic and partition: each hands one
partition of TOPIC from the node FROM to the node TO. Decommissioning a node
is done through such moves, so this shows how far a drain has got.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			moves, err := c.Moves(cmd.Context())
			if err != nil {
				return err
			}
			slices.SortFunc(moves, func(x, y client.Move) int {
				return cmp.Or(strings.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
			})
			if format == formatJSON {
				return printJSON(a.stdout, struct {
					Moves []client.Move `json:"moves"`
				}{nonNil(moves)})
			}
			if len(moves) == 0 {
				_, err := fmt.Fprintln(a.stdout, "no moves in flight")
				return err
			}
			tw := newTable(a.stdout)
			fmt.Fprintln(tw, "TOPIC\tPARTITION\tFROM\tTO")
			for _, m := range moves {
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", m.Topic, m.Partition, m.From, m.To)
			}
			return tw.Flush()
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) clusterDecommissionCmd() *cobra.Command {
	var cancel bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "decommission ID [--cancel]",
		Short: "Drain a node of its partitions and remove it from the Raft voters",
		Long: `Decommission the node ID: mark it draining. From then on it receives no
new partitions, its partitions move to the other nodes (follow them with
"narad cluster moves"), and once it owns none it is removed from the Raft
voters, unless that would leave fewer than 3: the cluster never goes below
3 voters.

--cancel stops a decommission while ID is still a member: it is no longer
draining and may receive partitions again.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeMembers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			id := args[0]
			set, done := c.Decommission, "draining %s: its partitions move to the other nodes; it leaves the Raft voters once empty\n"
			if cancel {
				set, done = c.CancelDecommission, "cancelled decommission of %s\n"
			}
			m, err := set(cmd.Context(), id)
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, m)
			}
			_, err = fmt.Fprintf(a.stdout, done, id)
			return err
		},
	}
	cmd.Flags().BoolVar(&cancel, "cancel", false, "stop decommissioning ID while it is still a member")
	out = addOutputFlags(cmd)
	return cmd
}
