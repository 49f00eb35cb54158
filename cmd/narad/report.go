package main

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

// topicReport is one row of "server report"; --json prints these as they
// are, with sizes in bytes and owners as a map.
type topicReport struct {
	Name       string         `json:"name"`
	Partitions int            `json:"partitions"`
	Messages   uint64         `json:"messages"`
	SizeBytes  int64          `json:"size_bytes"`
	Owners     map[string]int `json:"owners"`
	Role       string         `json:"role,omitempty"`
}

// unknownOwner stands for a partition whose owner the server did not name.
const unknownOwner = "?"

func (a *app) serverReportCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "report",
		Short: "Every topic: partitions, messages, size and owner spread",
		Long: `Summarise every topic, one row each:

  MESSAGES  records retained: high watermark minus oldest offset, summed
            over the partitions
  SIZE      bytes on disk, summed over the partitions
  OWNERS    how many partitions each node owns, e.g. "n1:2 n2:2 n3:2"
  ROLE      the topic's role in fan-out, when it has one

A topic deleted while the report runs is left out. -o json prints the rows
with sizes in bytes and owners as a map.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			topics, err := allTopics(cmd.Context(), c)
			if err != nil {
				return err
			}
			slices.SortFunc(topics, func(x, y client.Topic) int { return strings.Compare(x.Name, y.Name) })
			rows := []topicReport{}
			for _, t := range topics {
				d, err := c.GetTopic(cmd.Context(), t.Name)
				if client.StatusOf(err) == http.StatusNotFound {
					continue // deleted since it was listed
				}
				if err != nil {
					return fmt.Errorf("topic %s: %w", t.Name, err)
				}
				rows = append(rows, reportTopic(d))
			}
			if format == formatJSON {
				return printJSON(a.stdout, rows)
			}
			return printReport(a.stdout, rows)
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func reportTopic(d client.TopicDetail) topicReport {
	r := topicReport{Name: d.Name, Partitions: d.Partitions, Owners: map[string]int{}, Role: d.Role}
	for _, p := range d.PartitionStats {
		// The oldest offset passes the high watermark only transiently
		// (retention racing a read); counting that as negative would be
		// noise, so it counts as empty.
		if p.HighWatermark > p.OldestOffset {
			r.Messages += p.HighWatermark - p.OldestOffset
		}
		r.SizeBytes += p.SizeBytes
		r.Owners[first(p.OwnerNode, unknownOwner)]++
	}
	return r
}

func printReport(w io.Writer, rows []topicReport) error {
	tw := newTable(w)
	fmt.Fprintln(tw, "NAME\tPARTITIONS\tMESSAGES\tSIZE\tOWNERS\tROLE")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\n", r.Name, r.Partitions, r.Messages, formatBytes(r.SizeBytes),
			orDash(formatOwners(r.Owners)), orDash(r.Role))
	}
	return tw.Flush()
}

// formatOwners is the spread "n1:2 n2:2 n3:2", by node name.
func formatOwners(owners map[string]int) string {
	nodes := make([]string, 0, len(owners))
	for n := range owners {
		nodes = append(nodes, n)
	}
	slices.Sort(nodes)
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = n + ":" + strconv.Itoa(owners[n])
	}
	return strings.Join(parts, " ")
}
