package broker

import (
	"fmt"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// A batch ack answers each handle exactly as acking the handles one at a
// time, in order, would have: two identical nodes get the same records and
// the same consumes; one settles a random batch (live handles of several
// partitions, repeats, stale handles, forged and malformed ones, partitions
// out of range) with AckBatch, the other with Ack per handle. Every
// answer, and every partition's frontier after it, must agree.
func TestAckBatchMatchesSingleAcks(t *testing.T) {
	a, b := newTestBroker(t, Config{}), newTestBroker(t, Config{})
	ctx := testCtx(t)
	for _, br := range []*Broker{a, b} {
		createTestTopic(t, br, "q", 3)
	}
	round := 0
	rapid.Check(t, func(rt *rapid.T) {
		round++
		for _, br := range []*Broker{a, b} {
			for p := range 3 {
				commitSized(t, br, "q", p, 8, 16)
			}
		}
		// Same consumes on both: the nodes hand out the same offsets (the
		// nonces differ: each table has its own stream).
		msgsA, err := a.Consume(ctx, ConsumeRequest{Topic: "q", Max: 12})
		if err != nil {
			rt.Fatal(err)
		}
		msgsB, err := b.Consume(ctx, ConsumeRequest{Topic: "q", Max: 12})
		if err != nil {
			rt.Fatal(err)
		}
		if len(msgsA) != len(msgsB) {
			rt.Fatalf("consumes differ: %d and %d records", len(msgsA), len(msgsB))
		}
		n := rapid.IntRange(1, 20).Draw(rt, "n")
		var ha, hb []string
		for range n {
			switch k := rapid.IntRange(0, 9).Draw(rt, "kind"); {
			case k < 6 && len(msgsA) > 0: // a live handle (maybe again)
				i := rapid.IntRange(0, len(msgsA)-1).Draw(rt, "i")
				if msgsA[i].Partition != msgsB[i].Partition || msgsA[i].Offset != msgsB[i].Offset {
					rt.Fatalf("record %d differs between the nodes", i)
				}
				ha, hb = append(ha, msgsA[i].ReceiptHandle), append(hb, msgsB[i].ReceiptHandle)
			case k < 8: // a forged nonce on a real offset, or a partition out of range
				h := fmt.Sprintf("%d:%d:%d", rapid.IntRange(0, 4).Draw(rt, "p"), rapid.IntRange(0, 8*round).Draw(rt, "off"), rapid.Uint64().Draw(rt, "nonce"))
				ha, hb = append(ha, h), append(hb, h)
			default:
				h := rapid.SampledFrom([]string{"junk", "1:2", "01:2:3", ""}).Draw(rt, "bad")
				ha, hb = append(ha, h), append(hb, h)
			}
		}
		errs, err := a.AckBatch(ctx, "q", ha)
		if err != nil {
			rt.Fatal(err)
		}
		for i, h := range hb {
			want := b.Ack(ctx, "q", h, Settle)
			if got := errs[i]; !sameAnswer(got, want, ha[i], h) {
				rt.Fatalf("handle %d: batch says %v, one at a time says %v", i, got, want)
			}
		}
		for p := range 3 {
			fa, errA := a.parts.Frontier("q", p)
			fb, errB := b.parts.Frontier("q", p)
			if errA != nil || errB != nil || fa != fb {
				rt.Fatalf("partition %d: frontier %d after the batch, %d one at a time", p, fa, fb)
			}
		}
		// Settle what is left on both, so rounds do not pile leases up.
		for i := range msgsA {
			a.Ack(ctx, "q", msgsA[i].ReceiptHandle, Settle)
			b.Ack(ctx, "q", msgsB[i].ReceiptHandle, Settle)
		}
	})
}

// sameAnswer compares two answers to the same handle on two nodes: the
// same kind of error in the same words, once each node's spelling of the
// handle (its nonce) is put aside.
func sameAnswer(got, want error, hGot, hWant string) bool {
	if got == nil || want == nil {
		return got == want
	}
	return fmt.Sprintf("%T %s", got, strings.ReplaceAll(got.Error(), hGot, "H")) ==
		fmt.Sprintf("%T %s", want, strings.ReplaceAll(want.Error(), hWant, "H"))
}
