package header

import "testing"

// BenchmarkCheck is the broker's validation of three headers per record
// (already sorted, as most producers send them, and not).
func BenchmarkCheck(b *testing.B) {
	sorted := []Header{{"content-type", "application/json"}, {"tenant", "acme"}, {"trace-id", "4bf92f3577b34da6a3ce929d"}}
	for name, order := range map[string][]int{"sorted": {0, 1, 2}, "unsorted": {2, 0, 1}} {
		b.Run(name, func(b *testing.B) {
			hs := make([]Header, 3)
			b.ReportAllocs()
			for b.Loop() {
				for i, j := range order {
					hs[i] = sorted[j]
				}
				if err := Check(hs, Client); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode is reading three headers back from an envelope.
func BenchmarkDecode(b *testing.B) {
	enc := Append(nil, []Header{{"content-type", "application/json"}, {"tenant", "acme"}, {"trace-id", "4bf92f3577b34da6a3ce929d"}})
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := Decode(enc); err != nil {
			b.Fatal(err)
		}
	}
}
