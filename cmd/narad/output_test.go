package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/narad-io/narad/client"
)

func TestRenderPayload(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"json object verbatim", []byte(`{"a": [1, 2]}`), `{"a": [1, 2]}`},
		{"json number", []byte(`42`), `42`},
		{"text", []byte("hello world"), "hello world"},
		{"multi-line utf-8 text", []byte("héllo\n\tworld"), "héllo\n\tworld"},
		{"empty", []byte{}, ""},
		{"binary", []byte{0x00, 0x01, 0xff, 'A'}, "(binary, 4 bytes)\n00000000  00 01 ff 41                                       |...A|"},
		{"invalid utf-8", []byte("ab\xffcd"), "(binary, 5 bytes)\n00000000  61 62 ff 63 64                                    |ab.cd|"},
		{"terminal escape is not text", []byte("\x1b[2Jgotcha"), "(binary, 10 bytes)\n00000000  1b 5b 32 4a 67 6f 74 63  68 61                    |.[2Jgotcha|"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := renderPayload(tt.in); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestMessagePrinter(t *testing.T) {
	key := "c1"
	msgs := []client.Message{
		{Partition: 2, Offset: 41, Key: &key, Payload: json.RawMessage(`{"a":1}`), Timestamp: 1767323045, DeliveryCount: 3},
		{Partition: 0, Offset: 7, Payload: json.RawMessage(`"plain text"`), DeliveryCount: 1},
		{Partition: 0, Offset: 8, Payload: json.RawMessage(`"AAH/"`), PayloadEncoding: "base64"},
	}
	var buf bytes.Buffer
	p := messagePrinter{w: &buf}
	for _, m := range msgs {
		if err := p.print(m); err != nil {
			t.Fatal(err)
		}
	}
	want := "# p2@41 key=\"c1\" 2026-01-02T03:04:05Z delivery=3\n{\"a\":1}\n" +
		"# p0@7\nplain text\n" +
		"# p0@8\n(binary, 3 bytes)\n00000000  00 01 ff                                          |...|\n"
	if buf.String() != want {
		t.Errorf("got\n%q\nwant\n%q", buf.String(), want)
	}

	buf.Reset()
	p.raw = true
	for _, m := range msgs {
		if err := p.print(m); err != nil {
			t.Fatal(err)
		}
	}
	if want := "{\"a\":1}\nplain text\n\x00\x01\xff\n"; buf.String() != want {
		t.Errorf("raw got %q, want %q", buf.String(), want)
	}
}

// formatBytes is go-humanize's IBytes: one decimal below 10 of a unit, none above.
func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 B", 1023: "1023 B", 1024: "1.0 KiB", 1536: "1.5 KiB", 64 << 20: "64 MiB", 3 << 30: "3.0 GiB", 1536 << 20: "1.5 GiB", 1 << 60: "1.0 EiB", -1: "0 B"} {
		if got := formatBytes(n); got != want {
			t.Errorf("formatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}
