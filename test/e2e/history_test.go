package e2e

import (
	"encoding/json"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/narad-io/narad/client"
)

// The console's rate charts draw GET /v1/topics/{t}/stats/history. A
// topic created on a running node takes a burst (200 produced, 50
// consumed and acked) before the node sampled it: the rates of its
// history account for every record of the burst, none lost because the
// first sample had nothing before it to have a rate from.
func TestStatsHistoryRatesCountABurstBeforeTheFirstSample(t *testing.T) {
	n := startNode(t)
	ctx := ctxT(t)
	if _, err := n.c.CreateTopic(ctx, client.CreateTopicRequest{Name: "burst", Partitions: 3}); err != nil {
		t.Fatal(err)
	}
	recs := make([]client.BatchRecord, 200)
	for i := range recs {
		recs[i].Payload = json.RawMessage(`{"n":1}`)
	}
	if _, err := n.c.ProduceBatch(ctx, "burst", recs); err != nil {
		t.Fatal(err)
	}
	for consumed := 0; consumed < 50; {
		msgs, err := n.c.Consume(ctx, "burst", client.ConsumeOptions{Max: 50 - consumed, Wait: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if err := n.c.Ack(ctx, "burst", m.ReceiptHandle); err != nil {
				t.Fatal(err)
			}
		}
		consumed += len(msgs)
	}

	status, body, _ := n.do("GET", "/v1/topics/burst/stats/history", "", nil)
	var h struct {
		Samples []struct {
			AtMs     int64    `json:"at_ms"`
			HWM      uint64   `json:"high_watermark"`
			Frontier uint64   `json:"consumer_frontier"`
			Produce  *float64 `json:"produce_per_s"`
			Consume  *float64 `json:"consume_per_s"`
		} `json:"samples"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &h) != nil || len(h.Samples) == 0 {
		t.Fatalf("stats history: %d %s", status, body)
	}
	// at_ms is whole milliseconds while the rates were taken from finer
	// times: each interval may be off by up to 1 ms, so rate × interval is
	// off by up to rate × 1 ms (a sample 35 ms after the creation one: 3%).
	var produced, consumed, producedTol, consumedTol float64
	for i := 1; i < len(h.Samples); i++ {
		secs := float64(h.Samples[i].AtMs-h.Samples[i-1].AtMs) / 1000
		if p := h.Samples[i].Produce; p != nil {
			produced += *p * secs
			producedTol += *p / 1000
		}
		if c := h.Samples[i].Consume; c != nil {
			consumed += *c * secs
			consumedTol += *c / 1000
		}
	}
	last := h.Samples[len(h.Samples)-1]
	if last.Frontier != 50 || last.HWM < 50 {
		t.Fatalf("the last sample has %d records and %d settled; want 50 settled of up to 200", last.HWM, last.Frontier)
	}
	near := func(got, want, tol float64) bool { return math.Abs(got-want) <= tol+1e-9 }
	if !near(produced, float64(last.HWM), producedTol) || !near(consumed, 50, consumedTol) {
		t.Errorf("the rates account for %.3f produced and %.3f consumed; the topic took %d and 50 (%s)", produced, consumed, last.HWM, body)
	}
}
