package lease

import "testing"

// BenchmarkReserveAck measures one consume cycle of a busy partition:
// reserve 100 records, then ack all 100 (the frontier moves by 100).
func BenchmarkReserveAck(b *testing.B) {
	tb, _ := newTable(b, Limits{VisibilityTimeout: vt, MaxInFlight: 1000, MaxAckedAhead: 1000})
	var hwm uint64
	b.ReportAllocs()
	for b.Loop() {
		hwm += 100
		ls := tb.Reserve(hwm, 100)
		if len(ls) != 100 {
			b.Fatalf("reserved %d", len(ls))
		}
		// Ack in reverse so 99 go through acked-ahead and the last one
		// carries the frontier over the whole run: the expensive order.
		for i := len(ls) - 1; i >= 0; i-- {
			if err := tb.Ack(ls[i].Offset, ls[i].Nonce); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/lease")
}

// BenchmarkRedeliverUnderLoad shows Reserve does not rescan the leases
// out: with 10,000 leases live, one is nacked and reserved again.
func BenchmarkRedeliverUnderLoad(b *testing.B) {
	const out = 10_000
	tb, _ := newTable(b, Limits{VisibilityTimeout: vt, MaxInFlight: out, MaxAckedAhead: out})
	ls := tb.Reserve(out, out)
	if len(ls) != out {
		b.Fatalf("reserved %d", len(ls))
	}
	l := ls[0]
	b.ReportAllocs()
	for b.Loop() {
		if err := tb.Nack(l.Offset, l.Nonce); err != nil {
			b.Fatal(err)
		}
		got := tb.Reserve(out, 1)
		if len(got) != 1 || got[0].Offset != l.Offset {
			b.Fatalf("Reserve = %v", offsets(got))
		}
		l = got[0]
	}
}

// BenchmarkReserveAckMany is BenchmarkReserveAck with the 100 acks of a
// round in one AckMany (one batch ack), in the same expensive order.
func BenchmarkReserveAckMany(b *testing.B) {
	tb, _ := newTable(b, Limits{VisibilityTimeout: vt, MaxInFlight: 1000, MaxAckedAhead: 1000})
	var hwm uint64
	rs := make([]Receipt, 100)
	errs := make([]error, 100)
	b.ReportAllocs()
	for b.Loop() {
		hwm += 100
		ls := tb.Reserve(hwm, 100)
		if len(ls) != 100 {
			b.Fatalf("reserved %d", len(ls))
		}
		for i := range ls {
			l := ls[len(ls)-1-i]
			rs[i] = Receipt{l.Offset, l.Nonce}
		}
		tb.AckMany(rs, errs)
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*100), "ns/lease")
}
