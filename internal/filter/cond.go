package filter

import (
	"math"
	"net/netip"
	"strings"
)

// kind is a condition's operator.
type kind uint8

const (
	exactString kind = iota
	exactNumber
	exactBool
	exactNull
	prefix
	suffix
	equalsIgnoreCase
	numeric
	cidr
	exists
	anythingBut
)

// cond is one condition of a key's array.
type cond struct {
	kind kind
	s    string  // exactString, prefix, suffix, equalsIgnoreCase
	num  float64 // exactNumber: the policy's number, for printing
	q    float64 // exactNumber: num quantised (quantise)
	b    bool    // exactBool, exists
	rng  numRange
	net  netip.Prefix
	// anythingBut: the exact values it excludes (exactString and
	// exactNumber conditions), or one prefix or suffix condition.
	not     []*cond
	notForm uint8 // how anythingBut was written, for printing: see butValues
	bit     int   // payload: this condition's bit in Match's bitset
}

// How an anything-but was written.
const (
	butValues uint8 = iota // {"anything-but": [values]} (a single value prints as a list)
	butPrefix              // {"anything-but": {"prefix": "..."}}
	butSuffix              // {"anything-but": {"suffix": "..."}}
)

// numRange is a numeric condition: one comparison, or a lower bound and
// an upper bound. Bounds are quantised.
type numRange struct {
	ops  [2]string
	nums [2]float64 // as written, for printing
	n    int        // comparisons used: 1 or 2
	lo   float64
	hi   float64
	// loOK and hiOK say whether a bound exists; loIn and hiIn whether
	// it is inclusive.
	loOK, hiOK, loIn, hiIn bool
}

func (r *numRange) contains(q float64) bool {
	if r.loOK && (q < r.lo || q == r.lo && !r.loIn) {
		return false
	}
	if r.hiOK && (q > r.hi || q == r.hi && !r.hiIn) {
		return false
	}
	return true
}

// quantise brings a number to the precision SNS compares at, five digits
// after the decimal point, as a whole number of 10^-5 units. Policy
// numbers (at most 10^9, at most five decimals) come out exact; a
// record's number is rounded half away from zero, so 0.100001 equals 0.1
// as it does in SNS. Order is kept, so comparing quantised numbers
// compares the numbers at that precision.
func quantise(x float64) float64 { return math.Round(x * 1e5) }

// vkind is the JSON type of a value a condition is matched against.
type vkind uint8

const (
	vString vkind = iota
	vNumber
	vBool
	vNull
)

// value is one value of a record's key: a header's value or one of its
// JSON array's elements, or a leaf of the payload. A header's own value
// is a string that may also read as a number (hasNum): headers carry no
// type, so one holding a JSON number matches both string conditions and
// numeric ones, as an SNS Number attribute matches numeric ones.
type value struct {
	kind   vkind
	s      string
	q      float64 // quantised; meaningful when hasNum
	hasNum bool
	b      bool
}

// match reports whether the condition holds for v. exists is decided by
// the leaf, from presence, never here.
func (c *cond) match(v *value) bool {
	switch c.kind {
	case exactString:
		return v.kind == vString && v.s == c.s
	case exactNumber:
		return v.hasNum && v.q == c.q
	case exactBool:
		return v.kind == vBool && v.b == c.b
	case exactNull:
		return v.kind == vNull
	case prefix:
		return v.kind == vString && strings.HasPrefix(v.s, c.s)
	case suffix:
		return v.kind == vString && strings.HasSuffix(v.s, c.s)
	case equalsIgnoreCase:
		return v.kind == vString && strings.EqualFold(v.s, c.s)
	case numeric:
		return v.hasNum && c.rng.contains(v.q)
	case cidr:
		if v.kind != vString {
			return false
		}
		a, err := netip.ParseAddr(v.s)
		return err == nil && c.net.Contains(a.Unmap())
	case anythingBut:
		// Null is the absence of a value to every operator but the
		// exact null.
		if v.kind == vNull {
			return false
		}
		for _, n := range c.not {
			if n.match(v) {
				return false
			}
		}
		return true
	}
	return false
}

// isNumber reports whether s is a JSON number, the grammar a header's
// value must have to be read as a number: no space, no sign but a
// leading minus, no leading zeros, digits on both sides of a point.
func isNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i == len(s) || s[i] < '0' || s[i] > '9' {
			return false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	return i == len(s)
}
