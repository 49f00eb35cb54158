package broker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/narad-io/narad/internal/header"
)

// ProduceRecord.AWS is stored as the reserved header narad-aws, sorted in
// with the client's; one over its cap or not UTF-8 is refused whole, and
// a client header of that name is refused as any reserved name is.
func TestProduceAWSHeader(t *testing.T) {
	b := newTestBroker(t, Config{})
	createTestTopic(t, b, "q", 1)
	ctx := testCtx(t)
	if err := b.Produce(ctx, "q", ProduceRecord{Payload: []byte("x"), AWS: `{"s":"alice"}`,
		Headers: []header.Header{{Name: "zz", Value: "1"}, {Name: "aa", Value: "2"}}}); err != nil {
		t.Fatal(err)
	}
	recs, err := b.wal.Read(1, 100, 1<<20)
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d WAL records, %v", len(recs), err)
	}
	if got := fmt.Sprint(recs[0].Headers); got != `[{aa 2} {narad-aws {"s":"alice"}} {zz 1}]` {
		t.Fatalf("headers %s", got)
	}
	for name, rec := range map[string]ProduceRecord{
		"over the cap":   {Payload: []byte("x"), AWS: strings.Repeat("a", header.MaxAWS+1)},
		"not UTF-8":      {Payload: []byte("x"), AWS: "\xff"},
		"client-written": {Payload: []byte("x"), Headers: []header.Header{{Name: header.AWS, Value: "{}"}}},
	} {
		if err := b.Produce(ctx, "q", rec); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if recs, _ := b.wal.Read(1, 100, 1<<20); len(recs) != 1 {
		t.Fatalf("a refused record reached the WAL: %d records", len(recs))
	}
}
