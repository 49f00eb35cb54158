package filter

import (
	"fmt"
	"strings"
)

// Scope says what a filter is matched against: SNS's FilterPolicyScope.
type Scope string

const (
	// Headers matches a record's headers, as SNS's MessageAttributes scope
	// matches a message's attributes.
	Headers Scope = "headers"
	// Payload matches the fields of a record's JSON payload, as SNS's
	// MessageBody scope matches a message's body.
	Payload Scope = "payload"
)

// The limits SNS sets on a subscription filter policy, and this package's
// own where SNS names none (see doc.go).
const (
	// MaxCombinations is SNS's cap on a policy's total combination of
	// values (Combinations).
	MaxCombinations = 150
	// MaxKeys is SNS's cap on a policy's keys: every attribute name in
	// the headers scope, the top-level keys in the payload scope.
	MaxKeys = 5
	// MaxDepth is how many objects deep a payload policy may nest keys.
	// SNS names no figure; the combination count already refuses most
	// deeper policies, since each level multiplies it.
	MaxDepth = 10
	// MaxBytes is SNS's cap on a policy's size.
	MaxBytes = 256 << 10
	// MaxNumber bounds the numbers a policy may name (SNS: -10^9 to 10^9).
	MaxNumber = 1e9
	// MaxDecimals is how many digits after the decimal point a policy's
	// numbers may have, and the precision numbers are compared at.
	MaxDecimals = 5
)

// Filter is a compiled filter policy. Its methods are safe for concurrent
// use: Match reads it and writes nothing.
type Filter struct {
	scope  Scope
	root   *object // nil for the empty policy {}, which matches everything
	canon  string
	combos int

	// The payload scope's index, built once by Compile: the paths the
	// policy names as a trie, each leaf path's conditions, and the number
	// of condition bits and path slots Match keeps while it reads.
	trie      *trieNode
	slotConds [][]*cond
	ncond     int
	nslot     int
}

// object is an AND of its fields and, when the policy has a recognised
// "$or" there, of the OR of its branches.
type object struct {
	fields []field // sorted by key
	or     []*object
}

// field is one key of an object: a leaf (an array of conditions) or, in
// the payload scope only, a nested object.
type field struct {
	key   string
	leaf  *leaf
	child *object
}

// leaf is a key's array of conditions, ORed.
type leaf struct {
	path  []string // from the root; one name in the headers scope
	slot  int      // payload: the index of path among the distinct leaf paths
	conds []*cond
}

// Error is a policy Compile refused: Path names the place in the policy,
// starting "filter" (filter.store[0].numeric), so an HTTP answer can say
// where the mistake is.
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

func errAt(path, format string, args ...any) *Error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

// Scope returns the scope the filter was compiled for.
func (f *Filter) Scope() Scope { return f.scope }

// Combinations returns the policy's total combination of values, counted
// as SNS counts it (see doc.go); Compile refuses more than MaxCombinations.
func (f *Filter) Combinations() int { return f.combos }

// String returns the policy as canonical JSON: keys sorted, numbers in
// their shortest form, no space. Compile reads it back to an equal filter,
// so it is what to store.
func (f *Filter) String() string { return f.canon }

// Match reports whether a record with these headers and this payload
// passes the filter. It reads only what the filter's scope names: the
// headers in the headers scope, the payload in the payload scope.
func (f *Filter) Match(headers map[string]string, payload []byte) bool {
	if f.root == nil {
		return true
	}
	if f.scope == Headers {
		// SNS: a message with no attributes at all matches no policy,
		// not even one of "exists": false.
		if len(headers) == 0 {
			return false
		}
		return f.root.matchHeaders(headers)
	}
	return f.matchPayload(payload)
}

func (o *object) matchHeaders(h map[string]string) bool {
	for i := range o.fields {
		l := o.fields[i].leaf
		v, ok := h[l.path[0]]
		if !l.matchHeader(v, ok) {
			return false
		}
	}
	if o.or == nil {
		return true
	}
	for _, b := range o.or {
		if b.matchHeaders(h) {
			return true
		}
	}
	return false
}

// pathString names a key path the way errors do: filter.a.b, with a
// name that is not a plain word quoted (filter["a.b"]).
func pathString(base, key string) string {
	if key != "" && strings.IndexFunc(key, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '$' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) < 0 {
		return base + "." + key
	}
	return base + "[" + string(appendString(nil, key)) + "]"
}
