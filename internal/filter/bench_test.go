package filter

import "testing"

// A policy and a record of the shape fan-out filters are expected to
// have: a few keys, exact values, a numeric range, a prefix, an $or.
const (
	benchPolicy  = `{"type":["order","refund"],"price":[{"numeric":[">",0,"<=",1000]}],"region":[{"prefix":"eu-"}],"$or":[{"tier":["gold"]},{"vip":[{"exists":true}]}]}`
	benchPayload = `{"id":"9f1c2a","type":"order","price":129.95,"region":"eu-west-1","customer":{"name":"Ada","tier":"silver","tags":["a","b","c"]},"lines":[{"sku":"x-1","qty":2},{"sku":"y-7","qty":1}],"vip":true,"note":"` +
		`a payload of a few hundred bytes, most of which the policy names no key of"}`
)

var benchHeaders = map[string]string{
	"type":         "order",
	"price":        "129.95",
	"region":       "eu-west-1",
	"tier":         "silver",
	"vip":          "yes",
	"content-type": "application/json",
	"trace-id":     "4bf92f3577b34da6a3ce929d0e0e4736",
}

func BenchmarkMatchHeaders(b *testing.B) {
	f := mustCompile(b, benchPolicy, Headers)
	if !f.Match(benchHeaders, nil) {
		b.Fatal("the benchmark's record does not match")
	}
	b.ReportAllocs()
	for b.Loop() {
		f.Match(benchHeaders, nil)
	}
}

func BenchmarkMatchPayload(b *testing.B) {
	f := mustCompile(b, benchPolicy, Payload)
	payload := []byte(benchPayload)
	if !f.Match(nil, payload) {
		b.Fatal("the benchmark's record does not match")
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		f.Match(nil, payload)
	}
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile([]byte(benchPolicy), Payload); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMatchHeadersDoesNotAllocate holds the headers scope to its promise
// (doc.go): no allocation unless a header the policy names is a JSON
// array. Every operator is in the policy; the count is not a timing.
func TestMatchHeadersDoesNotAllocate(t *testing.T) {
	f := mustCompile(t, `{"type":["order",5,{"anything-but":["x",7]}],"price":[{"numeric":[">",0,"<=",1000]}],"$or":[{"region":[{"prefix":"us-"},{"suffix":"-1"},{"equals-ignore-case":"EU"}]},{"ip":[{"cidr":"10.0.0.0/8"},{"cidr":"2001:db8::/32"}],"vip":[{"exists":true}]}]}`, Headers)
	hs := map[string]string{"type": "order", "price": "129.95", "region": "eu-west-1", "ip": "2001:db8::1", "vip": "1"}
	if !f.Match(hs, nil) {
		t.Fatal("the record does not match")
	}
	if n := testing.AllocsPerRun(100, func() { f.Match(hs, nil) }); n != 0 {
		t.Errorf("Match allocated %v times a call", n)
	}
}
