package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// topicFlags are the settings shared by "topic add" and "topic edit".
// Durations are typed in human units and sent in milliseconds.
type topicFlags struct {
	partitions    int
	retention     time.Duration
	visibility    time.Duration
	maxInFlight   int
	maxAckedAhead int
	delay         time.Duration
	deliveryDelay time.Duration
	dedupeWindow  time.Duration
	parent        string
	schemaFile    string
	noSchema      bool
	maxDeliveries int
	deadLetter    string
	replicas      int
	ordering      string
	filter        filterFlags // create: the link's filter, with --parent
	tags          []string    // --tag KEY=VALUE, repeatable
	clearTags     bool        // edit: --clear-tags
}

func (f *topicFlags) register(a *app, cmd *cobra.Command, create bool) {
	fs := cmd.Flags()
	fs.IntVar(&f.partitions, "partitions", 0, "number of partitions (default: the server's)")
	fs.Var(newDurationValue(&f.retention, 0), "retention", "how long records are kept, e.g. 12h, 7d; 0 keeps them forever")
	fs.Var(newDurationValue(&f.visibility, 0), "visibility", "visibility timeout of a delivery, 1s..12h, e.g. 30s")
	fs.IntVar(&f.maxInFlight, "max-in-flight", 0, "most unacknowledged deliveries per partition")
	fs.IntVar(&f.maxAckedAhead, "max-acked-ahead", 0, "most acks tracked past the frontier per partition")
	fs.Var(newDurationValue(&f.delay, 0), "delay", "fan-out delay from the parent, e.g. 1h")
	fs.Var(newDurationValue(&f.deliveryDelay, 0), "delivery-delay", "scheduled delivery: offer each record to queue consumers this long after it is accepted, unless it names its own delay, up to 365d; 0 turns it off")
	fs.Var(newDurationValue(&f.dedupeWindow, 0), "dedupe-window", "idempotent produce: store one record per msg id within this window, 1s..24h, e.g. 2m; 0 turns it off")
	fs.StringVar(&f.schemaFile, "schema-file", "", `JSON Schema every payload must match, from this file ("-": standard input)`)
	fs.IntVar(&f.maxDeliveries, "max-deliveries", 0, "deliveries a record gets before it goes to --dead-letter-topic, 1..1000 (0: off)")
	fs.IntVar(&f.replicas, "replication-factor", 0, "copies of each partition on distinct nodes, 1..5, at most the live nodes (default 1)")
	fs.StringVar(&f.ordering, "ordering", "", `"group": records of one key are delivered one at a time, in order; "none": any record any time (default)`)
	_ = cmd.RegisterFlagCompletionFunc("ordering", cobra.FixedCompletions([]string{"none", "group"}, cobra.ShellCompDirectiveNoFileComp))
	fs.StringVar(&f.deadLetter, "dead-letter-topic", "", `topic that records whose deliveries are used up go to (edit: "" clears it)`)
	_ = cmd.RegisterFlagCompletionFunc("dead-letter-topic", a.completeTopicFlag)
	if create {
		fs.StringArrayVar(&f.tags, "tag", nil, "a tag of the topic, KEY=VALUE (repeat for more)")
	} else {
		fs.StringArrayVar(&f.tags, "tag", nil, "a tag of the topic, KEY=VALUE (repeat for more): the tags given replace all the topic has")
		fs.BoolVar(&f.clearTags, "clear-tags", false, "remove all the topic's tags")
	}
	if create {
		fs.StringVar(&f.parent, "parent", "", "parent topic to receive fan-out from")
		_ = cmd.RegisterFlagCompletionFunc("parent", a.completeTopicFlag)
		f.filter.add(fs)
		f.filter.addEnvelope(fs)
	} else {
		fs.BoolVar(&f.noSchema, "no-schema", false, "remove the topic's schema")
	}
}

// The bounds of docs/http-api.md that are not configurable, checked here so
// a mistake is named by its flag, in the user's units, before anything
// is sent. Partitions' maximum is the server's setting: the server checks
// it, and its answer is translated to the flag (flagError).
const (
	minRetention  = time.Hour
	minVisibility = time.Second
	maxVisibility = 12 * time.Hour
	maxDelay      = 365 * 24 * time.Hour
	maxFlowCap    = 1_000_000
	maxDeliveries = 1000
	maxReplicas   = 5

	minDedupeWindow = time.Second
	maxDedupeWindow = 24 * time.Hour
)

// check validates the flags that were typed (fs.Changed), in the words
// of every CLI error: "--FLAG VALUE: must be …".
func (f *topicFlags) check(fs *pflag.FlagSet) error {
	typed := func(name string) string { return fs.Lookup(name).Value.String() }
	if fs.Changed("partitions") && f.partitions < 1 {
		return flagErr("partitions", typed("partitions"), "must be at least 1")
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"max-in-flight", f.maxInFlight}, {"max-acked-ahead", f.maxAckedAhead}} {
		if fs.Changed(c.name) && (c.n < 1 || c.n > maxFlowCap) {
			return flagErr(c.name, typed(c.name), "must be 1..%d", maxFlowCap)
		}
	}
	if fs.Changed("replication-factor") && (f.replicas < 1 || f.replicas > maxReplicas) {
		return flagErr("replication-factor", typed("replication-factor"), "must be 1..%d", maxReplicas)
	}
	if fs.Changed("max-deliveries") && (f.maxDeliveries < 0 || f.maxDeliveries > maxDeliveries) {
		return flagErr("max-deliveries", typed("max-deliveries"), "must be 0 (off) or 1..%d", maxDeliveries)
	}
	if fs.Changed("retention") && f.retention != 0 && f.retention < minRetention {
		return flagErr("retention", typed("retention"), "must be 0 (keep forever) or at least %s", showDuration(minRetention))
	}
	if fs.Changed("visibility") {
		switch {
		case f.visibility < minVisibility:
			return flagErr("visibility", orZero(typed("visibility")), "must be at least %s", showDuration(minVisibility))
		case f.visibility > maxVisibility:
			return flagErr("visibility", typed("visibility"), "must be at most %s", showDuration(maxVisibility))
		}
	}
	if fs.Changed("dedupe-window") && f.dedupeWindow != 0 && (f.dedupeWindow < minDedupeWindow || f.dedupeWindow > maxDedupeWindow) {
		return flagErr("dedupe-window", typed("dedupe-window"), "must be 0 (off) or %s..%s", showDuration(minDedupeWindow), showDuration(maxDedupeWindow))
	}
	for _, d := range []struct {
		name string
		d    time.Duration
	}{{"delay", f.delay}, {"delivery-delay", f.deliveryDelay}} {
		if fs.Changed(d.name) && d.d > maxDelay {
			return flagErr(d.name, typed(d.name), "must be at most %s", showDuration(maxDelay))
		}
	}
	if fs.Changed("ordering") && f.ordering != "none" && f.ordering != "group" {
		return flagErr("ordering", typed("ordering"), `must be "none" or "group"`)
	}
	if f.noSchema && f.schemaFile != "" {
		return errors.New("--schema-file and --no-schema contradict each other")
	}
	if f.clearTags && len(f.tags) > 0 {
		return errors.New("--tag and --clear-tags contradict each other")
	}
	_, err := f.tagMap()
	return err
}

// tagMap is the --tag flags as the API's tags: nil when none was given.
// The limits on keys and values are the server's, which names them.
func (f *topicFlags) tagMap() (map[string]string, error) {
	if len(f.tags) == 0 {
		return nil, nil
	}
	m := make(map[string]string, len(f.tags))
	for _, kv := range f.tags {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, flagErr("tag", kv, "must be KEY=VALUE")
		}
		if _, dup := m[k]; dup {
			return nil, flagErr("tag", kv, "the key %s is given twice", k)
		}
		m[k] = v
	}
	return m, nil
}

// orZero shows a zero duration the way it was typed ("0"); the flag
// value prints zero as "" so help shows no meaningless default.
func orZero(s string) string { return first(s, "0") }

// flagErr is the one form of a refused flag: "--visibility 13h: must be
// at most 12h".
func flagErr(flag, value, format string, args ...any) error {
	return fmt.Errorf("--%s %s: %s", flag, value, fmt.Sprintf(format, args...))
}

// showDuration prints a duration in the units flags take ("12h", "7d").
func showDuration(d time.Duration) string { return formatMs(d.Milliseconds()) }

// readSchema reads --schema-file: a file, or standard input for "-". The
// document must be JSON; whether it is a valid schema is the server's
// call (it compiles it).
func (a *app) readSchema(file string) (json.RawMessage, error) {
	var data []byte
	var err error
	if file == "-" {
		data, err = io.ReadAll(a.stdin)
	} else {
		data, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, fmt.Errorf("--schema-file %s: %w", file, err)
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		return nil, fmt.Errorf("--schema-file %s: not JSON: %v", file, err)
	}
	return json.RawMessage(data), nil
}

// apiFlags names each API field of a topic by the flag that sets it.
var apiFlags = map[string]string{
	"partitions":                    "partitions",
	"retention_ms":                  "retention",
	"visibility_timeout_ms":         "visibility",
	"max_in_flight_per_partition":   "max-in-flight",
	"max_acked_ahead_per_partition": "max-acked-ahead",
	"fanout_delay_ms":               "delay",
	"dedupe_window_ms":              "dedupe-window",
	"delivery_delay":                "delivery-delay",
	"delivery_delay_ms":             "delivery-delay",
	"delay_ms":                      "delay",
	"schema":                        "schema-file",
	"parent":                        "parent",
	"max_deliveries":                "max-deliveries",
	"dead_letter_topic":             "dead-letter-topic",
	"replication_factor":            "replication-factor",
	"tags":                          "tag",
}

// flagError is a server refusal of a field, retold with the flag that set
// it; the *client.APIError stays inside for the exit code.
type flagError struct {
	msg string
	err error
}

func (e *flagError) Error() string { return e.msg }
func (e *flagError) Unwrap() error { return e.err }

// inFlagTerms retells a 400 that starts with an API field name
// ("partitions must be 1..108, got 200") as the flag that set it
// ("--partitions 200: must be 1..108"), when that flag was typed.
func inFlagTerms(err error, fs *pflag.FlagSet) error {
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != 400 {
		return err
	}
	field, rest, ok := strings.Cut(apiErr.Message, " ")
	flag, known := apiFlags[strings.TrimSuffix(field, ":")]
	if !ok || !known || fs.Lookup(flag) == nil || !fs.Changed(flag) {
		return err
	}
	if i := strings.LastIndex(rest, ", got "); i > 0 {
		if _, perr := strconv.ParseInt(rest[i+len(", got "):], 10, 64); perr == nil {
			rest = rest[:i] // the flag's value says it, in the user's units
		}
	}
	value := fs.Lookup(flag).Value.String()
	if fs.Lookup(flag).Value.Type() == "duration" {
		value = orZero(value)
	}
	return &flagError{msg: fmt.Sprintf("--%s %s: %s", flag, value, rest), err: err}
}
