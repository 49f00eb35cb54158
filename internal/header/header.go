package header

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// Header is one record header: a name of [a-z0-9._-] and a UTF-8 value.
type Header struct {
	Name  string
	Value string
}

// The rules (docs/concepts.md, "Records").
const (
	MaxName  = 128      // bytes of a name
	MaxValue = 4 << 10  // bytes of a value
	MaxCount = 64       // headers a client may put on one record
	MaxBytes = 16 << 10 // names and values together, per record, from a client

	// ReservedPrefix starts the names only the broker may set.
	ReservedPrefix = "narad-"

	// The broker's allowance for its own headers (a dead-lettered record
	// keeps its client headers and gains five narad-dlq-* ones).
	reservedCount = 16
	reservedBytes = 4 << 10

	// StoredCount and StoredBytes bound a decoded list: what Check lets
	// through with the allowance, and no more.
	StoredCount = MaxCount + reservedCount
	StoredBytes = MaxBytes + reservedBytes
)

// ErrInvalid is wrapped by every refusal of Check and Decode.
var ErrInvalid = errors.New("invalid header")

// Source says who set a record's headers.
type Source int

const (
	// Client: names beginning "narad-" are refused; the client caps apply.
	Client Source = iota
	// Reserved: the broker's own record; "narad-" names are allowed and the
	// caps grow by the broker's allowance. Never reachable from the HTTP
	// edge.
	Reserved
)

// Check sorts hs by name in place and validates it. Its error names the
// offending header (and wraps ErrInvalid): the first by name, so the
// same headers are refused in the same words whatever order they came in
// (a JSON object's, a map's).
func Check(hs []Header, src Source) error {
	if len(hs) == 0 {
		return nil
	}
	count, total := MaxCount, MaxBytes
	if src == Reserved {
		count, total = StoredCount, StoredBytes
	}
	if len(hs) > count {
		return fmt.Errorf("%w: %d headers, at most %d per record", ErrInvalid, len(hs), count)
	}
	Sort(hs)
	sum := 0
	for _, h := range hs {
		if err := CheckName(h.Name); err != nil {
			return err
		}
		if src == Client && strings.HasPrefix(h.Name, ReservedPrefix) {
			return fmt.Errorf("%w %q: names beginning %q are reserved for the broker", ErrInvalid, h.Name, ReservedPrefix)
		}
		if len(h.Value) > MaxValue {
			return fmt.Errorf("%w %q: value of %d bytes, at most %d", ErrInvalid, h.Name, len(h.Value), MaxValue)
		}
		if !utf8.ValidString(h.Value) {
			return fmt.Errorf("%w %q: value is not valid UTF-8", ErrInvalid, h.Name)
		}
		sum += len(h.Name) + len(h.Value)
		if sum > total {
			return fmt.Errorf("%w %q: headers reach %d bytes (names and values), at most %d per record", ErrInvalid, h.Name, sum, total)
		}
	}
	for i := 1; i < len(hs); i++ {
		if hs[i].Name == hs[i-1].Name {
			return fmt.Errorf("%w %q: given twice", ErrInvalid, hs[i].Name)
		}
	}
	return nil
}

// CheckName validates a name's syntax: 1..128 of [a-z0-9._-].
func CheckName(name string) error {
	if len(name) == 0 {
		return fmt.Errorf("%w: empty name", ErrInvalid)
	}
	if len(name) > MaxName {
		return fmt.Errorf("%w %.32q…: name of %d bytes, at most %d", ErrInvalid, name, len(name), MaxName)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("%w %q: names are lower-case [a-z0-9._-]", ErrInvalid, name)
		}
	}
	return nil
}

// Sort orders hs by name (stable, so Check can report the duplicate).
func Sort(hs []Header) {
	if slices.IsSortedFunc(hs, byName) {
		return
	}
	slices.SortStableFunc(hs, byName)
}

func byName(a, b Header) int { return cmp.Compare(a.Name, b.Name) }

// Get returns the value of name and whether hs has it.
func Get(hs []Header, name string) (string, bool) {
	for _, h := range hs {
		if h.Name == name {
			return h.Value, true
		}
	}
	return "", false
}

// Without returns the headers of hs whose names do not begin with prefix,
// sharing hs's array when nothing is dropped.
func Without(hs []Header, prefix string) []Header {
	keep := 0
	for _, h := range hs {
		if !strings.HasPrefix(h.Name, prefix) {
			keep++
		}
	}
	if keep == len(hs) {
		return hs
	}
	out := make([]Header, 0, keep)
	for _, h := range hs {
		if !strings.HasPrefix(h.Name, prefix) {
			out = append(out, h)
		}
	}
	return out
}
