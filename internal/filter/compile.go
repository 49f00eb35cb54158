package filter

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// reserved are the operator names; an "$or" whose branches use one as a
// key is not an OR (SNS's rule), and a condition object names one.
var reserved = map[string]bool{
	"prefix": true, "suffix": true, "anything-but": true, "numeric": true,
	"exists": true, "equals-ignore-case": true, "cidr": true,
}

// Compile reads a filter policy for a scope. It refuses, with an *Error
// naming the place, a policy that is not a JSON object in SNS's shape,
// uses an operator wrongly, or is over one of SNS's limits (MaxBytes,
// MaxKeys, MaxCombinations, MaxNumber, MaxDecimals) or MaxDepth. The
// empty policy {} compiles to a filter that matches everything, as
// setting {} removes a subscription's filter in SNS.
func Compile(policy []byte, scope Scope) (*Filter, error) {
	if scope != Headers && scope != Payload {
		return nil, errAt("filter", "unknown scope %q: want %q or %q", scope, Headers, Payload)
	}
	if len(policy) > MaxBytes {
		return nil, errAt("filter", "%d bytes, more than the %d a policy may have", len(policy), MaxBytes)
	}
	if !utf8.Valid(policy) {
		return nil, errAt("filter", "not valid UTF-8")
	}
	v, err := readJSON(policy)
	if err != nil {
		return nil, err
	}
	if v.kind != '{' {
		return nil, errAt("filter", "want a JSON object, have %s", v.what())
	}
	f := &Filter{scope: scope, combos: 1}
	if len(v.keys) > 0 {
		c := &compiler{scope: scope, names: map[string]bool{}}
		root, combos, err := c.object(v, "filter", 1, nil, true)
		if err != nil {
			return nil, err
		}
		if len(c.names) > MaxKeys {
			what := "attribute names (every key counts in the headers scope)"
			if scope == Payload {
				what = "top-level keys"
			}
			return nil, errAt("filter", "%d %s, more than SNS's %d", len(c.names), what, MaxKeys)
		}
		if combos > MaxCombinations {
			return nil, errAt("filter", "more than SNS's %d combinations of values (each key's count of values, times its depth in the payload scope, multiplied across keys and added across $or branches)", MaxCombinations)
		}
		f.root, f.combos = root, combos
		if scope == Payload {
			f.index(c.leaves)
		}
	}
	f.canon = string(appendObject(nil, f.root))
	return f, nil
}

type compiler struct {
	scope  Scope
	names  map[string]bool // the keys SNS counts against MaxKeys
	leaves []*leaf
}

// object compiles a policy object at depth (1 for the root) under the
// key path prefix. top says its keys are top-level keys: the root's,
// and those of the root's $or branches. It returns the object's
// combination count, capped just above MaxCombinations.
func (c *compiler) object(v *jv, path string, depth int, prefix []string, top bool) (*object, int, error) {
	if v.kind != '{' {
		return nil, 0, errAt(path, "want an object, have %s", v.what())
	}
	if len(v.keys) == 0 {
		return nil, 0, errAt(path, "empty object: name at least one key")
	}
	o := &object{}
	combos := 1
	for i, k := range v.keys {
		val := v.vals[i]
		kp := pathString(path, k)
		if k == "$or" && isOr(val) {
			sum := 0
			for j, b := range val.vals {
				br, n, err := c.object(b, kp+"["+strconv.Itoa(j)+"]", depth, prefix, top)
				if err != nil {
					return nil, 0, err
				}
				o.or = append(o.or, br)
				sum = capped(sum + n)
			}
			combos = capped(combos * sum)
			continue
		}
		if top || c.scope == Headers {
			c.names[k] = true
		}
		path := append(slices.Clip(prefix), k)
		switch val.kind {
		case '[':
			l, err := c.leaf(val, kp, path)
			if err != nil {
				return nil, 0, err
			}
			o.fields = append(o.fields, field{key: k, leaf: l})
			combos = capped(combos * len(l.conds) * depth)
		case '{':
			if c.scope == Headers {
				return nil, 0, errAt(kp, "the headers scope takes no nested object (as SNS's MessageAttributes scope): want an array of conditions")
			}
			if depth >= MaxDepth {
				return nil, 0, errAt(kp, "nested more than %d objects deep", MaxDepth)
			}
			child, n, err := c.object(val, kp, depth+1, path, false)
			if err != nil {
				return nil, 0, err
			}
			o.fields = append(o.fields, field{key: k, child: child})
			combos = capped(combos * n)
		default:
			want := "an array of conditions"
			if c.scope == Payload {
				want += " or an object"
			}
			return nil, 0, errAt(kp, "want %s, have %s", want, val.what())
		}
	}
	slices.SortFunc(o.fields, func(a, b field) int { return strings.Compare(a.key, b.key) })
	return o, combos, nil
}

// capped keeps a combination count from overflowing: anything over the
// cap is refused, so the exact excess does not matter.
func capped(n int) int { return min(n, MaxCombinations+1) }

// isOr is SNS's rule for when "$or" is the OR operator rather than a key
// of that name: its value is an array of at least two objects, none of
// which has an operator's name as a key.
func isOr(v *jv) bool {
	if v.kind != '[' || len(v.vals) < 2 {
		return false
	}
	for _, b := range v.vals {
		if b.kind != '{' {
			return false
		}
		for _, k := range b.keys {
			if reserved[k] {
				return false
			}
		}
	}
	return true
}

func (c *compiler) leaf(v *jv, path string, keys []string) (*leaf, error) {
	if len(v.vals) == 0 {
		return nil, errAt(path, "empty array: name at least one value or condition")
	}
	l := &leaf{path: keys}
	for i, e := range v.vals {
		cd, err := condition(e, path+"["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		l.conds = append(l.conds, cd)
	}
	c.leaves = append(c.leaves, l)
	return l, nil
}

// condition compiles one element of a key's array.
func condition(v *jv, path string) (*cond, error) {
	switch v.kind {
	case 's':
		return &cond{kind: exactString, s: v.s}, nil
	case 'n':
		return exactNum(v.s, path)
	case 'b':
		return &cond{kind: exactBool, b: v.b}, nil
	case '0':
		return &cond{kind: exactNull}, nil
	case '[':
		return nil, errAt(path, "want a value or a condition object, have an array")
	}
	if len(v.keys) != 1 {
		return nil, errAt(path, "a condition object names exactly one operator, this one names %d", len(v.keys))
	}
	op, arg := v.keys[0], v.vals[0]
	opPath := pathString(path, op)
	str := func(k kind) (*cond, error) {
		if arg.kind != 's' {
			return nil, errAt(opPath, "want a string, have %s", arg.what())
		}
		return &cond{kind: k, s: arg.s}, nil
	}
	switch op {
	case "prefix":
		return str(prefix)
	case "suffix":
		return str(suffix)
	case "equals-ignore-case":
		return str(equalsIgnoreCase)
	case "exists":
		if arg.kind != 'b' {
			return nil, errAt(opPath, "want true or false, have %s", arg.what())
		}
		return &cond{kind: exists, b: arg.b}, nil
	case "cidr":
		if arg.kind != 's' {
			return nil, errAt(opPath, "want a string in CIDR notation, have %s", arg.what())
		}
		p, err := netip.ParsePrefix(arg.s)
		if err != nil {
			return nil, errAt(opPath, "not an IP network in CIDR notation (10.0.0.0/24, 2001:db8::/32): %q", arg.s)
		}
		if p != p.Masked() {
			return nil, errAt(opPath, "%s has host bits set: the network is %s", arg.s, p.Masked())
		}
		return &cond{kind: cidr, net: p}, nil
	case "numeric":
		return numericCond(arg, opPath)
	case "anything-but":
		return anythingButCond(arg, opPath)
	}
	return nil, errAt(opPath, "unknown operator %q (want one of prefix, suffix, anything-but, numeric, exists, equals-ignore-case, cidr)", op)
}

func exactNum(lit, path string) (*cond, error) {
	n, err := number(lit, path)
	if err != nil {
		return nil, err
	}
	return &cond{kind: exactNumber, num: n, q: quantise(n)}, nil
}

// number reads a policy's number literal and holds it to SNS's range
// and precision as written: 1.000000 is 1, 1e-6 has six decimals.
func number(lit, path string) (float64, error) {
	f, err := strconv.ParseFloat(lit, 64)
	if err != nil && f != 0 || f < -MaxNumber || f > MaxNumber { // ±Inf on overflow
		return 0, errAt(path, "%s is outside SNS's range of numbers, -1e9 to 1e9", lit)
	}
	mant, exp := lit, 0
	if i := strings.IndexAny(lit, "eE"); i >= 0 {
		mant = lit[:i]
		e, err := strconv.Atoi(lit[i+1:])
		if err != nil {
			e = -1 << 30 // far out: only a zero mantissa survives the checks
		}
		exp = e
	}
	whole, frac, _ := strings.Cut(strings.TrimPrefix(mant, "-"), ".")
	if strings.Trim(whole+frac, "0") == "" {
		return 0, nil
	}
	if f == 0 || len(strings.TrimRight(frac, "0"))-exp > MaxDecimals {
		return 0, errAt(path, "%s has more than SNS's %d digits after the decimal point", lit, MaxDecimals)
	}
	return f, nil
}

var rangeOps = map[string]bool{"=": true, "<": true, "<=": true, ">": true, ">=": true}

// numericCond reads SNS's numeric grammar: one comparison [op, n], or a
// lower bound then an upper bound [">" or ">=", n, "<" or "<=", m] with
// n < m.
func numericCond(arg *jv, path string) (*cond, error) {
	const shape = `want ["op", n] or [">"|">=", n, "<"|"<=", m] with op one of =, <, <=, >, >=`
	if arg.kind != '[' || len(arg.vals) == 0 {
		return nil, errAt(path, "%s, have %s", shape, arg.what())
	}
	if len(arg.vals) != 2 && len(arg.vals) != 4 {
		return nil, errAt(path, "%s, have %d elements", shape, len(arg.vals))
	}
	c := &cond{kind: numeric}
	r := &c.rng
	for i := 0; i < len(arg.vals); i += 2 {
		ov, nv := arg.vals[i], arg.vals[i+1]
		opPath, nPath := fmt.Sprintf("%s[%d]", path, i), fmt.Sprintf("%s[%d]", path, i+1)
		if ov.kind != 's' || !rangeOps[ov.s] {
			return nil, errAt(opPath, "want one of =, <, <=, >, >=, have %s", describe(ov))
		}
		if nv.kind != 'n' {
			return nil, errAt(nPath, "want a number after %q, have %s", ov.s, nv.what())
		}
		n, err := number(nv.s, nPath)
		if err != nil {
			return nil, err
		}
		op, q := ov.s, quantise(n)
		if i == 2 {
			if r.ops[0] != ">" && r.ops[0] != ">=" {
				return nil, errAt(opPath, "only a lower bound (> or >=) may be followed by an upper bound")
			}
			if op != "<" && op != "<=" {
				return nil, errAt(opPath, "want an upper bound, < or <=, have %q", op)
			}
			if q <= r.lo {
				return nil, errAt(nPath, "the upper bound %s is not above the lower bound %s", nv.s, arg.vals[1].s)
			}
		}
		r.ops[i/2], r.nums[i/2], r.n = op, n, i/2+1
		switch op {
		case "=":
			r.lo, r.hi, r.loOK, r.hiOK, r.loIn, r.hiIn = q, q, true, true, true, true
		case ">", ">=":
			r.lo, r.loOK, r.loIn = q, true, op == ">="
		case "<", "<=":
			r.hi, r.hiOK, r.hiIn = q, true, op == "<="
		}
	}
	return c, nil
}

func describe(v *jv) string {
	if v.kind == 's' {
		return strconv.Quote(v.s)
	}
	return v.what()
}

// anythingButCond reads anything-but's forms: a string or number, a
// non-empty array of them, or {"prefix": s} or {"suffix": s}.
func anythingButCond(arg *jv, path string) (*cond, error) {
	c := &cond{kind: anythingBut}
	switch arg.kind {
	case 's', 'n':
		n, err := butValue(arg, path)
		if err != nil {
			return nil, err
		}
		c.not = []*cond{n}
	case '[':
		if len(arg.vals) == 0 {
			return nil, errAt(path, "empty array: name at least one value")
		}
		for i, e := range arg.vals {
			n, err := butValue(e, path+"["+strconv.Itoa(i)+"]")
			if err != nil {
				return nil, err
			}
			c.not = append(c.not, n)
		}
	case '{':
		if len(arg.keys) != 1 || arg.keys[0] != "prefix" && arg.keys[0] != "suffix" {
			return nil, errAt(path, `want {"prefix": "..."} or {"suffix": "..."} in an anything-but object`)
		}
		op, s := arg.keys[0], arg.vals[0]
		if s.kind != 's' {
			return nil, errAt(pathString(path, op), "want a string, have %s", s.what())
		}
		k, form := prefix, butPrefix
		if op == "suffix" {
			k, form = suffix, butSuffix
		}
		c.not, c.notForm = []*cond{{kind: k, s: s.s}}, form
	default:
		return nil, errAt(path, "want a string, a number, an array of them, or a prefix or suffix object, have %s", arg.what())
	}
	return c, nil
}

func butValue(v *jv, path string) (*cond, error) {
	switch v.kind {
	case 's':
		return &cond{kind: exactString, s: v.s}, nil
	case 'n':
		return exactNum(v.s, path)
	}
	return nil, errAt(path, "want a string or a number, have %s", v.what())
}

// index builds the payload scope's trie of leaf paths and numbers the
// conditions Match records while it reads a payload.
func (f *Filter) index(leaves []*leaf) {
	f.trie = &trieNode{slot: -1}
	for _, l := range leaves {
		n := f.trie
		for _, k := range l.path {
			if n.children == nil {
				n.children = map[string]*trieNode{}
			}
			c := n.children[k]
			if c == nil {
				c = &trieNode{slot: -1}
				n.children[k] = c
			}
			n = c
		}
		if n.slot < 0 {
			n.slot = f.nslot
			f.nslot++
			f.slotConds = append(f.slotConds, nil)
		}
		l.slot = n.slot
		for _, cd := range l.conds {
			if cd.kind == exists {
				continue
			}
			cd.bit = f.ncond
			f.ncond++
			f.slotConds[n.slot] = append(f.slotConds[n.slot], cd)
		}
	}
}
