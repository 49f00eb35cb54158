// Command promcheck checks the Prometheus artifacts under deploy/ with
// Prometheus's own parsers, as promtool would: the alerting rules file
// parses and validates (rulefmt: groups, durations, PromQL, label and
// annotation templates), and every PromQL expression of the Grafana
// dashboard parses. For each expression it prints one JSON line naming the
// metrics the expression selects, which the main module's test/deploy
// compares with the registry (a module of its own, so that Prometheus's
// dependencies never enter narad's go.mod).
//
//	go run . -rules ../../deploy/prometheus/narad-rules.yml -dashboard ../../deploy/grafana/narad.json
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/promql/parser"
)

// Line is one checked expression.
type Line struct {
	Where     string     `json:"where"` // rule name, panel title or variable name
	Expr      string     `json:"expr"`
	Selectors []Selector `json:"selectors"` // in order of appearance
}

// Selector is one vector selector of an expression: the metric it names
// and the labels it matches on, so a test can check both against the
// registry (a dashboard that filters on a label the metric lacks shows
// nothing, silently).
type Selector struct {
	Name   string   `json:"name"`
	Labels []string `json:"labels,omitempty"`
}

func main() {
	rules := flag.String("rules", "", "Prometheus rules file")
	dashboard := flag.String("dashboard", "", "Grafana dashboard JSON")
	flag.Parse()
	p := parser.NewParser(parser.Options{})
	var lines []Line
	var errs []error
	if *rules != "" {
		l, e := checkRules(p, *rules)
		lines, errs = append(lines, l...), append(errs, e...)
	}
	if *dashboard != "" {
		l, e := checkDashboard(p, *dashboard)
		lines, errs = append(lines, l...), append(errs, e...)
	}
	for _, err := range errs {
		fmt.Fprintln(os.Stderr, "promcheck:", err)
	}
	if len(errs) > 0 {
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	for _, l := range lines {
		enc.Encode(l)
	}
}

func checkRules(p parser.Parser, file string) ([]Line, []error) {
	groups, errs := rulefmt.ParseFile(file, false, model.UTF8Validation, p, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if len(errs) > 0 {
		return nil, errs
	}
	var out []Line
	for _, g := range groups.Groups {
		for _, r := range g.Rules {
			where := r.Alert + r.Record
			sels, err := selectors(p, r.Expr)
			if err != nil {
				return nil, []error{fmt.Errorf("%s: rule %s: %w", file, where, err)}
			}
			out = append(out, Line{Where: "rule " + where, Expr: r.Expr, Selectors: sels})
		}
	}
	return out, nil
}

// grafanaRange are the dashboard's interval variables, which stand where
// PromQL wants a duration.
var grafanaRange = regexp.MustCompile(`\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}`)

// labelValues is Grafana's label_values(selector, label) variable query.
var labelValues = regexp.MustCompile(`^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$`)

func checkDashboard(p parser.Parser, file string) ([]Line, []error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, []error{err}
	}
	var d struct {
		Panels     []panel `json:"panels"`
		Templating struct {
			List []struct {
				Name  string          `json:"name"`
				Type  string          `json:"type"`
				Query json.RawMessage `json:"query"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, []error{fmt.Errorf("%s: %w", file, err)}
	}
	var out []Line
	var errs []error
	check := func(where, expr string) {
		sels, err := selectors(p, grafanaRange.ReplaceAllString(expr, "5m"))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %q: %w", file, where, expr, err))
			return
		}
		out = append(out, Line{Where: where, Expr: expr, Selectors: sels})
	}
	for _, pn := range flatten(d.Panels) {
		for _, t := range pn.Targets {
			check("panel "+pn.Title, t.Expr)
		}
	}
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q := queryText(v.Query)
		if m := labelValues.FindStringSubmatch(q); m != nil {
			q = m[1]
		}
		check("variable "+v.Name, q)
	}
	return out, errs
}

type panel struct {
	Title   string  `json:"title"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

func flatten(ps []panel) []panel {
	var out []panel
	for _, p := range ps {
		out = append(out, p)
		out = append(out, flatten(p.Panels)...)
	}
	return out
}

// queryText is a variable's query: a string, or an object with "query".
func queryText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var o struct {
		Query string `json:"query"`
	}
	json.Unmarshal(raw, &o)
	return o.Query
}

// selectors are the vector selectors of expr, by the parser's own tree.
func selectors(p parser.Parser, expr string) ([]Selector, error) {
	e, err := p.ParseExpr(strings.TrimSpace(expr))
	if err != nil {
		return nil, err
	}
	var out []Selector
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		vs, ok := n.(*parser.VectorSelector)
		if !ok {
			return nil
		}
		sel := Selector{Name: vs.Name}
		for _, m := range vs.LabelMatchers {
			switch {
			case m.Name != model.MetricNameLabel:
				sel.Labels = append(sel.Labels, m.Name)
			case sel.Name == "":
				sel.Name = m.Value // {__name__="..."}
			}
		}
		out = append(out, sel)
		return nil
	})
	return out, nil
}
