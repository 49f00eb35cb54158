package metrics

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics reference, docs/metrics.md, is generated from the registry:
// the table between its markers is Markdown's output, and TestMetricsDoc
// fails when it differs. Regenerate it with
//
//	go generate ./internal/metrics/
//
//go:generate go test -count=1 -run ^TestMetricsDoc$ . -args -update

// Markers around the generated part of docs/metrics.md.
const (
	docBegin = "<!-- BEGIN GENERATED: metrics table (go generate ./internal/metrics/) -->"
	docEnd   = "<!-- END GENERATED: metrics table -->"
)

// Markdown renders every narad_ family a node can export (those the
// Observe methods add included) as one Markdown table sorted by name:
// name, type, labels and help text, the help read from the registered
// descriptors.
func Markdown() string {
	m := New()
	m.ObserveRaft(noRaft{})
	m.ObserveMembers(func() MemberCounts { return MemberCounts{} })
	m.ObserveIngressWAL(func() WALCounts { return WALCounts{} })
	m.ObserveReplication(func() ReplicationCounts { return ReplicationCounts{} })

	help := map[string]string{}
	descs := make(chan *prometheus.Desc)
	go func() {
		m.Registry.Describe(descs)
		close(descs)
	}()
	for d := range descs {
		var n, h string
		if _, err := fmt.Sscanf(d.String(), "Desc{fqName: %q, help: %q", &n, &h); err == nil {
			help[n] = h
		}
	}

	fams := m.Names()
	slices.SortFunc(fams, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	var b strings.Builder
	b.WriteString("| Name | Type | Labels | Help |\n|---|---|---|---|\n")
	for _, f := range fams {
		labels := "—"
		if len(f.Labels) > 0 {
			labels = "`" + strings.Join(f.Labels, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Name, f.Type, labels, strings.ReplaceAll(help[f.Name], "|", `\|`))
	}
	return b.String()
}

// noRaft stands in for the metastore so the Raft gauges are registered.
type noRaft struct{}

func (noRaft) IsLeader() bool       { return false }
func (noRaft) Term() uint64         { return 0 }
func (noRaft) AppliedIndex() uint64 { return 0 }
