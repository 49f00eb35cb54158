package broker_test

import (
	"context"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/narad-io/narad/internal/broker"
	"github.com/narad-io/narad/internal/metrics"
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	w := httptest.NewRecorder()
	m.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	b, _ := io.ReadAll(w.Body)
	return string(b)
}

// Produced and consumed records are counted by the partition they went
// to, as the reference's narad_messages_produced_total{topic,partition},
// and so are produced payload bytes (narad_bytes_produced_total).
func TestMessagesCountedByPartition(t *testing.T) {
	n := newNode(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "orders", Partitions: 3}, ""); err != nil {
		t.Fatal(err)
	}
	p0, p2 := 0, 2
	recs := []broker.ProduceRecord{{Partition: &p0, Payload: []byte("a")}, {Partition: &p2, Payload: []byte("c")}, {Partition: &p0, Payload: []byte("b")}}
	if err := n.b.ProduceBatch(ctx, "orders", recs); err != nil {
		t.Fatal(err)
	}
	body := scrape(t, n.m)
	for _, want := range []string{
		`narad_messages_produced_total{partition="0",topic="orders"} 2`,
		`narad_messages_produced_total{partition="2",topic="orders"} 1`,
		`narad_bytes_produced_total{partition="0",topic="orders"} 2`,
		`narad_bytes_produced_total{partition="2",topic="orders"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("exposition lacks %s", want)
		}
	}
	var got []broker.Message
	deadline := time.Now().Add(10 * time.Second)
	for len(got) == 0 && time.Now().Before(deadline) {
		ms, err := n.b.Consume(ctx, broker.ConsumeRequest{Topic: "orders", Partition: &p2, Wait: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		got = ms
	}
	if len(got) != 1 {
		t.Fatalf("consumed %d records of partition 2", len(got))
	}
	if body := scrape(t, n.m); !strings.Contains(body, `narad_messages_consumed_total{partition="2",topic="orders"} 1`) {
		t.Errorf("consume not counted by partition:\n%s", lines(body, "messages_consumed"))
	}
}

// A deleted topic leaves no series: at once on the node that deleted it,
// and by the reconcile sweep for series set after that (or for a topic
// deleted through another node).
func TestDeletedTopicLosesItsSeries(t *testing.T) {
	n := newNode(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := n.b.CreateTopic(ctx, broker.CreateTopicRequest{Name: "doomed", Partitions: 2}, ""); err != nil {
		t.Fatal(err)
	}
	if err := n.b.Produce(ctx, "doomed", broker.ProduceRecord{Payload: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(scrape(t, n.m), `topic="doomed"`) {
		t.Fatal("no series for the topic before the delete")
	}
	if err := n.b.DeleteTopic(ctx, "doomed"); err != nil {
		t.Fatal(err)
	}
	if body := scrape(t, n.m); strings.Contains(body, `"doomed"`) {
		t.Errorf("series of a deleted topic remain:\n%s", lines(body, `"doomed"`))
	}

	// A gauge set for a topic the metastore does not know (a loop that
	// raced the delete, or a delete applied from another node).
	n.m.ConsumerLag.WithLabelValues("ghost", "0").Set(4)
	n.m.FanoutLag.WithLabelValues("ghost", "kid", "0").Set(4)
	deadline := time.Now().Add(10 * time.Second)
	for strings.Contains(scrape(t, n.m), `"ghost"`) {
		if time.Now().After(deadline) {
			t.Fatalf("series of an unknown topic not swept:\n%s", lines(scrape(t, n.m), `"ghost"`))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func lines(body, s string) string {
	var out []string
	for _, l := range strings.Split(body, "\n") {
		if strings.Contains(l, s) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
