package journal

import (
	"bytes"
	"errors"
	"testing"
)

// An entry reads back as it was written, and a torn one is told apart.
func TestEntryRoundTrip(t *testing.T) {
	buf := appendWrite(nil, "topics/a/p00000/seg", 4096, []byte("frames"))
	buf = appendForget(buf, "topics/a/p00000")
	e, n, err := decode(buf)
	if err != nil || e.kind != kindWrite || e.path != "topics/a/p00000/seg" || e.pos != 4096 || string(e.data) != "frames" {
		t.Fatalf("write read back as %+v (%v)", e, err)
	}
	f, m, err := decode(buf[n:])
	if err != nil || f.kind != kindForget || f.path != "topics/a/p00000" || n+m != len(buf) {
		t.Fatalf("forget read back as %+v (%v)", f, err)
	}
	for cut := range n {
		if _, _, err := decode(buf[:cut]); !errors.Is(err, errTorn) {
			t.Fatalf("an entry cut at %d of %d: %v, want torn", cut, n, err)
		}
	}
	flipped := bytes.Clone(buf)
	flipped[n-1] ^= 1
	if _, _, err := decode(flipped); !errors.Is(err, errTorn) {
		t.Fatalf("an entry with a flipped bit: %v, want torn", err)
	}
}

// decode never panics, and what it reads encodes back to the same bytes.
func FuzzDecode(f *testing.F) {
	f.Add(appendWrite(nil, "topics/a/p00000/seg", 7, []byte("x")))
	f.Add(appendForget(nil, "topics/a/p00000"))
	f.Add(make([]byte, 16))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, n, err := decode(b)
		if err != nil {
			return
		}
		var again []byte
		if e.kind == kindWrite {
			again = appendWrite(nil, e.path, e.pos, e.data)
		} else {
			again = appendForget(nil, e.path)
		}
		if !bytes.Equal(again, b[:n]) {
			t.Fatalf("decoded %+v from %x, which encodes as %x", e, b[:n], again)
		}
	})
}
