package schema

import (
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// describe reduces a validation error tree to one leaf. The library's own
// message lists every cause, which for a 1 MiB body can be huge, and orders
// siblings by map iteration, so the same body could get a different message
// on each request. The chosen leaf is the one with the earliest instance
// location, then the earliest keyword location: stable and usually the
// outermost problem.
func describe(root *jsonschema.ValidationError) string {
	var (
		best   *jsonschema.ValidationError
		leaves int
		stack  = []*jsonschema.ValidationError{root}
	)
	// Iterative so a deeply nested body cannot grow the goroutine stack
	// here; the walk is linear in the number of errors.
	for len(stack) > 0 {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if len(e.Causes) > 0 {
			stack = append(stack, e.Causes...)
			continue
		}
		leaves++
		if best == nil || before(e, best) {
			best = e
		}
	}
	if best == nil {
		return root.Error()
	}
	// A leaf's Error() is just "at '<pointer>': <reason>".
	msg := best.Error()
	switch leaves {
	case 1:
	case 2:
		msg += " (and 1 more error)"
	default:
		msg += fmt.Sprintf(" (and %d more errors)", leaves-1)
	}
	return msg
}

// before orders leaves by instance location, token by token, then by
// keyword location, then by message so ties cannot depend on map order.
func before(a, b *jsonschema.ValidationError) bool {
	if c := comparePointers(a.InstanceLocation, b.InstanceLocation); c != 0 {
		return c < 0
	}
	ka, kb := keywordLocation(a), keywordLocation(b)
	if ka != kb {
		return ka < kb
	}
	return a.Error() < b.Error()
}

func keywordLocation(e *jsonschema.ValidationError) string {
	return e.SchemaURL + "/" + strings.Join(e.ErrorKind.KeywordPath(), "/")
}

// comparePointers compares JSON pointers token by token; a prefix comes
// first, so an error on an object sorts before errors inside it.
func comparePointers(a, b []string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := compareTokens(a[i], b[i]); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// compareTokens puts array indices in numeric order ("9" before "10"), so
// "first" means first in the body rather than first as text.
func compareTokens(a, b string) int {
	if isIndex(a) && isIndex(b) && len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
