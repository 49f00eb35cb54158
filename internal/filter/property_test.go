package filter

import (
	"encoding/json"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Small alphabets, so that generated keys and values collide with the
// records' often enough to test both sides of each rule. Values include
// text that is also a number, and an IP address.
var (
	propKeys   = []string{"a", "b", "c", "$or", "x.y"}
	propValues = []string{"", "a", "ab", "A", "b", "5", "5.0", "-1", "1e3", "10.1.2.3", "é"}
	propNums   = []float64{-1, 0, 5, 2.5, 1000, 0.00001}
)

// genHeaders draws a non-empty record of headers none of whose values is
// a JSON array (arrays have their own any-element rule).
func genHeaders(t *rapid.T) map[string]string {
	hs := rapid.MapOfN(rapid.SampledFrom(propKeys), rapid.SampledFrom(propValues), 1, len(propKeys)).Draw(t, "headers")
	return hs
}

// genScalar draws a policy value: a string or a number.
func genScalar(t *rapid.T, label string) any {
	if rapid.Bool().Draw(t, label+"IsNumber") {
		return rapid.SampledFrom(propNums).Draw(t, label)
	}
	return rapid.SampledFrom(propValues).Draw(t, label)
}

// genCond draws any condition the headers scope takes.
func genCond(t *rapid.T) any {
	s := func() string { return rapid.SampledFrom(propValues).Draw(t, "s") }
	switch rapid.IntRange(0, 10).Draw(t, "op") {
	case 0:
		return map[string]any{"prefix": s()}
	case 1:
		return map[string]any{"suffix": s()}
	case 2:
		return map[string]any{"equals-ignore-case": s()}
	case 3:
		return map[string]any{"exists": rapid.Bool().Draw(t, "exists")}
	case 4:
		return map[string]any{"anything-but": rapid.SliceOfN(rapid.Custom(func(t *rapid.T) any { return genScalar(t, "but") }), 1, 3).Draw(t, "buts")}
	case 5:
		return map[string]any{"anything-but": map[string]any{rapid.SampledFrom([]string{"prefix", "suffix"}).Draw(t, "affix"): s()}}
	case 6:
		lo := rapid.SampledFrom(propNums).Draw(t, "lo")
		return map[string]any{"numeric": []any{rapid.SampledFrom([]string{">", ">="}).Draw(t, "loOp"), lo, rapid.SampledFrom([]string{"<", "<="}).Draw(t, "hiOp"), lo + 1}}
	case 7:
		return map[string]any{"numeric": []any{rapid.SampledFrom([]string{"=", "<", "<=", ">", ">="}).Draw(t, "numOp"), rapid.SampledFrom(propNums).Draw(t, "n")}}
	case 8:
		return map[string]any{"cidr": rapid.SampledFrom([]string{"10.0.0.0/8", "10.1.2.0/24", "::/0"}).Draw(t, "net")}
	}
	return genScalar(t, "exact")
}

// genPolicy draws a one- or two-key policy, sometimes under an $or.
func genPolicy(t *rapid.T) map[string]any {
	p := map[string]any{}
	for range rapid.IntRange(1, 2).Draw(t, "keys") {
		p[rapid.SampledFrom(propKeys).Draw(t, "key")] = rapid.SliceOfN(rapid.Custom(genCond), 1, 3).Draw(t, "conds")
	}
	return p
}

func compileAny(t *rapid.T, p any, scope Scope) *Filter {
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Compile(b, scope)
	if err != nil {
		t.Fatalf("Compile(%s): %v", b, err)
	}
	return f
}

// TestPropertyExact: {k: [v]} matches exactly the records whose header
// k is v.
func TestPropertyExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k, v := rapid.SampledFrom(propKeys).Draw(t, "k"), rapid.SampledFrom(propValues).Draw(t, "v")
		hs := genHeaders(t)
		if rapid.Bool().Draw(t, "near") {
			// A value close to v: itself, another case, one longer.
			hs[k] = rapid.SampledFrom([]string{v, strings.ToUpper(v), v + "b"}).Draw(t, "nearValue")
		}
		f := compileAny(t, map[string]any{k: []any{v}}, Headers)
		got, ok := hs[k]
		if want := ok && got == v; f.Match(hs, nil) != want {
			t.Fatalf("%s on %v: got %v", f, hs, !want)
		}
	})
}

// TestPropertyAnythingBut: on a present key, anything-but of a list is
// the complement of the exact list, strings and numbers alike.
func TestPropertyAnythingBut(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.SampledFrom(propKeys).Draw(t, "k")
		list := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) any { return genScalar(t, "v") }), 1, 4).Draw(t, "list")
		hs := genHeaders(t)
		hs[k] = rapid.SampledFrom(propValues).Draw(t, "present")
		exact := compileAny(t, map[string]any{k: list}, Headers)
		but := compileAny(t, map[string]any{k: []any{map[string]any{"anything-but": list}}}, Headers)
		if exact.Match(hs, nil) == but.Match(hs, nil) {
			t.Fatalf("%s and %s agree on %v", exact, but, hs)
		}
	})
}

// TestPropertyOr: {"$or": [A, B]} matches what A or B matches.
func TestPropertyOr(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a, b := genPolicy(t), genPolicy(t)
		hs := genHeaders(t)
		fa, fb := compileAny(t, a, Headers), compileAny(t, b, Headers)
		or := compileAny(t, map[string]any{"$or": []any{a, b}}, Headers)
		if want := fa.Match(hs, nil) || fb.Match(hs, nil); or.Match(hs, nil) != want {
			t.Fatalf("%s on %v: got %v, want %v (%s, %s)", or, hs, !want, want, fa, fb)
		}
	})
}

// TestPropertyAnd: keys are ANDed: a two-key policy matches what both
// of its one-key halves match.
func TestPropertyAnd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ka := rapid.SampledFrom(propKeys).Draw(t, "ka")
		kb := rapid.SampledFrom(propKeys).Filter(func(k string) bool { return k != ka }).Draw(t, "kb")
		ca := rapid.SliceOfN(rapid.Custom(genCond), 1, 3).Draw(t, "ca")
		cb := rapid.SliceOfN(rapid.Custom(genCond), 1, 3).Draw(t, "cb")
		hs := genHeaders(t)
		both := compileAny(t, map[string]any{ka: ca, kb: cb}, Headers)
		fa, fb := compileAny(t, map[string]any{ka: ca}, Headers), compileAny(t, map[string]any{kb: cb}, Headers)
		if want := fa.Match(hs, nil) && fb.Match(hs, nil); both.Match(hs, nil) != want {
			t.Fatalf("%s on %v: got %v, want %v", both, hs, !want, want)
		}
	})
}

// TestPropertyScopesAgree: a flat policy means the same in both scopes
// on a record whose payload holds its headers as JSON strings, except
// where a header's text is also a number, which only a header is.
func TestPropertyScopesAgree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genPolicy(t)
		hs := genHeaders(t)
		for _, v := range hs {
			if isNumber(v) {
				t.Skip("a header holding a number matches numerically; its JSON string does not")
			}
		}
		payload, err := json.Marshal(hs)
		if err != nil {
			t.Fatal(err)
		}
		fh, fp := compileAny(t, p, Headers), compileAny(t, p, Payload)
		if fh.Match(hs, nil) != fp.Match(nil, payload) {
			t.Fatalf("%s: headers %v says %v, payload %s says %v", fh, hs, fh.Match(hs, nil), payload, !fh.Match(hs, nil))
		}
	})
}

// TestPropertyCanonical: String compiles again to the same String, with
// the same matches.
func TestPropertyCanonical(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := genPolicy(t)
		if rapid.Bool().Draw(t, "or") {
			p = map[string]any{"$or": []any{p, genPolicy(t)}, "c": []any{genCond(t)}}
		}
		scope := rapid.SampledFrom([]Scope{Headers, Payload}).Draw(t, "scope")
		f := compileAny(t, p, scope)
		g, err := Compile([]byte(f.String()), scope)
		if err != nil || g.String() != f.String() {
			t.Fatalf("%s recompiled: %v, %v", f, g, err)
		}
		hs := genHeaders(t)
		payload, _ := json.Marshal(hs)
		if f.Match(hs, payload) != g.Match(hs, payload) {
			t.Fatalf("%s and its recompilation disagree on %v", f, hs)
		}
	})
}
