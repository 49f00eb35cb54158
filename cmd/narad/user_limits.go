package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dustin/go-humanize"
	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A user's rate limits on the command line: --limit NAME=VALUE, repeatable
// and comma-separated (--limit produce_records_per_s=100,consume_requests_per_s=20),
// NAME being the API's own name of the limit, so what a script sets is
// what the API and `user show -o json` say. VALUE is a whole number per
// second, "unlimited" (or 0), or "default" (none of its own: the node's
// configured default applies); produce_bytes_per_s also takes a size
// (64KiB, 1MiB, 10MB).

var limitNames = []string{client.LimitProduceRecords, client.LimitProduceBytes, client.LimitConsumeRequests}

const limitFlagHelp = "NAME=VALUE rate limit per second on each node; repeatable or comma-separated. NAME: " +
	"produce_records_per_s, produce_bytes_per_s, consume_requests_per_s; VALUE: a number (bytes may be 1MiB), unlimited (0), or default"

func registerLimits(fs *pflag.FlagSet, dst *[]string) {
	fs.StringArrayVar(dst, "limit", nil, limitFlagHelp)
}

// parseLimits reads --limit values into a change of the user's own
// limits: a value, or nil for "default". A name given twice is refused
// (which one was meant?).
func parseLimits(specs []string) (map[string]*int64, error) {
	out := map[string]*int64{}
	for _, spec := range specs {
		for _, item := range strings.Split(spec, ",") {
			item = strings.TrimSpace(item)
			bad := func(why string) error {
				return fmt.Errorf("--limit %q: %s (want NAME=VALUE, e.g. produce_records_per_s=100; NAME is one of %s)",
					item, why, strings.Join(limitNames, ", "))
			}
			name, value, ok := strings.Cut(item, "=")
			if !ok {
				return nil, bad("no '=' after the name")
			}
			name, value = strings.TrimSpace(name), strings.TrimSpace(value)
			if !slices.Contains(limitNames, name) {
				return nil, bad(fmt.Sprintf("unknown limit %q", name))
			}
			if _, dup := out[name]; dup {
				return nil, bad(fmt.Sprintf("%s is given twice", name))
			}
			v, err := parseLimitValue(name, value)
			if err != nil {
				return nil, bad(err.Error())
			}
			out[name] = v
		}
	}
	return out, nil
}

func parseLimitValue(name, value string) (*int64, error) {
	switch strings.ToLower(value) {
	case "default":
		return nil, nil
	case "unlimited", "none":
		return client.Rate(0), nil
	}
	if n, err := strconv.ParseInt(value, 10, 64); err == nil {
		if n < 0 {
			return nil, fmt.Errorf("%d is negative; use 0 or unlimited for no limit", n)
		}
		return client.Rate(n), nil
	}
	if name == client.LimitProduceBytes {
		if n, err := humanize.ParseBytes(value); err == nil && n <= 1<<62 {
			return client.Rate(int64(n)), nil
		}
	}
	return nil, fmt.Errorf("%q is not a whole number per second, unlimited or default", value)
}

// ownLimits is what user add sends: the limits set (default: none).
func ownLimits(set map[string]*int64) *client.OwnLimits {
	var l client.OwnLimits
	any := false
	for name, v := range set {
		if v == nil {
			continue
		}
		any = true
		switch name {
		case client.LimitProduceRecords:
			l.ProduceRecordsPerS = v
		case client.LimitProduceBytes:
			l.ProduceBytesPerS = v
		case client.LimitConsumeRequests:
			l.ConsumeRequestsPerS = v
		}
	}
	if !any {
		return nil
	}
	return &l
}

// limitValues are a user's limits in limitNames order.
func limitValues(u client.User) []int64 {
	if u.Limits == nil {
		return []int64{0, 0, 0} // a server without rate limits
	}
	return []int64{u.Limits.ProduceRecordsPerS, u.Limits.ProduceBytesPerS, u.Limits.ConsumeRequestsPerS}
}

// formatLimits writes limits the way --limit takes them, a default
// marked "(default)": "produce_records_per_s=100 produce_bytes_per_s=unlimited(default) ...".
func formatLimits(u client.User) string {
	parts := make([]string, len(limitNames))
	for i, v := range limitValues(u) {
		s := "unlimited"
		if v > 0 {
			s = strconv.FormatInt(v, 10)
		}
		if slices.Contains(u.LimitsFromDefaults, limitNames[i]) {
			s += "(default)"
		}
		parts[i] = limitNames[i] + "=" + s
	}
	return strings.Join(parts, " ")
}

// shortLimits is the list's LIMITS column: only what limits anything,
// "-" for a user limited by nothing.
func shortLimits(u client.User) string {
	var parts []string
	for i, v := range limitValues(u) {
		if v > 0 {
			s := limitNames[i] + "=" + strconv.FormatInt(v, 10)
			if slices.Contains(u.LimitsFromDefaults, limitNames[i]) {
				s += "(default)"
			}
			parts = append(parts, s)
		}
	}
	return orDash(strings.Join(parts, " "))
}

func (a *app) userEditCmd() *cobra.Command {
	var limits []string
	var reset bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "edit NAME (--limit NAME=VALUE... | --reset-limits)",
		Short: "Change a user's rate limits",
		Long: `Change the rate limits of NAME. Only the limits given change: the others
keep what they are. Each is per second, on each node (a client spread over
three nodes gets three times as much), with a burst of one second's worth;
over it, requests are refused with 429 and Retry-After and nothing of them
is stored. produce_bytes_per_s counts each record's key, payload, header
names and values, and msg_id.

  narad user edit billing --limit produce_records_per_s=500 --limit produce_bytes_per_s=1MiB
  narad user edit billing --limit consume_requests_per_s=unlimited   # exempt from the default
  narad user edit billing --limit produce_records_per_s=default      # back to the node's default
  narad user edit billing --reset-limits                             # every limit back to the defaults

A value of unlimited (or 0) is the user's own and wins over the node's
configured default (limits.*); default drops the user's own value.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			if len(limits) == 0 && !reset {
				return errors.New("nothing to change: give --limit NAME=VALUE, or --reset-limits")
			}
			set, err := parseLimits(limits)
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			u, err := c.SetLimits(cmd.Context(), args[0], client.LimitsChange{Reset: reset, Set: set})
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, u)
			}
			_, err = fmt.Fprintf(a.stdout, "limits of %s: %s\n", u.Username, formatLimits(u))
			return err
		},
	}
	registerLimits(cmd.Flags(), &limits)
	cmd.Flags().BoolVar(&reset, "reset-limits", false, "drop every limit of the user's own first (the node's defaults apply)")
	out = addOutputFlags(cmd)
	return cmd
}

func (a *app) userShowCmd() *cobra.Command {
	var out *outputFlags
	cmd := &cobra.Command{
		Use:               "show NAME",
		Aliases:           []string{"get"},
		Short:             "Show a user: its grants and the rate limits in force",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeUsers,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			u, err := c.GetUser(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, u)
			}
			tw := newTable(a.stdout)
			fmt.Fprintf(tw, "user:\t%s\n", u.Username)
			fmt.Fprintf(tw, "grants:\t%s\n", grantsOrNone(u.Grants))
			for i, v := range limitValues(u) {
				s := "unlimited"
				if v > 0 {
					s = strconv.FormatInt(v, 10) + "/s"
					if limitNames[i] == client.LimitProduceBytes {
						s += " (" + humanize.IBytes(uint64(v)) + "/s)"
					}
				}
				if slices.Contains(u.LimitsFromDefaults, limitNames[i]) {
					s += "  (the node's default)"
				}
				fmt.Fprintf(tw, "%s:\t%s\n", limitNames[i], s)
			}
			return tw.Flush()
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}
