package httpapi

import (
	"encoding/base64"
	"reflect"
	"strings"
	"testing"
)

// FuzzSinceToken feeds page_token values to the decoder a client reaches:
// it never panics, refuses with the 400 naming page_token, and what it
// accepts encodes back to a token that decodes to the same thing.
func FuzzSinceToken(f *testing.F) {
	raw := func(b ...byte) string { return base64.RawURLEncoding.EncodeToString(b) }
	for _, s := range []string{
		sinceToken{all: true, incarnation: 41, sinceMs: 1_796_320_800_000, parts: []tokenPart{{0, 1201}, {1, 1187}, {2, 0}}}.encode(),
		sinceToken{incarnation: 0, sinceMs: 0, parts: []tokenPart{{7, 1 << 40}}}.encode(),
		"", "!!!", "AQ", "AQEA", raw(1, 0, 0, 0, 1, 0, 0), raw(2, 0, 0, 0, 1, 0, 0), raw(1, 2, 0, 0, 1, 0, 0),
		raw(1, 1, 0, 0, 2, 1, 0, 0, 0), raw(1, 0, 0, 0, 1, 0, 0, 9), raw(1, 0, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 1),
		strings.Repeat("A", 100_000),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := decodeSinceToken(s)
		if err != nil {
			clientErr(t, "page_token", err)
			return
		}
		if len(tok.parts) == 0 || (!tok.all && len(tok.parts) != 1) {
			t.Fatalf("%q accepted as %+v", s, tok)
		}
		for i, p := range tok.parts {
			if tok.all && p.partition != i {
				t.Fatalf("%q: every partition, but entry %d is partition %d", s, i, p.partition)
			}
		}
		back, err := decodeSinceToken(tok.encode())
		if err != nil || !reflect.DeepEqual(back, tok) {
			t.Fatalf("%q: %+v encodes to %q, which decodes to %+v, %v", s, tok, tok.encode(), back, err)
		}
	})
}
