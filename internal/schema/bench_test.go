package schema

import (
	"fmt"
	"testing"
)

// BenchmarkValidate is the produce hot path: a small object body against a
// small object schema, decode included.
func BenchmarkValidate(b *testing.B) {
	s := mustCompile(b, orderSchema)
	body := []byte(`{"id":12345,"price":19.99,"tags":["red","blue","green"],"note":"gift"}`)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(body); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateLarge checks the cost stays linear near the 1 MiB body
// limit: compare ns/op with the 1/4-size run.
func BenchmarkValidateLarge(b *testing.B) {
	s := mustCompile(b, `{"type":"array","items":`+orderSchema+`}`)
	for _, n := range []int{4500, 18000} {
		body := largeOrders(n, -1)
		b.Run(fmt.Sprintf("%dKiB", len(body)>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if err := s.Validate(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
