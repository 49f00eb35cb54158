package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/narad-io/narad/client"
	"github.com/spf13/cobra"
)

// outputFormat is how a command prints its data: -o table (the default),
// wide (the table with more columns) or json (the API's JSON: objects as
// the server sent them; listings as the API's list object; sub and replay
// one message object per line).
type outputFormat int

const (
	formatTable outputFormat = iota
	formatWide
	formatJSON
)

var formatNames = []string{"table", "wide", "json"}

// outputFlags is -o/--output and its alias --json, on every command that
// prints data.
type outputFlags struct {
	name   string
	asJSON bool
}

func addOutputFlags(cmd *cobra.Command) *outputFlags {
	o := &outputFlags{}
	fs := cmd.Flags()
	fs.StringVarP(&o.name, "output", "o", "table", "output format: table, wide or json")
	fs.BoolVar(&o.asJSON, "json", false, "print the API's JSON (the same as -o json)")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formatNames, cobra.ShellCompDirectiveNoFileComp))
	return o
}

// printingClient is the start of every command that prints data: the
// output format first (a typo in -o costs no request), then the client.
func (a *app) printingClient(out *outputFlags) (outputFormat, *client.Client, error) {
	format, err := out.format()
	if err != nil {
		return 0, nil, err
	}
	c, err := a.client()
	return format, c, err
}

// format reads the flags; commands call it before sending anything, so a
// typo costs no request.
func (o *outputFlags) format() (outputFormat, error) {
	f := formatTable
	switch o.name {
	case "table", "":
	case "wide":
		f = formatWide
	case "json":
		f = formatJSON
	default:
		return 0, fmt.Errorf("-o %s: must be table, wide or json", o.name)
	}
	if o.asJSON {
		if f == formatWide {
			return 0, fmt.Errorf("--json and -o wide contradict each other")
		}
		f = formatJSON
	}
	return f, nil
}

// printJSONLine writes v as one line: the form of streams (sub, replay),
// one object per line for jq and line-oriented tools. The server's own
// bytes are written as they are (a payload's spacing kept) unless they
// span lines; then they are compacted, which a line-per-object reader
// needs more than the spacing.
func printJSONLine(w io.Writer, v any) error {
	if raw, ok := v.(json.RawMessage); ok && !bytes.ContainsAny(raw, "\r\n") {
		if _, err := w.Write(raw); err != nil {
			return err
		}
		_, err := io.WriteString(w, "\n")
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// rawOf is what a value printed as JSON looks like: the server's own
// bytes when the client kept them (timestamps and unknown fields as they
// came), else the value encoded.
func rawOf[T interface{ Raw() json.RawMessage }](v T) any {
	if raw := v.Raw(); len(raw) > 0 {
		return raw
	}
	return v
}

// rawList is rawOf over a listing, never null: an empty list prints as [].
func rawList[T interface{ Raw() json.RawMessage }](vs []T) []any {
	out := make([]any, 0, len(vs))
	for _, v := range vs {
		out = append(out, rawOf(v))
	}
	return out
}

// nonNil keeps an empty listing printing as [] rather than null.
func nonNil[T any](vs []T) []T {
	if vs == nil {
		return []T{}
	}
	return vs
}

// printDone is how a command that changes something reports it: line as
// a table (and -o wide), or as JSON obj, an object naming what was acted
// on and what became of it. A command whose API answer has no body (a
// delete's 204) prints an object of its own there, so that "every
// command that prints takes -o" holds without a script parsing prose.
func printDone(w io.Writer, format outputFormat, obj any, line string) error {
	if format == formatJSON {
		return printJSON(w, obj)
	}
	_, err := io.WriteString(w, line+"\n")
	return err
}
