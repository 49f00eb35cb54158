package e2e

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// dmgMessages is a consume or replay answer with max=N.
type dmgMessages struct {
	Messages []struct {
		Offset  uint64          `json:"offset"`
		Payload json.RawMessage `json:"payload"`
	} `json:"messages"`
}

// dmgProduceBatch produces payloads prefix-0.. as one batch and waits until
// the partition's high watermark reaches hwm (the commit is asynchronous).
func dmgProduceBatch(t *testing.T, n *node, topic, prefix string, count int, hwm uint64) {
	t.Helper()
	var recs []string
	for i := 0; i < count; i++ {
		recs = append(recs, fmt.Sprintf(`{"partition":0,"payload":"%s-%d"}`, prefix, i))
	}
	body := `{"records":[` + strings.Join(recs, ",") + `]}`
	if st, b, _ := n.do("POST", "/v1/topics/"+topic+"/produce/batch", "application/json", []byte(body)); st != http.StatusAccepted {
		t.Fatalf("produce: %d %s", st, b)
	}
	eventually(t, 10*time.Second, fmt.Sprintf("hwm %d", hwm), func() bool {
		return dmgPartition(t, n, topic).HighWatermark == hwm
	})
}

type dmgStats struct {
	Available     *bool  `json:"available"`
	Error         string `json:"error"`
	HighWatermark uint64 `json:"high_watermark"`
}

func dmgPartition(t *testing.T, n *node, topic string) dmgStats {
	t.Helper()
	st, b, _ := n.do("GET", "/v1/topics/"+topic, "", nil)
	if st != http.StatusOK {
		t.Fatalf("describe: %d %s", st, b)
	}
	var v struct {
		PartitionStats []dmgStats `json:"partition_stats"`
	}
	if err := json.Unmarshal(b, &v); err != nil || len(v.PartitionStats) != 1 {
		t.Fatalf("describe: %v %s", err, b)
	}
	return v.PartitionStats[0]
}

// dmgFrames returns where each frame of a segment file starts.
func dmgFrames(t *testing.T, seg []byte) []int {
	t.Helper()
	var starts []int
	for pos := 0; pos+27 <= len(seg); pos += 27 + int(binary.BigEndian.Uint32(seg[pos+19:pos+23])) {
		if seg[pos] != 0xCA || seg[pos+1] != 0xFE {
			t.Fatalf("no frame magic at byte %d", pos)
		}
		starts = append(starts, pos)
	}
	return starts
}

// Issue 9 §4 "mid-segment damage", against a real process: a frame damaged
// in the middle of the active segment of a stopped node makes that
// partition answer 503 with a clear reason (consume and replay), and the
// topic describe shows it; restarted with the operator's switch, the node
// serves everything after the damage, counting the skipped records.
func TestMidSegmentDamageAnswers503UntilSkipped(t *testing.T) {
	n := startNode(t)
	if st, b, _ := n.do("POST", "/v1/topics", "application/json", []byte(`{"name":"dmg","partitions":1}`)); st != http.StatusCreated {
		t.Fatalf("create: %d %s", st, b)
	}
	dmgProduceBatch(t, n, "dmg", "a", 10, 10)
	dmgProduceBatch(t, n, "dmg", "b", 10, 20)
	dmgProduceBatch(t, n, "dmg", "c", 10, 30)
	n.stop()

	dataDir := filepath.Join(n.dir, "data")
	seg := filepath.Join(dataDir, "topics", "dmg", "p00000", "00000000000000000000.log")
	data, err := os.ReadFile(seg)
	if err != nil {
		t.Fatal(err)
	}
	starts := dmgFrames(t, data)
	if len(starts) < 3 {
		t.Fatalf("want at least 3 frames, the segment has %d", len(starts))
	}
	bad := starts[len(starts)/2] // a frame with valid frames after it
	badFirst := binary.BigEndian.Uint64(data[bad+7:])
	badCount := uint64(binary.BigEndian.Uint32(data[bad+3:]))
	data[bad+27+3] ^= 0x40 // a payload byte
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		t.Fatal(err)
	}

	n.restart()
	offsets := fmt.Sprintf("offsets %d..%d", badFirst, badFirst+badCount-1)
	for _, path := range []string{"/v1/topics/dmg/consume?partition=0&max=100", "/v1/topics/dmg/consume?partition=0&offset=0&max=100"} {
		st, b, h := n.do("GET", path, "", nil)
		body := string(b)
		if st != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
			t.Fatalf("%s on the damaged partition: %d %s (Retry-After %q), want 503", path, st, body, h.Get("Retry-After"))
		}
		for _, want := range []string{"damaged", offsets, "NARAD_STORAGE_SKIP_CORRUPT=true"} {
			if !strings.Contains(body, want) {
				t.Fatalf("%s: the 503 does not say %q: %s", path, want, body)
			}
		}
		if strings.Contains(body, dataDir) || strings.Contains(body, ".log") {
			t.Fatalf("%s: the 503 names a server path: %s", path, body)
		}
	}
	if ps := dmgPartition(t, n, "dmg"); ps.Available == nil || *ps.Available || !strings.Contains(ps.Error, offsets) {
		t.Fatalf("describe of the damaged partition: %+v", ps)
	}
	// The log reaches the harness through a pipe, maybe after the answer.
	eventually(t, 10*time.Second, "the node's log to name the damaged file "+seg, func() bool {
		return strings.Contains(n.logs.String(), seg)
	})

	n.stop()
	n.env = append(n.env, "NARAD_STORAGE_SKIP_CORRUPT=true")
	n.restart()
	// Replay by offset from inside the damaged range: the first record
	// after it, not an empty answer.
	st, b, _ := n.do("GET", fmt.Sprintf("/v1/topics/dmg/consume?partition=0&offset=%d&max=5", badFirst), "", nil)
	var rep dmgMessages
	if st != http.StatusOK || json.Unmarshal(b, &rep) != nil || len(rep.Messages) == 0 || rep.Messages[0].Offset != badFirst+badCount {
		t.Fatalf("replay from the damaged range: %d %s; want records from offset %d", st, b, badFirst+badCount)
	}
	// Queue consume drains everything but the damaged records.
	got := map[uint64]bool{}
	for {
		st, b, _ := n.do("GET", "/v1/topics/dmg/consume?partition=0&max=100", "", nil)
		if st == http.StatusNoContent {
			break
		}
		var msgs dmgMessages
		if st != http.StatusOK || json.Unmarshal(b, &msgs) != nil {
			t.Fatalf("consume with the skip switch: %d %s", st, b)
		}
		for _, m := range msgs.Messages {
			got[m.Offset] = true
		}
	}
	for o := uint64(0); o < 30; o++ {
		damaged := o >= badFirst && o < badFirst+badCount
		if got[o] == damaged {
			t.Fatalf("offset %d: delivered %v, damaged %v (delivered %d of 30)", o, got[o], damaged, len(got))
		}
	}
	if v := n.metric("narad_consumer_corrupt_skipped_total"); v != float64(badCount) {
		t.Fatalf("narad_consumer_corrupt_skipped_total = %v, want %d (once per record)", v, badCount)
	}
	if ps := dmgPartition(t, n, "dmg"); ps.Available != nil || ps.Error != "" {
		t.Fatalf("describe with the skip switch: %+v", ps)
	}
}
