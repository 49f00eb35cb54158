package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// remoteFlags are "topic attach"'s flags for a child in another cluster.
type remoteFlags struct {
	url, topic, user string
	passwordStdin    bool
	start            string
}

// remotePasswordEnv is where a script can put the target's password
// instead of standard input; never a flag, which any user of the machine
// could read in the process list.
const remotePasswordEnv = "NARAD_REMOTE_PASSWORD"

// filterFlags are a link's filter: --filter (an SNS filter policy, JSON)
// and --filter-scope; and, on attach and create, its envelope:
// --sns-envelope TOPIC_ARN.
type filterFlags struct{ policy, scope, snsARN string }

func (f *filterFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.policy, "filter", "", `copy only the records this Amazon SNS filter policy matches, e.g. '{"kind": ["order"]}'`)
	fs.StringVar(&f.scope, "filter-scope", "", "what --filter matches: headers (default) or payload (the fields of a JSON payload)")
}

// addEnvelope adds --sns-envelope, which a new link takes.
func (f *filterFlags) addEnvelope(fs *pflag.FlagSet) {
	fs.StringVar(&f.snsARN, "sns-envelope", "", "wrap each copy in Amazon SNS's notification JSON naming this TopicArn, e.g. arn:aws:sns:us-east-1:000000000000:news")
}

// envelope is the envelope --sns-envelope asks for, nil for none.
func (f *filterFlags) envelope() *client.LinkEnvelope {
	if f.snsARN == "" {
		return nil
	}
	return &client.LinkEnvelope{Format: client.EnvelopeSNS, TopicARN: f.snsARN}
}

// read checks the flags and returns the filter to send (nil for none).
func (f *filterFlags) read() (json.RawMessage, string, error) {
	switch {
	case f.policy == "" && f.scope != "":
		return nil, "", errors.New("--filter-scope needs --filter")
	case f.scope != "" && f.scope != client.FilterHeaders && f.scope != client.FilterPayload:
		return nil, "", flagErr("filter-scope", f.scope, "must be headers or payload")
	case f.policy == "":
		return nil, "", nil
	case !json.Valid([]byte(f.policy)):
		return nil, "", flagErr("filter", f.policy, "is not JSON: give a filter policy object, quoted for the shell")
	}
	return json.RawMessage(f.policy), f.scope, nil
}

func (a *app) topicAttachCmd() *cobra.Command {
	var delay time.Duration
	var r remoteFlags
	var filt filterFlags
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "attach PARENT CHILD",
		Short: "Fan out every record of PARENT to CHILD (a topic here, or in another cluster)",
		Long: `Fan out every record of PARENT to CHILD from now on, optionally delayed:

  narad topic attach orders orders-audit
  narad topic attach orders orders-retry --delay 1h

With --remote-url, CHILD names a link to a topic of another Narad cluster
(no local topic is created): every record is sent there through its batch
produce, keys and per-key order kept. The target's user needs only the
produce grant there; its password is read from standard input
(--remote-password-stdin) or ` + remotePasswordEnv + `, never from a flag.

  echo "$PW" | narad topic attach orders orders-dr \
      --remote-url https://dr.example:7942 --remote-topic orders \
      --remote-user replicator --remote-password-stdin

--start says where a remote link begins: attach (the parents' end now, the
default), frontier (each partition's consumer frontier) or oldest (every
retained record). "narad topic children PARENT" shows the link's state.

--filter copies only the records an Amazon SNS filter policy matches, in
their headers (the default) or, with --filter-scope payload, the fields of
their JSON payload; "narad topic filter" changes or removes it:

  narad topic attach orders orders-eu --filter '{"region": [{"prefix": "eu-"}]}'

--sns-envelope wraps each copy in Amazon SNS's notification JSON, as SNS
delivers to an SQS queue without raw message delivery:

  narad topic attach news news-q --sns-envelope arn:aws:sns:us-east-1:000000000000:news`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeTopicsAt(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			req := client.AttachRequest{Child: args[1], Envelope: filt.envelope()}
			if req.Filter, req.FilterScope, err = filt.read(); err != nil {
				return err
			}
			fs := cmd.Flags()
			if r.url == "" {
				for _, name := range []string{"remote-topic", "remote-user", "remote-password-stdin", "start"} {
					if fs.Changed(name) {
						return fmt.Errorf("--%s needs --remote-url: it applies to a child in another cluster", name)
					}
				}
				if req.DelayMs, err = millis("delay", delay); err != nil {
					return err
				}
				if delay > maxDelay {
					return flagErr("delay", showDuration(delay), "must be at most %s", showDuration(maxDelay))
				}
			} else {
				if fs.Changed("delay") {
					return errors.New("--delay and --remote-url contradict each other: a remote child has no delay")
				}
				if req.Remote, err = a.remoteTarget(r); err != nil {
					return err
				}
				req.Start = r.start
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			res, err := c.Attach(cmd.Context(), args[0], req)
			if err != nil {
				return inFlagTerms(err, fs)
			}
			for _, w := range res.Warnings {
				fmt.Fprintf(a.stderr, "narad: warning: %s\n", w)
			}
			if len(res.Warnings) == 0 {
				a.warnPlaintext(req.Remote)
			}
			if format == formatJSON {
				return printJSON(a.stdout, rawOf(res))
			}
			_, err = fmt.Fprintln(a.stdout, attachSummary(args[0], req, res))
			return err
		},
	}
	fs := cmd.Flags()
	fs.Var(newDurationValue(&delay, 0), "delay", "deliver to the child this long after the parent, e.g. 1h")
	fs.StringVar(&r.url, "remote-url", "", "the other cluster's URL, e.g. https://dr.example:7942 (CHILD is then the link's name)")
	fs.StringVar(&r.topic, "remote-topic", "", "the topic there that receives the records (required with --remote-url)")
	fs.StringVar(&r.user, "remote-user", "", "the user to produce there as")
	fs.BoolVar(&r.passwordStdin, "remote-password-stdin", false, "read that user's password from standard input (else "+remotePasswordEnv+")")
	fs.StringVar(&r.start, "start", "", "where a remote link starts: attach (default), frontier or oldest")
	_ = cmd.RegisterFlagCompletionFunc("start", cobra.FixedCompletions(
		[]string{client.StartAttach, client.StartFrontier, client.StartOldest}, cobra.ShellCompDirectiveNoFileComp))
	filt.add(fs)
	filt.addEnvelope(fs)
	completeScope(cmd)
	out = addOutputFlags(cmd)
	return cmd
}

func completeScope(cmd *cobra.Command) {
	_ = cmd.RegisterFlagCompletionFunc("filter-scope", cobra.FixedCompletions(
		[]string{client.FilterHeaders, client.FilterPayload}, cobra.ShellCompDirectiveNoFileComp))
}

func (a *app) topicFilterCmd() *cobra.Command {
	var filt filterFlags
	var remove bool
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "filter PARENT CHILD",
		Short: "Change or remove the filter of the link from PARENT to CHILD",
		Long: `Set the filter of the link from PARENT to CHILD, or remove it:

  narad topic filter orders orders-eu --filter '{"region": [{"prefix": "eu-"}]}'
  narad topic filter orders orders-big --filter '{"total": [{"numeric": [">", 100]}]}' --filter-scope payload
  narad topic filter orders orders-eu --remove

The link's cursors apply the change from their next batch of records.`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeParentThenChild,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := out.format()
			if err != nil {
				return err
			}
			var p client.ChildPatch
			if p.Filter, p.FilterScope, err = filt.read(); err != nil {
				return err
			}
			if remove == (p.Filter != nil) {
				return errors.New("give --filter JSON to set the link's filter, or --remove to remove it")
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			k, err := c.PatchChild(cmd.Context(), args[0], args[1], p)
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, rawOf(k))
			}
			if k.Filter == nil {
				_, err = fmt.Fprintf(a.stdout, "removed the filter of %s under %s\n", args[1], args[0])
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "filter of %s under %s: %s (%s)\n", args[1], args[0], k.Filter, first(k.FilterScope, client.FilterHeaders))
			return err
		},
	}
	fs := cmd.Flags()
	filt.add(fs)
	fs.BoolVar(&remove, "remove", false, "remove the link's filter: it copies every record again")
	completeScope(cmd)
	out = addOutputFlags(cmd)
	return cmd
}

// remoteTarget checks the remote flags and reads the password.
func (a *app) remoteTarget(r remoteFlags) (*client.RemoteTarget, error) {
	if err := checkServerURL(r.url, false); err != nil {
		return nil, fmt.Errorf("--remote-url %w", err)
	}
	if r.topic == "" {
		return nil, errors.New("--remote-topic is required with --remote-url: name the topic of the other cluster")
	}
	if r.start != "" && !slices.Contains([]string{client.StartAttach, client.StartFrontier, client.StartOldest}, r.start) {
		return nil, flagErr("start", r.start, "must be attach, frontier or oldest")
	}
	t := &client.RemoteTarget{URL: r.url, Topic: r.topic, Username: r.user}
	envPassword := a.env(remotePasswordEnv)
	switch {
	case r.passwordStdin && envPassword != "":
		return nil, fmt.Errorf("--remote-password-stdin and %s contradict each other: give the password once", remotePasswordEnv)
	case r.passwordStdin:
		pw, err := a.readSecret("Password of "+first(r.user, "the remote user")+" at "+r.url, false)
		if err != nil {
			return nil, fmt.Errorf("--remote-password-stdin: %w", err)
		}
		t.Password = pw
	default:
		t.Password = envPassword
	}
	if t.Username != "" && t.Password == "" {
		return nil, fmt.Errorf("--remote-user %s needs a password: --remote-password-stdin, or %s", r.user, remotePasswordEnv)
	}
	if t.Username == "" && t.Password != "" {
		return nil, errors.New("a remote password needs --remote-user")
	}
	return t, nil
}

// warnPlaintext says that a remote link's credentials will cross the
// network in clear; the server says it too when it knows to (the attach
// answer's warnings), and then this stays quiet.
func (a *app) warnPlaintext(t *client.RemoteTarget) {
	if t == nil || t.Password == "" {
		return
	}
	if u, err := url.Parse(t.URL); err == nil && u.Scheme == "http" {
		fmt.Fprintf(a.stderr, "narad: warning: %s is plain http://: the broker will send %s's password there unencrypted; use https://\n",
			t.URL, t.Username)
	}
}

// attachSummary is the line printed after an attach.
func attachSummary(parent string, req client.AttachRequest, res client.AttachResult) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "attached %s to %s", req.Child, parent)
	if req.Remote != nil {
		fmt.Fprintf(&sb, ": records go to topic %s at %s, from %s", req.Remote.Topic, req.Remote.URL, first(req.Start, client.StartAttach))
	} else if req.DelayMs > 0 {
		sb.WriteString(" with delay " + formatMs(req.DelayMs))
	}
	if res.Filter != nil {
		fmt.Fprintf(&sb, ", filtered by %s (%s)", res.Filter, first(res.FilterScope, client.FilterHeaders))
	}
	if res.Envelope != nil {
		fmt.Fprintf(&sb, ", wrapped as %s notifications of %s", res.Envelope.Format, res.Envelope.TopicARN)
	}
	if res.AttachEpoch != "" {
		sb.WriteString(" (epoch " + res.AttachEpoch + ")")
	}
	return sb.String()
}

func (a *app) topicDetachCmd() *cobra.Command {
	return &cobra.Command{
		Use:               "detach PARENT CHILD",
		Short:             "Stop fanning out PARENT to CHILD",
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: a.completeParentThenChild,
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
	var out *outputFlags
	cmd := &cobra.Command{
		Use:   "children PARENT",
		Short: "List the children of PARENT: lag, and a remote link's state and target",
		Long: `List the children of PARENT, one row each:

  DELAY     the fan-out delay; - for none
  STATE     a remote link's state: running, retrying, auth_failed,
            target_missing or rejected; - for a local child
  TARGET    a remote link's topic and cluster; - for a local child
  LAG       parent records not yet copied, summed over partitions
  DUE LAG   how late a delay child's due records are
  COMPLETE  false when some partition's lag could not be measured
  DROPPED   records a child lost to the parent's retention
  REASON    why a remote link is not running

-o wide adds the attach epoch, a remote link's recovery point (the
oldest commit time its target acknowledged), and a filtered link's
filter and the records it did not match (FILTERED: on the node that
answered, since it started); -o json prints the API's listing.`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: a.completeTopics,
		RunE: func(cmd *cobra.Command, args []string) error {
			format, c, err := a.printingClient(out)
			if err != nil {
				return err
			}
			kids, err := c.Children(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			if format == formatJSON {
				return printJSON(a.stdout, struct {
					Parent   string `json:"parent"`
					Children []any  `json:"children"`
				}{args[0], rawList(kids)})
			}
			return printChildren(a.stdout, kids, format == formatWide)
		},
	}
	out = addOutputFlags(cmd)
	return cmd
}

func printChildren(w io.Writer, kids []client.Child, wide bool) error {
	tw := newTable(w)
	header := "CHILD\tDELAY\tSTATE\tTARGET\tLAG\tDUE LAG\tCOMPLETE\tDROPPED\tREASON"
	if wide {
		header += "\tATTACH EPOCH\tRECOVERY POINT\tFILTER\tFILTERED"
	}
	fmt.Fprintln(tw, header)
	for _, k := range kids {
		due := "-"
		if k.DueLagSeconds != nil {
			due = fmt.Sprintf("%.1fs", *k.DueLagSeconds)
		}
		delay := "-"
		if k.DelayMs > 0 {
			delay = formatMs(k.DelayMs)
		}
		target := "-"
		if k.Remote != nil {
			target = k.Remote.Topic + " at " + k.Remote.URL
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\t%v\t%d\t%s", k.Name, delay, orDash(k.State), target,
			k.LagMessages, due, k.LagComplete, k.DroppedMessages, orDash(oneLine(k.StateReason)))
		if wide {
			filter := "-"
			if k.Filter != nil {
				filter = string(k.Filter)
				if k.FilterScope == client.FilterPayload {
					filter = "payload " + filter
				}
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%d", orDash(k.AttachEpoch), recoveryPoint(k.RecoveryPoint), filter, k.Filtered)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// recoveryPoint is the oldest commit time a remote link's target has
// acknowledged over its partitions: if this cluster were lost now, the
// target holds everything committed before it. "-" until every partition
// has one.
func recoveryPoint(points []client.RecoveryPoint) string {
	if len(points) == 0 {
		return "-"
	}
	oldest := int64(0)
	for _, p := range points {
		if p.CommittedAtMs == 0 {
			return "-"
		}
		if oldest == 0 || p.CommittedAtMs < oldest {
			oldest = p.CommittedAtMs
		}
	}
	return time.UnixMilli(oldest).UTC().Format(time.RFC3339)
}

// oneLine keeps a table row on one line whatever a reason says.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
