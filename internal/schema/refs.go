package schema

import (
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// bareKeywords may sit next to a $ref without constraining anything, so a
// node made only of them is the referenced schema under another name.
var bareKeywords = []string{
	"$comment", "$defs", "$ref", "default", "definitions", "deprecated",
	"description", "examples", "readOnly", "title", "writeOnly",
}

func bareRef(m map[string]any) bool {
	for k := range m {
		if !slices.Contains(bareKeywords, k) {
			return false
		}
	}
	return true
}

// rebase returns the resource local refs inside m resolve against: m itself
// when it declares a non-fragment $id ("id" in draft 4), else base. A
// fragment-only id ("#foo") names an anchor, not a new resource.
func (c *comparer) rebase(base, m map[string]any) map[string]any {
	id, ok := m["$id"].(string)
	if !ok && c.draft4 {
		id, ok = m["id"].(string)
	}
	if ok && id != "" && !strings.HasPrefix(id, "#") {
		return m
	}
	return base
}

// target resolves the $ref of m, reporting a ref it cannot follow as an
// incompatibility: conservative, since the target may have changed.
func (c *comparer) target(path string, base, m map[string]any) (any, error) {
	ref, _ := m["$ref"].(string)
	t, err := resolve(base, ref)
	if err != nil {
		return nil, incompatible("%s: cannot compare $ref %q: %v", where(path), ref, err)
	}
	return t, nil
}

var errNotLocal = errors.New(`only local JSON-pointer references ("#/...") are followed`)

// resolve follows a local JSON-pointer ref within base. Compile has already
// proved the document's refs resolve, so failures here mean a ref form the
// walk does not follow (anchor, relative or absolute URL).
func resolve(base map[string]any, ref string) (any, error) {
	if !strings.HasPrefix(ref, "#") {
		return nil, errNotLocal
	}
	frag, err := url.PathUnescape(ref[1:])
	if err != nil {
		return nil, err
	}
	if frag == "" {
		return base, nil
	}
	if !strings.HasPrefix(frag, "/") {
		return nil, errNotLocal
	}
	var cur any = base
	for _, tok := range strings.Split(frag[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[tok]
			if !ok {
				return nil, errors.New("target not found")
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(v) {
				return nil, errors.New("target not found")
			}
			cur = v[i]
		default:
			return nil, errors.New("target not found")
		}
	}
	return cur, nil
}

// same reports whether two values are literally equal and every local $ref
// in them points at literally equal targets: a frozen keyword whose text
// is unchanged still changes meaning if a $defs entry it uses changed.
func (c *comparer) same(oldBase, newBase map[string]any, a, b any) (bool, error) {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok || len(av) != len(bv) {
			return false, nil
		}
		if len(av) == 0 {
			return true, nil
		}
		key := [2]uintptr{reflect.ValueOf(av).Pointer(), reflect.ValueOf(bv).Pointer()}
		if c.sameSeen[key] {
			return true, nil
		}
		c.sameSeen[key] = true
		oldBase, newBase = c.rebase(oldBase, av), c.rebase(newBase, bv)
		keys := make([]string, 0, len(av))
		for k := range av {
			keys = append(keys, k)
		}
		slices.Sort(keys) // which error is reported must not depend on map order
		for _, k := range keys {
			y, ok := bv[k]
			if !ok {
				return false, nil
			}
			if eq, err := c.same(oldBase, newBase, av[k], y); err != nil || !eq {
				return eq, err
			}
		}
		ref, isRef := av["$ref"].(string)
		if !isRef {
			return true, nil
		}
		ot, err := resolve(oldBase, ref)
		if err != nil {
			return false, fmt.Errorf("cannot compare $ref %q: %w", ref, err)
		}
		nt, err := resolve(newBase, ref)
		if err != nil {
			return false, fmt.Errorf("cannot compare $ref %q: %w", ref, err)
		}
		return c.same(oldBase, newBase, ot, nt)
	case []any:
		bv, ok := b.([]any)
		if !ok || len(av) != len(bv) {
			return false, nil
		}
		for i := range av {
			if eq, err := c.same(oldBase, newBase, av[i], bv[i]); err != nil || !eq {
				return eq, err
			}
		}
		return true, nil
	default:
		// Scalars: strings, json.Number (compared as written), bools, null.
		return reflect.DeepEqual(a, b), nil
	}
}
