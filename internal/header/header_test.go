package header

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCheckSortsAndRefuses(t *testing.T) {
	hs := []Header{{"b", "2"}, {"a", "1"}}
	if err := Check(hs, Client); err != nil {
		t.Fatal(err)
	}
	if hs[0].Name != "a" || hs[1].Name != "b" {
		t.Fatalf("not sorted: %v", hs)
	}
	many := make([]Header, MaxCount+1)
	for i := range many {
		many[i] = Header{Name: "h" + strings.Repeat("x", i), Value: "v"}
	}
	big := []Header{{"a", strings.Repeat("v", MaxValue)}, {"b", strings.Repeat("v", MaxValue)},
		{"c", strings.Repeat("v", MaxValue)}, {"d", strings.Repeat("v", MaxValue)}}
	for _, c := range []struct {
		name string
		hs   []Header
		src  Source
		want string // a part of the message: the header it names
	}{
		{"empty name", []Header{{"", "v"}}, Client, "empty name"},
		{"upper case", []Header{{"Abc", "v"}}, Client, `"Abc"`},
		{"space", []Header{{"a b", "v"}}, Client, `"a b"`},
		{"long name", []Header{{strings.Repeat("n", MaxName+1), "v"}}, Client, "name of 129 bytes"},
		{"long value", []Header{{"big", strings.Repeat("v", MaxValue+1)}}, Client, `"big"`},
		{"bad utf8", []Header{{"bin", "\xff"}}, Client, `"bin"`},
		{"reserved", []Header{{"narad-x", "v"}}, Client, `"narad-x"`},
		{"twice", []Header{{"a", "1"}, {"a", "2"}}, Client, `"a": given twice`},
		{"too many", many, Client, "65 headers"},
		{"too big", big, Client, `"d"`},
	} {
		err := Check(c.hs, c.src)
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %s", c.name, err, c.want)
		}
	}
	if err := Check([]Header{{"narad-dlq-topic", "t"}}, Reserved); err != nil {
		t.Fatalf("the broker's own header refused: %v", err)
	}
	if err := Check(append(many[:MaxCount:MaxCount], Header{"narad-dlq-reason", "expired"}), Reserved); err != nil {
		t.Fatalf("the broker's allowance: %v", err)
	}
	if err := Check(big[:3], Client); err != nil {
		t.Fatalf("12 KiB refused: %v", err)
	}
}

func TestRoundTrip(t *testing.T) {
	hs := []Header{{"a", ""}, {"content-type", "application/json"}, {"ü", "x"}}
	b := Append([]byte("prefix"), hs)[len("prefix"):]
	if len(b) != EncodedLen(hs) {
		t.Fatalf("EncodedLen %d, encoded %d", EncodedLen(hs), len(b))
	}
	got, n, err := Decode(append(b, "tail"...))
	if err != nil || n != len(b) || len(got) != len(hs) {
		t.Fatalf("decode: %v %d %v", got, n, err)
	}
	for i := range hs {
		if got[i] != hs[i] {
			t.Fatalf("header %d: %v, want %v", i, got[i], hs[i])
		}
	}
}

func TestDecodeRefusesOverCaps(t *testing.T) {
	for name, b := range map[string][]byte{
		"zero count":       {0},
		"count over room":  {5, 1, 'a', 0},
		"count over cap":   Append(nil, make([]Header, StoredCount+1)),
		"name overruns":    {1, 9, 'a', 0},
		"value overruns":   {1, 1, 'a', 9},
		"empty name":       {1, 0, 0, 0},
		"truncated length": {1, 1, 'a', 0x80},
		"overlong length":  {1, 0x81, 0, 'a', 0},
		"overlong count":   {0x81, 0, 1, 'a', 0},
		"name over cap":    Append(nil, []Header{{strings.Repeat("n", MaxName+1), ""}}),
		"value over cap":   Append(nil, []Header{{"n", strings.Repeat("v", MaxValue+1)}}),
	} {
		if _, _, err := Decode(b); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
	}
	over := make([]Header, 0, StoredCount)
	for i := 0; i < 6; i++ {
		over = append(over, Header{Name: string(rune('a' + i)), Value: strings.Repeat("v", MaxValue)})
	}
	if _, _, err := Decode(Append(nil, over)); !errors.Is(err, ErrInvalid) {
		t.Errorf("24 KiB of values decoded: %v", err)
	}
}

func TestWithout(t *testing.T) {
	hs := []Header{{"a", "1"}, {"narad-dlq-topic", "t"}, {"z", "2"}}
	got := Without(hs, "narad-dlq-")
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "z" {
		t.Fatalf("%v", got)
	}
	if kept := Without(got, "narad-"); &kept[0] != &got[0] {
		t.Fatal("nothing dropped, yet copied")
	}
}

// FuzzDecode: arbitrary bytes never panic nor allocate past their size,
// and what decodes re-encodes to a list that decodes the same.
func FuzzDecode(f *testing.F) {
	f.Add(Append(nil, []Header{{"a", "b"}, {"c", ""}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Add([]byte{1, 0xff, 0xff, 0xff, 0xff, 0x0f, 'a'})
	f.Fuzz(func(t *testing.T, b []byte) {
		hs, n, err := Decode(b)
		if err != nil {
			return
		}
		if n > len(b) || len(hs) > StoredCount || Bytes(hs) > StoredBytes {
			t.Fatalf("decoded past the caps: n=%d of %d, %d headers, %d bytes", n, len(b), len(hs), Bytes(hs))
		}
		again := Append(nil, hs)
		if string(again) != string(b[:n]) {
			t.Fatalf("re-encoding differs: %x vs %x", again, b[:n])
		}
		back, m, err := Decode(again)
		if err != nil || m != len(again) || len(back) != len(hs) {
			t.Fatalf("re-decode: %v %d %v", back, m, err)
		}
		for i := range hs {
			if back[i] != hs[i] {
				t.Fatalf("header %d: %v vs %v", i, back[i], hs[i])
			}
		}
	})
}

// What CheckStored passes decodes; what it refuses, Decode would refuse.
func TestCheckStoredMatchesDecode(t *testing.T) {
	ok := []Header{{"a", strings.Repeat("v", MaxValue)}, {"narad-dlq-topic", "t"}}
	if err := CheckStored(ok); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Decode(Append(nil, ok)); err != nil {
		t.Fatal(err)
	}
	for name, hs := range map[string][]Header{
		"empty name": {{"", "v"}},
		"long value": {{"a", strings.Repeat("v", MaxValue+1)}},
		"too many":   make([]Header, StoredCount+1),
	} {
		if err := CheckStored(hs); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v", name, err)
		}
		if _, _, err := Decode(Append(nil, hs)); err == nil {
			t.Errorf("%s: Decode took what CheckStored refuses", name)
		}
	}
}

// WithSourceID adds or replaces the source id in order, in a new slice.
func TestWithSourceID(t *testing.T) {
	hs := []Header{{Name: "a", Value: "1"}, {Name: "z", Value: "2"}}
	got := WithSourceID(hs, "w1")
	if want := []Header{{Name: "a", Value: "1"}, {Name: SourceID, Value: "w1"}, {Name: "z", Value: "2"}}; !slices.Equal(got, want) {
		t.Fatalf("added: %v", got)
	}
	if len(hs) != 2 || hs[1].Name != "z" {
		t.Fatalf("the source's headers changed: %v", hs)
	}
	again := WithSourceID(got, "p2")
	if want := []Header{{Name: "a", Value: "1"}, {Name: SourceID, Value: "p2"}, {Name: "z", Value: "2"}}; !slices.Equal(again, want) || got[1].Value != "w1" {
		t.Fatalf("replaced: %v (was %v)", again, got)
	}
	if got := WithSourceID(nil, "w1"); len(got) != 1 || got[0].Name != SourceID {
		t.Fatalf("none before: %v", got)
	}
}
