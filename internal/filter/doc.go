// Package filter is the matching engine of fan-out filters: a child link
// with a filter copies only the records the filter matches. A filter is
// written as an Amazon SNS subscription filter policy and means what SNS
// means by it. The package owns the policy's syntax, its limits, its
// canonical form for storage and its matching; it imports nothing of
// ours.
//
// # Scopes
//
// Headers (SNS's MessageAttributes scope) matches a record's headers. A
// header's value is a string; one that is a JSON number is also that
// number, for number values and numeric conditions, as an SNS Number
// attribute is (headers carry no type, so "5" is both the string "5" and
// the number 5). One that is a JSON array of scalars is read as SNS reads
// a String.Array: each element is matched on its own, with its JSON type,
// and the key matches when any element does. The policy's keys are header
// names; it cannot nest objects.
//
// Payload (SNS's MessageBody scope) matches the fields of a JSON object
// payload. A policy key whose value is an object names the fields of a
// nested object. Arrays in the payload are transparent: the elements of
// an array stand where the array stands, so {"a": {"b": ["x"]}} matches
// {"a": [{"b": "y"}, {"b": "x"}]}. Each key is matched on its own, as in
// SNS: two keys may be satisfied by different elements of one array. A
// key's values are the leaves (strings, numbers, booleans, null) found at
// its path; an object there is no value.
//
// # Semantics
//
// The keys of a policy object are ANDed; the elements of a key's array
// are ORed. An element is a value (string, number, true, false, null)
// that matches equal values of the same type, or an object naming one
// operator:
//
//   - prefix, suffix: a string value that starts or ends so.
//   - equals-ignore-case: a string value equal under Unicode case folding.
//   - numeric: ["op", n] with op one of =, <, <=, >, >=, or a range
//     [">" or ">=", n, "<" or "<=", m] with n < m.
//   - exists: true when the key holds a value other than null, false when
//     it does not (absent, null, an empty array, an object).
//   - anything-but: a value or a list of them (matches a value that
//     equals none of them), or {"prefix": s} or {"suffix": s} (matches a
//     value that does not start or end so). It needs a value: an absent
//     key and null match no anything-but; combine it with
//     {"exists": false} to accept absence too.
//   - cidr: a string that is an IPv4 or IPv6 address inside the network
//     (an IPv4-mapped IPv6 address counts as its IPv4 address).
//
// "$or": [{...}, {...}] ORs whole policy objects, at the top or inside a
// nested object, following SNS's rule: it is the operator only when its
// value is an array of at least two objects none of which has an
// operator's name as a key; otherwise "$or" is an ordinary key.
//
// Numbers compare at SNS's precision, five decimal places: a record's
// 0.100001 equals the policy's 0.1. The empty policy {} matches every
// record, as setting {} removes a filter in SNS.
//
// # Limits
//
// As SNS: at most MaxBytes of valid UTF-8; at most MaxKeys keys, counting
// every attribute name in the headers scope (inside $or branches too) and
// the top-level keys in the payload scope (a top-level $or's branches'
// keys are top-level keys); at most MaxCombinations combinations of
// values, counted as SNS counts them: the product over the keys of the
// number of elements of each key's array times the key's depth (1 at the
// top; so always 1 in the headers scope), an "$or" contributing the sum of
// its branches' counts; numbers within ±MaxNumber with at most
// MaxDecimals digits after the point as written. SNS names no nesting
// limit; this package takes MaxDepth objects. Compile's errors name the
// place in the policy as a path from "filter", such as
// filter.store[0].numeric[1], so the HTTP layer can answer 400 with it.
//
// # Choices
//
// Where SNS's documentation leaves a question open, this package
// chooses, each the reading that keeps SNS's documented examples true:
//
//   - A record with no headers at all matches no headers policy, not even
//     {"k": [{"exists": false}]}: SNS documents this for a message with
//     no attributes.
//   - A payload that is not a JSON object (not JSON, or an array, a
//     string...) matches no payload policy, not even one satisfied by
//     absence: SNS's MessageBody filtering assumes a well-formed JSON
//     object, and the emulators checked against it fail closed. A JSON
//     object payload, even {}, is matched normally.
//   - A header is present when its name is in the map, whatever its
//     value; exists counts it so.
//   - A policy object with the same key twice is refused, not read as
//     its last occurrence; so are an empty object or array and a bare
//     value where an array belongs.
//   - cidr refuses a network with host bits set (10.0.0.1/8), naming
//     the network meant.
//   - prefix, suffix, equals-ignore-case and cidr match strings only: a
//     payload number is not text. A header is always a string.
//   - Keys are names, never paths: "a.b" is a key with a dot in it.
//
// # Invariant
//
// Compile rejects everything Match cannot evaluate, so a compiled filter
// always evaluates; and Match is a pure function of the filter and its
// arguments: it writes nothing shared, so a *Filter is safe for
// concurrent use. String is canonical: Compile(f.String()) compiles to a
// filter whose String is the same, and which matches the same records.
// Match does not allocate in the headers scope in the common case: it
// does only when a header the policy names holds a JSON array, or when
// a cidr condition meets a value that is not an IP address or a number
// beyond float64's range (the standard library's parse errors). The
// payload scope reads the payload once, descending only into the keys
// the policy names.
package filter
