package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/dustin/go-humanize"
	"github.com/narad-io/narad/client"
)

// renderPayload shows a payload as itself: JSON verbatim, text as text, and
// anything else as a hex dump headed by its length. Text with control
// characters counts as binary: printed raw, an escape sequence from a
// message could take over the reader's terminal.
func renderPayload(b []byte) string {
	if len(b) > 0 && json.Valid(b) {
		return string(b)
	}
	if isText(b) {
		return string(b)
	}
	return fmt.Sprintf("(binary, %d bytes)\n%s", len(b), strings.TrimRight(hex.Dump(b), "\n"))
}

func isText(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		if r == '\n' || r == '\t' || r == '\r' {
			continue
		}
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// messagePrinter writes delivered messages. In raw mode each payload's
// bytes are written as they are, one per line, for piping into other
// tools; as JSON each message is the API's object on one line; otherwise
// each message gets a header line (wide: with its receipt handle,
// delivery count and message id) and a rendered payload.
type messagePrinter struct {
	w      io.Writer
	raw    bool
	format outputFormat
}

func (p messagePrinter) print(m client.Message) error {
	if p.format == formatJSON {
		return printJSONLine(p.w, rawOf(m))
	}
	b, err := m.Bytes()
	if err != nil {
		return err
	}
	if p.raw {
		if _, err := p.w.Write(b); err != nil {
			return err
		}
		_, err = io.WriteString(p.w, "\n")
		return err
	}
	header := messageHeader(m)
	if p.format == formatWide {
		if m.DeliveryCount <= 1 && m.ReceiptHandle != "" { // the header shows redeliveries already
			header += fmt.Sprintf(" delivery=%d", m.DeliveryCount)
		}
		header += " handle=" + orDash(m.ReceiptHandle)
		if m.ID != "" { // the message id (docs/concepts.md, "Message ids")
			header += " id=" + m.ID
		}
	}
	_, err = fmt.Fprintf(p.w, "%s\n%s%s\n", header, headerLines(m.Headers), renderPayload(b))
	return err
}

// headerLines shows a record's headers under its header line, one a
// line, sorted by name: "#   trace-id: t1". A value that is not plain
// printable text is quoted, so it cannot take over the terminal.
func headerLines(hs map[string]string) string {
	if len(hs) == 0 {
		return ""
	}
	names := make([]string, 0, len(hs))
	for n := range hs {
		names = append(names, n)
	}
	slices.Sort(names)
	var sb strings.Builder
	for _, n := range names {
		v := hs[n]
		if !isPlainLine(v) {
			v = strconv.Quote(v)
		}
		fmt.Fprintf(&sb, "#   %s: %s\n", n, v)
	}
	return sb.String()
}

func isPlainLine(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	return !strings.HasPrefix(s, `"`)
}

// printerFor checks --raw against -o and returns the printer.
func printerFor(w io.Writer, raw bool, out *outputFlags) (messagePrinter, error) {
	format, err := out.format()
	if err != nil {
		return messagePrinter{}, err
	}
	if raw && format != formatTable {
		return messagePrinter{}, errors.New("--raw prints payloads only: it does not combine with -o wide or json")
	}
	return messagePrinter{w: w, raw: raw, format: format}, nil
}

// messageHeader is "# p2@41 key="c1" 2026-01-02T03:04:05.000Z delivery=2";
// the delivery count appears only for redeliveries, where it matters, and
// a scheduled record's due time as due=2026-01-02T03:09:05Z.
func messageHeader(m client.Message) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# p%d@%d", m.Partition, m.Offset)
	if m.Key != nil {
		fmt.Fprintf(&sb, " key=%q", *m.Key)
	}
	if t := m.Time(); !t.IsZero() {
		sb.WriteString(" " + t.Format(time.RFC3339Nano))
	}
	if due := m.DueTime(); !due.IsZero() {
		sb.WriteString(" due=" + due.Format(time.RFC3339Nano))
	}
	if m.DeliveryCount > 1 {
		fmt.Fprintf(&sb, " delivery=%d", m.DeliveryCount)
	}
	return sb.String()
}

// newTable is a tabwriter set up the same way for every listing.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// printJSON writes v indented, for --json output meant for scripts.
// HTML characters stay as they came ("<", not "\u003c").
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// formatBytes prints a size in binary units ("1.5 KiB", "64 MiB").
func formatBytes(n int64) string {
	return humanize.IBytes(uint64(max(n, 0)))
}

// orDash keeps empty table cells visible.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
