package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// draft2020 is what a document without "$schema" is compiled as, so an
// explicit 2020-12 URL and no URL name the same draft.
const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// frozenKeywords may hold anything, including required properties, but
// their additive evolutions are not understood here, so they must not
// change at all (see doc.go).
var frozenKeywords = []string{
	"$dynamicRef", "$recursiveRef", "additionalItems", "anyOf", "contains",
	"dependencies", "dependentRequired", "dependentSchemas", "else", "if",
	"not", "oneOf", "patternProperties", "propertyNames", "then",
	"unevaluatedItems", "unevaluatedProperties",
}

// Compatible returns nil if newRaw is an additive evolution of oldRaw, else
// an error wrapping ErrIncompatible that names the first incompatibility.
// Both documents must compile; if one does not, the error wraps
// ErrInvalidSchema instead.
func Compatible(oldRaw, newRaw []byte) error {
	_, oldDoc, err := compile(oldRaw)
	if err != nil {
		return errorf(ErrInvalidSchema, "old schema: %v", err)
	}
	_, newDoc, err := compile(newRaw)
	if err != nil {
		return errorf(ErrInvalidSchema, "new schema: %v", err)
	}
	// Equal documents pass even where the walk would refuse to look (an
	// anchor $ref, say): nothing changed, so nothing can break.
	if reflect.DeepEqual(oldDoc, newDoc) {
		return nil
	}
	if o, n := draftOf(oldDoc), draftOf(newDoc); o != n {
		return errorf(ErrIncompatible, "$schema changed from %q to %q", o, n)
	}
	c := &comparer{
		draft4:   strings.Contains(draftOf(oldDoc), "draft-04"),
		seen:     make(map[[2]uintptr]bool),
		sameSeen: make(map[[2]uintptr]bool),
	}
	oldBase, _ := oldDoc.(map[string]any)
	newBase, _ := newDoc.(map[string]any)
	return c.node("", oldBase, newBase, oldDoc, newDoc)
}

// ChildCompatible checks a fan-out child about to inherit its parent's
// schema: the parent's schema must be an additive evolution of the child's
// own, since the child's consumers will now receive bodies valid under the
// parent's.
func ChildCompatible(parentRaw, childRaw []byte) error {
	// Compiled here first so an invalid document is named as child or
	// parent rather than as Compatible's "old" or "new".
	if _, err := Compile(childRaw); err != nil {
		return fmt.Errorf("child schema: %w", err)
	}
	if _, err := Compile(parentRaw); err != nil {
		return fmt.Errorf("parent schema: %w", err)
	}
	if err := Compatible(childRaw, parentRaw); err != nil {
		return fmt.Errorf("parent schema is not an additive evolution of the child's: %w", err)
	}
	return nil
}

func draftOf(doc any) string {
	m, _ := doc.(map[string]any)
	s, ok := m["$schema"].(string)
	if !ok || s == "" {
		return draft2020
	}
	return strings.TrimSuffix(s, "#")
}

func incompatible(format string, args ...any) error {
	return errorf(ErrIncompatible, format, args...)
}

// comparer walks an old and a new schema in step. seen holds node pairs
// already compared (or being compared): recursive schemas reach the same
// pair again through $ref, and shared $defs would otherwise be walked once
// per use.
type comparer struct {
	draft4   bool
	seen     map[[2]uintptr]bool
	sameSeen map[[2]uintptr]bool // the same, for literal comparison
}

// node compares one schema position. path is the instance path for
// messages; oldBase and newBase are the resources local $refs resolve in.
func (c *comparer) node(path string, oldBase, newBase map[string]any, o, n any) error {
	if o == false {
		return nil
	}
	if n == false {
		return incompatible("%s: now rejects every value (false schema)", where(path))
	}
	om, nm := asSchema(o), asSchema(n)
	if len(om) == 0 && len(nm) == 0 {
		// Both accept anything. Stopping here also ends the descent into
		// absent keywords, which read as true and would recurse forever.
		return nil
	}
	if len(om) > 0 && len(nm) > 0 {
		key := [2]uintptr{reflect.ValueOf(om).Pointer(), reflect.ValueOf(nm).Pointer()}
		if c.seen[key] {
			return nil
		}
		c.seen[key] = true
	}
	oldBase, newBase = c.rebase(oldBase, om), c.rebase(newBase, nm)

	// A bare $ref on one side only is a refactoring (inlined, or moved to
	// $defs): compare what it points at instead of the ref itself.
	_, oRef := om["$ref"]
	_, nRef := nm["$ref"]
	if oRef != nRef {
		if oRef && bareRef(om) {
			t, err := c.target(path, oldBase, om)
			if err != nil {
				return err
			}
			return c.node(path, oldBase, newBase, t, n)
		}
		if nRef && bareRef(nm) {
			t, err := c.target(path, newBase, nm)
			if err != nil {
				return err
			}
			return c.node(path, oldBase, newBase, o, t)
		}
		if oRef {
			return incompatible("%s: $ref removed", where(path))
		}
		return incompatible("%s: $ref added", where(path))
	}

	if err := compareType(path, om["type"], nm["type"]); err != nil {
		return err
	}
	if oRef {
		ot, err := c.target(path, oldBase, om)
		if err != nil {
			return err
		}
		nt, err := c.target(path, newBase, nm)
		if err != nil {
			return err
		}
		if err := c.node(path, oldBase, newBase, ot, nt); err != nil {
			return err
		}
	}
	if err := c.object(path, oldBase, newBase, om, nm); err != nil {
		return err
	}
	if err := c.array(path, oldBase, newBase, om, nm); err != nil {
		return err
	}
	if err := c.list(path, "allOf", false, oldBase, newBase, om["allOf"], nm["allOf"]); err != nil {
		return err
	}
	for _, kw := range frozenKeywords {
		ov, oHas := om[kw]
		nv, nHas := nm[kw]
		if !oHas && !nHas {
			continue
		}
		same, err := c.same(oldBase, newBase, ov, nv)
		if err != nil {
			return incompatible("%s: %s: %v", where(path), kw, err)
		}
		if !same {
			return incompatible("%s: %q changed (only type, properties, required, additionalProperties, items and allOf may evolve)", where(path), kw)
		}
	}
	return nil
}

// object applies the property rules: nothing removed, required unchanged,
// then each surviving property and additionalProperties recursively.
func (c *comparer) object(path string, oldBase, newBase, om, nm map[string]any) error {
	op, _ := om["properties"].(map[string]any)
	np, _ := nm["properties"].(map[string]any)
	names := make([]string, 0, len(op))
	for name := range op {
		names = append(names, name)
	}
	slices.Sort(names) // the first incompatibility must not depend on map order
	for _, name := range names {
		if _, ok := np[name]; !ok {
			return incompatible("property %q removed", join(path, name))
		}
	}
	oreq, nreq := stringList(om["required"]), stringList(nm["required"])
	for _, r := range oreq {
		if !slices.Contains(nreq, r) {
			return incompatible("required %q dropped", join(path, r))
		}
	}
	for _, r := range nreq {
		if !slices.Contains(oreq, r) {
			return incompatible("%q newly required", join(path, r))
		}
	}
	for _, name := range names {
		if err := c.node(join(path, name), oldBase, newBase, op[name], np[name]); err != nil {
			return err
		}
	}
	return c.node(join(path, "*"), oldBase, newBase, orTrue(om, "additionalProperties"), orTrue(nm, "additionalProperties"))
}

// array compares items (single-schema or tuple form) and prefixItems.
func (c *comparer) array(path string, oldBase, newBase, om, nm map[string]any) error {
	oi, oTuple := om["items"].([]any)
	ni, nTuple := nm["items"].([]any)
	switch {
	case oTuple && nTuple:
		if err := c.list(path, "items", true, oldBase, newBase, oi, ni); err != nil {
			return err
		}
	case oTuple || nTuple:
		return incompatible("%s: items changed between tuple and single-schema form", where(path))
	default:
		if err := c.node(path+"[]", oldBase, newBase, orTrue(om, "items"), orTrue(nm, "items")); err != nil {
			return err
		}
	}
	return c.list(path, "prefixItems", true, oldBase, newBase, om["prefixItems"], nm["prefixItems"])
}

// list compares schema arrays position by position. Adding or removing an
// entry changes what every later position means, so lengths must match.
// Tuple entries describe array elements and get an index in the path;
// allOf branches describe the value itself and keep the path.
func (c *comparer) list(path, kw string, indexed bool, oldBase, newBase map[string]any, o, n any) error {
	ol, _ := o.([]any)
	nl, _ := n.([]any)
	if len(ol) != len(nl) {
		return incompatible("%s: %s changed from %d to %d entries", where(path), kw, len(ol), len(nl))
	}
	for i := range ol {
		p := path
		if indexed {
			p = fmt.Sprintf("%s[%d]", path, i)
		}
		if err := c.node(p, oldBase, newBase, ol[i], nl[i]); err != nil {
			return err
		}
	}
	return nil
}

// compareType accepts equal or widened type sets; see doc.go.
func compareType(path string, o, n any) error {
	if o == nil && n == nil {
		return nil
	}
	if o != nil && n != nil {
		ns := typeNames(n)
		widened := true
		for _, t := range typeNames(o) {
			if !slices.Contains(ns, t) {
				widened = false
				break
			}
		}
		if widened {
			return nil
		}
	}
	return incompatible("%s: type changed from %s to %s", where(path), showType(o), showType(n))
}

func typeNames(v any) []string {
	if s, ok := v.(string); ok {
		return []string{s}
	}
	return stringList(v)
}

func showType(v any) string {
	if v == nil {
		return "(unspecified)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func stringList(v any) []string {
	l, _ := v.([]any)
	out := make([]string, 0, len(l))
	for _, e := range l {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// asSchema reads a schema value; true and an absent keyword accept
// anything, which is what an empty object means.
func asSchema(v any) map[string]any {
	if m, ok := v.(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// orTrue reads a schema-valued keyword whose absence means true.
func orTrue(m map[string]any, kw string) any {
	if v, ok := m[kw]; ok {
		return v
	}
	return true
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func where(path string) string {
	if path == "" {
		return "root schema"
	}
	return fmt.Sprintf("property %q", path)
}
