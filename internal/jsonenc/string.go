package jsonenc

import "unicode/utf8"

// AppendString appends s as a JSON string, escaping what JSON requires
// and, as encoding/json does, U+2028 and U+2029 (JavaScript line
// terminators); not <, > and & (no answer here is HTML). Invalid UTF-8
// becomes U+FFFD, as encoding/json writes it. It takes a record's bytes
// as they are: a string(...) copy of every payload was 5% of a batch
// consume's CPU.
func AppendString[T ~string | ~[]byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain(c) {
			i = SkipPlain(s, i+1)
			continue
		}
		if c >= 0x80 {
			r, size := decodeRune(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
				i++
				start = i
				continue
			}
			if r != '\u2028' && r != '\u2029' {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// decodeRune is utf8.DecodeRune for either form of AppendString's input.
func decodeRune[T ~string | ~[]byte](s T) (rune, int) {
	switch v := any(s).(type) {
	case string:
		return utf8.DecodeRuneInString(v)
	case []byte:
		return utf8.DecodeRune(v)
	}
	return utf8.DecodeRuneInString(string(s))
}

// load8 reads s[i:i+8] as a little-endian word (the compiler merges the
// byte loads into one for both string and []byte).
func load8[T ~string | ~[]byte](s T, i int) uint64 {
	_ = s[i+7]
	return uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
		uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
}

// SkipPlain returns the index of the first byte of s at or after i that
// a JSON string cannot hold as it is (a control byte, a quote, a
// backslash) or that is not ASCII, or len(s): a writer copies s[i:j]
// unchanged, and a reader finds s[i:j] holds no escape. It looks at eight
// bytes at a time while none needs a look: the byte loop was 12% of a
// batch consume's server CPU (256-byte text payloads; see
// BenchmarkAppendString).
func SkipPlain[T ~string | ~[]byte](s T, i int) int {
	for i+8 <= len(s) && plain8(load8(s, i)) {
		i += 8
	}
	for i < len(s) && plain(s[i]) {
		i++
	}
	return i
}

// plain reports whether c is written in a JSON string as it is.
func plain(c byte) bool { return c >= 0x20 && c != '"' && c != '\\' && c < 0x80 }

// plain8 reports whether none of the eight bytes of v needs AppendString's
// attention: all are ASCII (below 0x80), none is a control byte (below
// 0x20), a quote or a backslash. The zero-byte tests are the classic
// exact ones: (x - 0x01…) & ^x & 0x80… is non-zero iff some byte of x is
// zero (a borrow only ever spreads above a zero byte), and with 0x20…
// subtracted instead iff some byte is below 0x20 (for bytes below 0x80,
// which the first test has ensured).
func plain8(v uint64) bool {
	const (
		lo   = 0x0101010101010101
		hi   = 0x8080808080808080
		ctl  = 0x20 * lo
		quot = '"' * lo
		bsl  = '\\' * lo
	)
	zero := func(x uint64) uint64 { return (x - lo) &^ x & hi }
	return (v&hi)|((v-ctl)&^v&hi)|zero(v^quot)|zero(v^bsl) == 0
}
