package jsonenc

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// plain8 is exact: for every byte value at every place of a word of
// otherwise plain bytes, and for random words, it agrees with asking each
// byte.
func TestPlain8MatchesBytewise(t *testing.T) {
	plainByte := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	bytewise := func(v uint64) bool {
		for k := 0; k < 8; k++ {
			if !plainByte(byte(v >> (8 * k))) {
				return false
			}
		}
		return true
	}
	check := func(v uint64) {
		if got, want := plain8(v), bytewise(v); got != want {
			t.Fatalf("plain8(%#016x) = %v, byte by byte %v", v, got, want)
		}
	}
	for _, fill := range []byte{'x', ' ', '~', 0x7f, '!', '#', '[', ']'} {
		base := uint64(fill) * 0x0101010101010101
		for pos := 0; pos < 8; pos++ {
			for c := 0; c < 256; c++ {
				check(base&^(0xff<<(8*pos)) | uint64(c)<<(8*pos))
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		v := r.Uint64()
		check(v)
		check(v &^ 0x8080808080808080) // all ASCII: only the control, quote and backslash tests decide
	}
}

// SkipPlain stops at the first byte that is not plain, from every start,
// with the special byte at every place relative to the eight-byte steps.
func TestSkipPlainStopsAtTheFirstSpecialByte(t *testing.T) {
	for _, special := range []byte{'"', '\\', 0, 0x1f, 0x80, 0xff} {
		for n := 0; n < 24; n++ {
			s := []byte(strings.Repeat("a", 24))
			want := len(s)
			if n < len(s) {
				s[n], want = special, n
			}
			for i := 0; i <= n && i <= len(s); i++ {
				if got := SkipPlain(s, i); got != want {
					t.Fatalf("SkipPlain(%q, %d) = %d, want %d", s, i, got, want)
				}
				if got := SkipPlain(string(s), i); got != want {
					t.Fatalf("SkipPlain(string %q, %d) = %d, want %d", s, i, got, want)
				}
			}
		}
	}
}

// AppendString writes what encoding/json writes (HTML escaping off) for
// every string whose special bytes sit at every place relative to the
// eight-byte steps.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	for _, special := range []string{"\"", "\\", "\n", "\x00", "\x1f", "\x7f", "é", "\xff", "\xe2\x80", "\u2028", "\u2029", "😀"} {
		for pre := 0; pre < 20; pre++ {
			for post := 0; post < 10; post++ {
				s := strings.Repeat("a", pre) + special + strings.Repeat("b", post)
				var want bytes.Buffer
				enc := json.NewEncoder(&want)
				enc.SetEscapeHTML(false)
				enc.Encode(s)
				if got := AppendString(nil, s); string(got) != strings.TrimSuffix(want.String(), "\n") {
					t.Fatalf("AppendString(%q) = %s, encoding/json %s", s, got, want.String())
				}
				if got := AppendString(nil, []byte(s)); string(got) != strings.TrimSuffix(want.String(), "\n") {
					t.Fatalf("AppendString([]byte(%q)) = %s, encoding/json %s", s, got, want.String())
				}
			}
		}
	}
}

// BenchmarkAppendString is one 256-byte text payload as narad bench sends.
func BenchmarkAppendString(b *testing.B) {
	p := bytes.Repeat([]byte("x"), 256)
	buf := make([]byte, 0, 512)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendString(buf[:0], p)
	}
}
